"""The asyncio scheduler: every run of every case, with bounded concurrency.

The unit of work is one run (a case with ``repeat 5`` is five units), so the
repeats of a slow case spread over the workers like any other work. A fixed
set of worker coroutines pulls units in file and case order; when the last
run of a case finishes, its `CaseResult` is built and handed to
``on_result`` at once, whatever order cases finish in. Results are returned
in case order.

Why a default of 8 runs in flight: agent runs are dominated by waiting on a
model API, so a few in flight hide most of the latency, while 8 stays under
the per-minute request limits of the common hosted APIs' entry tiers and
does not swamp a local model server; each sync agent in flight also holds a
thread. Raise it with ``-j`` for fast or local backends.

`-x` (exitfirst): after the first case that fails or errors, no new run
starts, and runs in flight are cancelled (async) or abandoned (sync). A case
with runs in flight is reported all the same: its finished runs as they
are, the others as errors of kind ``cancelled`` ("-x stopped the run before
this run finished"), so the record says what happened to every case that
had started (and `--resume` runs those again). Cases not started are left
out. The run counts as stopped early (an incomplete record) only when a case
was cancelled or left out that way: if every case had already finished, the
run is whole. These cancellations are
the runner's own (`stop_task`); a `CancelledError` an agent, judge or
predicate raises by itself is that run's error, so a case never vanishes.

Every case's scoring runs on the event loop; a shared `LoopClock` counts
that time so that other cases' timeouts are extended by it (`_execute`).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from ..compile._model import CompiledCase, JudgeFn, LazyCases, PredicateFn, SuiteCases
from ..compile._regex import serve_matches
from ._control import LoopClock, WorkerTask, stop_task, stray_cancel, withdraw_stray_cancel
from ._execute import execute_run
from ._lanes import Lanes, lanes_fit
from ._protocols import Subject
from ._record import CaseResult, ErrorInfo, RunResult
from ._safe import error_info
from ._stats import case_result
from ._threads import DaemonPool

T = TypeVar("T")

DEFAULT_CONCURRENCY = 8
"""Runs in flight at once unless told otherwise (see the module docstring)."""

OnResult = Callable[[CaseResult], None]
RunUnit = Callable[..., Awaitable[RunResult]]
"""What runs one unit: `execute_run`'s signature (another executor, e.g. `_ray`, may stand in)."""


class _Stop(Exception):
    """Raised by a worker when `-x` should stop the run."""


class _Slot:
    __slots__ = ("case", "runs", "left")

    def __init__(self, case: CompiledCase) -> None:
        self.case = case
        self.runs: list[RunResult | None] = [None] * max(1, case.settings.repeat)
        self.left = len(self.runs)


