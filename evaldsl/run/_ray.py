"""`--executor ray`: each run of each case as a Ray task, on the cluster `ray.init()` finds.

Ray is the distributed engine; evaldsl only adds a narrow seam. The local
scheduler (`_scheduler.schedule`) still decides what runs, in what order,
how many at once (``-j``), and builds every `CaseResult`, the record,
``--resume`` and the exit code; `RayExecutor.execute` stands in for
`execute_run` on the driver and sends the unit to a worker, where the very
same `execute_run` runs it: the same timeout (enforced in the worker), the
same isolation (an agent that raises or times out fails that run), the same
scoring.

What travels to a worker is the agent's *spec* (``module:attr``), never the
agent object: a worker imports the spec and builds the agent (or harness)
the first time it needs it and keeps it for every later task of the run in
that process (a cache keyed by the spec), with one event loop and one
thread pool per worker process, so an async agent's client stays bound to
one loop. The compiled case (its checks are small objects and closures) travels pickled
with Ray's cloudpickle; the judge and extra predicates, when given, too.

A worker that dies mid-run (``os._exit``, a segfault, the OOM killer, a
lost node) makes that run an error naming what happened; tasks are not
retried (``max_retries=0``), since a retry would silently run an agent's
side effects twice. The rest of the run goes on.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..compile._model import CompiledCase, JudgeFn, PredicateFn
from ._execute import execute_run
from ._protocols import Subject, agent_subject, harness_subject, import_object
from ._record import ErrorInfo, RunResult
from ._threads import DaemonPool

INSTALL_HINT = "Ray is not installed: pip install 'evaldsl[ray]'"


class RayUnavailable(RuntimeError):
    """Ray is not installed, or no cluster could be reached or started."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable(INSTALL_HINT) from None
    return ray


class RayExecutor:
    """Runs each unit (one run of one case) as a Ray task.

    Args:
        spec: the agent or harness as ``module:attr`` (`import_object`'s form);
            each worker imports it and builds the subject once.
        kind: ``"agent"`` or ``"harness"``.
        connect: call ``ray.init(**init_options)`` now unless Ray is already
            initialized (``RAY_ADDRESS`` names a cluster; without it Ray
            starts a local instance).
        init_options: keyword arguments for ``ray.init``.
        paths: folders put on the workers' ``sys.path`` when they exist there
            (default: the current directory, which `import_object` makes
            importable on the driver too).

    Raises:
        RayUnavailable: Ray is missing, or ``ray.init`` failed.
    """

    def __init__(
        self,
        spec: str,
        *,
        kind: str = "agent",
        connect: bool = True,
        init_options: Mapping[str, Any] | None = None,
        paths: Sequence[str] | None = None,
    ) -> None:
        if kind not in ("agent", "harness"):
            raise ValueError(f"kind must be 'agent' or 'harness', not {kind!r}")
        self.spec, self.kind = spec, kind
        self.paths = list(paths) if paths is not None else [os.getcwd()]
        ray = _ray()
        if connect and not ray.is_initialized():
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # nothing phones home unless the user asks
            try:
                ray.init(**dict(init_options or {}))
            except Exception as exc:  # ConnectionError, a bad RAY_ADDRESS, ...
                raise RayUnavailable(f"cannot start or reach a Ray cluster: {type(exc).__name__}: {exc}") from None
        self._task = ray.remote(max_retries=0)(run_on_worker)

    async def execute(
        self,
        subject: Subject,
        case: CompiledCase,
        index: int,
        *,
        pool: DaemonPool | None = None,
        judge: JudgeFn | None = None,
        predicates: Mapping[str, PredicateFn] | None = None,
        clock: Any = None,
        user: Any = None,
    ) -> RunResult:
        """`execute_run`'s signature: run the unit on a worker; never raises but cancellation.

        ``clock`` (this loop's busy time) does not apply: the worker keeps its own.
        """
        ray = _ray()
        start = time.perf_counter()
        try:
            ref = self._task.remote(self.spec, self.kind, self.paths, case, index, judge, predicates, user)
        except Exception as exc:  # the case, judge or predicates could not be pickled
            return _failed(index, 0.0, type(exc).__name__, f"cannot send the case to Ray: {exc}")
        try:
            return await ref  # type: ignore[no-any-return]
        except asyncio.CancelledError:  # Ctrl-C or -x: stop the task where it is
            ray.cancel(ref, force=True)
            raise
        except ray.exceptions.RayError as exc:
            return _failed(index, time.perf_counter() - start, type(exc).__name__, _ray_failure(exc))


def _ray_failure(exc: BaseException) -> str:
    ray = _ray()
    first = (str(exc).strip().splitlines() or [""])[0]
    if isinstance(exc, ray.exceptions.WorkerCrashedError):
        return ("the Ray worker running this case died mid-run (its process exited or was killed: os._exit, "
                f"a crash, the OOM killer); the rest of the run goes on. Ray said: {first}")
    if isinstance(exc, (ray.exceptions.NodeDiedError, ray.exceptions.LocalRayletDiedError)):
        return f"the Ray node running this case died mid-run; the rest of the run goes on. Ray said: {first}"
    if isinstance(exc, ray.exceptions.OutOfMemoryError):
        return f"Ray killed the worker running this case: it ran out of memory. Ray said: {first}"
    return f"Ray could not run this case: {first}"


def _failed(index: int, latency: float, kind: str, message: str) -> RunResult:
    error = ErrorInfo(type=kind, message=message, kind="executor")
    return RunResult(index=index, passed=False, score=0.0, latency_s=latency, error=error)


# ---- in the worker process ----

_SUBJECTS: dict[tuple[str, str], Subject] = {}
_WORKER: dict[str, Any] = {}


def run_on_worker(
    spec: str,
    kind: str,
    paths: Sequence[str],
    case: CompiledCase,
    index: int,
    judge: JudgeFn | None,
    predicates: Mapping[str, PredicateFn] | None,
    user: Any = None,
) -> RunResult:
    """The Ray task body: build (or reuse) the subject, then `execute_run` on this worker's loop."""
    try:
        subject = _subject(spec, kind, paths)
    except Exception as exc:
        where = f"on the Ray worker (host {socket.gethostname()}, pid {os.getpid()})"
        return _failed(index, 0.0, type(exc).__name__, f"cannot build the {kind} {spec!r} {where}: {exc}")
    if "loop" not in _WORKER:
        _WORKER["loop"] = asyncio.new_event_loop()
        _WORKER["pool"] = DaemonPool("evaldsl-ray-worker")
    loop: asyncio.AbstractEventLoop = _WORKER["loop"]
    coro = execute_run(subject, case, index, pool=_WORKER["pool"], judge=judge, predicates=predicates, user=user)
    return loop.run_until_complete(coro)


def _subject(spec: str, kind: str, paths: Sequence[str]) -> Subject:
    """The subject for ``spec``, built once per worker process."""
    key = (kind, spec)
    subject = _SUBJECTS.get(key)
    if subject is None:
        for path in reversed(paths):
            if path not in sys.path and os.path.isdir(path):
                sys.path.insert(0, path)
        obj = import_object(spec)
        subject = agent_subject(obj) if kind == "agent" else harness_subject(obj)
        _SUBJECTS[key] = subject
    return subject