async def schedule(
    subject: Subject,
    cases: Sequence[CompiledCase],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    exitfirst: bool = False,
    judge: JudgeFn | None = None,
    predicates: Mapping[str, PredicateFn] | None = None,
    on_result: OnResult | None = None,
    pool: DaemonPool | None = None,
    execute: RunUnit = execute_run,
    keep: bool = True,
    halted: Callable[[], bool] | None = None,
    user: Any = None,
) -> tuple[list[CaseResult | None], bool]:
    """Run every case; returns (results aligned with ``cases``, stopped early by -x).

    ``halted``, asked before each case starts, says that no more case may start (the caller then ends
    the run, as `evaldsl run` does when an endpoint is found down). A result is None for a case that
    `-x` kept from finishing; ``user``: the model that plays a `simulated user`. With ``keep``
    false no result is kept (the list is empty): ``on_result`` has each, and
    a run's results are released as its case ends. Cancelling
    the calling task (Ctrl-C) cancels every run in flight and propagates.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    pool = pool or DaemonPool()
    plays = {} if user is None else {"user": user}  # an executor that has never met a simulated user is not asked to
    results: list[CaseResult | None] = [None] * len(cases) if keep else []

    def finish(index: int, result: CaseResult) -> None:
        if keep:
            results[index] = result
        if on_result is not None:
            on_result(result)
        if exitfirst and result.status in ("failed", "error"):
            raise _Stop

    lazy = isinstance(cases, (LazyCases, SuiteCases))
    slots: dict[int, _Slot] = {}  # the cases with runs in flight (a slot is released when its case ends)

    def pending() -> Iterator[tuple[int, CompiledCase]]:
        """The cases that run, in order; a skipped case is finished here."""
        for i, case in enumerate(cases):
            if case.settings.skip is not None:
                finish(i, case_result(case, ()))
            else:
                yield i, case

    # Cases made when read (examples rows) are made once, as a worker reaches each, and dropped when
    # done; cases already in memory are gone over first, so skipped ones are reported before any run.
    ran = None if lazy else list(pending())

    fed = [False, 0]  # [every unit was handed to a worker, how many were]

    def units() -> Iterator[tuple[_Slot, int, int]]:
        for i, case in pending() if ran is None else ran:
            if halted is not None and halted():
                return
            slot = slots[i] = _Slot(case)
            for r in range(len(slot.runs)):
                fed[1] += 1
                yield slot, i, r
        fed[0] = True

    todo: Iterator[tuple[_Slot, int, int]] = units()
    clock = LoopClock()

    def record(slot: _Slot, i: int, r: int, run: RunResult) -> None:
        slot.runs[r] = run
        slot.left -= 1
        if slot.left == 0:
            del slots[i]
            finish(i, case_result(slot.case, [x for x in slot.runs if x is not None]))

    async def worker() -> None:
        task = asyncio.current_task()
        cancelling = getattr(task, "cancelling", None)  # 3.11+ (on 3.10 a stray request cannot be seen)
        for unit in todo:  # one shared iterator: each unit is taken once
            slot, i, r = unit[:3]
            try:
                if len(unit) == 3:
                    run = await execute(
                        subject, slot.case, r, pool=pool, judge=judge, predicates=predicates, clock=clock, **plays
                    )
                else:  # a lane called the agent, which returned an awaitable (`_lanes`)
                    run = await execute_run(subject, slot.case, r, pool=pool, judge=judge, predicates=predicates,
                                            clock=clock, called=unit[3])  # type: ignore[misc]
            except (asyncio.CancelledError, KeyboardInterrupt):
                raise  # the runner's own cancellation (Ctrl-C, -x), or the user's interrupt
            except BaseException as exc:  # a runner bug must cost one run, never a worker and its cases
                run = RunResult(index=r, passed=False, score=0.0, latency_s=0.0, error=error_info(exc))
            if cancelling is not None and cancelling() and stray_cancel():  # the agent cancel()led this worker
                await withdraw_stray_cancel()  # and returned: not the next case's error
            record(slot, i, r, run)

    total_units = concurrency if ran is None else sum(max(1, case.settings.repeat) for _, case in ran)

    def busy(seconds: float) -> None:  # a worker thread's match held the loop: other runs get the time back
        clock.busy += seconds

    with serve_matches(asyncio.get_running_loop(), busy):  # regex matches of worker threads, time-limited here
        if execute is execute_run and not exitfirst and lanes_fit(subject):  # a plain sync agent: lanes first
            lanes = Lanes(subject, todo, record, limit=concurrency, pool=pool, judge=judge, predicates=predicates,
                          clock=clock)
            left = await _drive_one(lanes.run())
            todo = itertools.chain(left, todo)  # what the lanes leave (judged cases, awaitables) to the workers
        stopped = await _drive([worker() for _ in range(min(concurrency, total_units))])
    # -x stopped the run only if it left a case out: when every run had started and finished before
    # the stop (instant agents, more workers than cases), every case is reported and the run is whole.
    # (Cases read when made are all handed over once their iterator is spent; those in memory, once the
    # last unit is: its worker may be the one that stopped, before the iterator was asked again.)
    whole = not slots and (fed[0] or (ran is not None and fed[1] == total_units))
    if stopped:
        for i, slot in list(slots.items()):  # the cases -x caught in flight: reported, their runs cancelled
            del slots[i]
            runs = [run if run is not None else _cancelled(r) for r, run in enumerate(slot.runs)]
            result = case_result(slot.case, runs)
            if keep:
                results[i] = result
            if on_result is not None:
                on_result(result)
    return results, stopped and not whole


def _cancelled(index: int) -> RunResult:
    error = ErrorInfo(type="CancelledError", message="-x stopped the run before this run finished", kind="cancelled")
    return RunResult(index=index, passed=False, score=0.0, latency_s=0.0, error=error)


async def _drive_one(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` in a worker task of its own (the runner's cancellations told from an agent's, as
    for `_drive`'s workers); Ctrl-C cancels it and propagates."""
    task = WorkerTask(coro, loop=asyncio.get_running_loop())
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await _cancel([task])
        raise


async def _drive(coros: list) -> bool:  # type: ignore[type-arg]
    """Run the workers; returns True when one stopped the run (-x). Other errors propagate."""
    if not coros:
        return False
    loop = asyncio.get_running_loop()
    tasks = [WorkerTask(c, loop=loop) for c in coros]  # tells the runner's cancellations from an agent's
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except asyncio.CancelledError:
        await _cancel(tasks)
        raise
    await _cancel(list(pending))
    stopped = False
    for task in done:
        exc = None if task.cancelled() else task.exception()
        if isinstance(exc, _Stop):
            stopped = True
        elif exc is not None:
            raise exc
    return stopped


async def _cancel(tasks: Sequence[asyncio.Future]) -> None:  # type: ignore[type-arg]
    for task in tasks:
        stop_task(task)  # type: ignore[arg-type]
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)
