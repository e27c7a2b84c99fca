"""`build_plan`: a `RunRequest` -> a `RunPlan` (the subject, the compiled suites, the cases to run, the
record keeper and digest, the models, the executor), or one `PlanUsage` saying why not.

Everything that can be refused is refused here, before the first case runs: a bad path costs no import
of the agent, an agent that cannot be imported costs no compile, a record that cannot be written is
found when it is first written (`run_plan`). With ``--resume`` the finished cases are read back one at
a time and only the others are planned.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from . import _inputs
from ._ahead import CompileAhead
from ._defaults import LAST_RECORD
from ._models import ModelSetup, model_setup, unreached_dropped
from ._plan import RunPlan
from ._request import NothingSelected, PlanUsage, RunRequest, recorded_command
from ._resume import resume_in_folder


def build_plan(request: RunRequest, *, model: str | None = None, out: TextIO | None = None,
               err: TextIO | None = None) -> RunPlan:
    """The plan of one run: against the model ``model`` (one of ``request.models.models``), else the
    agent, harness, command or endpoint the request names.

    The report will go to ``out``; notes (the --lf fallback, what --resume finds, an empty shard) go to ``err``.

    Raises:
        PlanUsage: what was asked for cannot run (bad path, agent, option, record; suites that do
            not compile); nothing has run and no record was written.
        NothingSelected: no case is selected (none loaded, or all deselected).
    """
    out, err = out or sys.stdout, err or sys.stderr
    _inputs.check_targets(request)
    files = _inputs.files_of(request.paths)  # before the agent: a typo in a path costs no import
    ahead = CompileAhead.start(files, request, model)  # (before anything starts a thread)
    try:
        setup = model_setup(request.models, model)
        subject = _inputs.subject_of(request, setup.agent)
        if request.resume and Path(request.resume).is_dir():
            request = resume_in_folder(request, subject)
        suites = _inputs.load_suites(files, subject, request, ahead)
    finally:
        if ahead is not None:
            ahead.close()
    _inputs.warn_unseen(suites, subject, err)
    if model is not None:
        _inputs.check_model_tools(suites)
    from ..run._api import flatten_cases

    flat = flatten_cases(suites)
    previous = unreached_dropped(_inputs.previous_record(request, subject), setup)
    selected = _inputs.select(flat, request)
    if not selected:
        found = f"{len(flat)} loaded, all deselected" if flat else "the files hold no cases"
        raise NothingSelected(f"no cases selected ({found})")
    from ..run._conversation import ConversationUsage, check_conversations

    try:  # a conversation the agent cannot hold, a simulated user no model plays: before anything runs
        check_conversations(subject, selected, user=setup.user)
    except ConversationUsage as exc:
        raise PlanUsage(str(exc)) from None
    last_failed = False
    if request.selection.last_failed:
        selected, last_failed = _inputs.keep_last_failed(selected, err)
    meta = _meta(request, subject, suites, flat, previous, last_failed, setup)
    selected = _sharded(selected, request, meta, previous, err)
    keeper, digest = _keeping(request, meta, flat)
    todo = _resumed(selected, previous, keeper, digest, request, err)
    return RunPlan(request, subject, suites, todo, keeper, digest, setup, _executor(request) if todo else None,
                   selected=len(selected), resumed=previous is not None, out=out, err=err)


def _meta(request: RunRequest, subject: Any, suites: list[Any], flat: Sequence[Any], previous: Any,
          last_failed: bool, setup: ModelSetup) -> Any:
    """The record's metadata: the command line, the agent's name, the selection, the models, the start time."""
    from ..run._api import fill_meta
    from ..run._record import RunMeta

    meta = RunMeta(command=recorded_command(request.argv))
    if request.model_name:
        meta.agent = request.model_name
    if previous is not None and previous.meta.started_at is not None:
        meta.started_at = previous.meta.started_at
    s = request.selection
    selection = {"keyword": s.keyword, "markers": s.markers, "tags": list(s.tags) or None,
                 "last_failed": last_failed or None}
    meta = fill_meta(meta, subject, flat, request.concurrency, {k: v for k, v in selection.items() if v}, suites)
    for name, value in setup.meta.items():
        setattr(meta, name, value)
    if setup.agent is not None:
        meta.backend = "model"
    return meta


def _keeping(request: RunRequest, meta: Any, flat: Sequence[Any]) -> tuple[Any, Any]:
    """The record keeper (its files named, none written yet) and the summary's digest."""
    from ..compile._model import case_keys
    from ..report._details import Details
    from ..report._json import record_stem
    from ..report._keeper import RecordKeeper
    from ..report._terminal import Digest
    from ..run._builder import now
    from ..run._select import case_key

    if meta.started_at is None:
        meta.started_at = now()
    o = request.outputs
    paths = list(dict.fromkeys(p for p in (o.json, request.resume) if p))
    stem = record_stem(meta.agent, meta.started_at)
    keeper = RecordKeeper((case_key(f, n) for f, n in case_keys(flat)), meta, paths, out_dir=o.out, stem=stem,
                          optional=None if paths or o.out else LAST_RECORD)
    d = request.display
    digest = Digest(Details(verbosity=0 if d.quiet else 1 + (d.verbose >= 2), tb=d.tb))
    return keeper, digest


def _resumed(selected: Sequence[Any], previous: Any, keeper: Any, digest: Any, request: RunRequest,
             err: TextIO) -> Sequence[Any]:
    """The selected cases a resumed record has not done (all of them without --resume); the done ones
    go into the keeper and the digest, read back one at a time (a large record is never held whole)."""
    if previous is None:
        return selected
    from ..compile._model import case_keys
    from ..run._select import picked

    keeper.resume(previous)
    for case in previous.results():
        digest.add(case, keeper.position(case))
    # by key: the cases of examples rows are not made for it (`picked`)
    todo = picked(selected, [i for i, (f, n) in enumerate(case_keys(selected)) if not keeper.is_done(f, n)])
    print(f"evaldsl: resuming {request.resume}: {len(selected) - len(todo)} case(s) done, "
          f"{len(todo)} to run", file=err)
    return todo


def _sharded(selected: Sequence[Any], request: RunRequest, meta: Any, previous: Any,
             err: TextIO) -> Sequence[Any]:
    """This shard's slice of the selected cases (all of them without ``--shard``).

    An empty slice is a note, not an error (exit 0: a CI matrix wider than
    the suite must not fail for it), and still writes its (empty) record for
    `evaldsl merge`. A shard record is resumed only by the same shard.
    """
    from ..run._shard import shard_cases

    shard = request.shard
    if previous is not None and previous.meta.shard != (str(shard) if shard else None):
        raise PlanUsage(f"--resume {request.resume}: the record is of shard "
                        f"{previous.meta.shard or 'none (all cases)'}, this run of {shard or 'all cases'}; "
                        "resume a shard with the same --shard")
    if shard is None:
        return selected
    mine = shard_cases(selected, shard, meta.suites)
    meta.shard = str(shard)
    if not mine:
        print(f"evaldsl: shard {shard} holds none of the {len(selected)} selected case(s); nothing to run", file=err)
    return mine


def _executor(request: RunRequest) -> Any:
    """None for the local runner; for ``--executor ray``, a `RayExecutor` connected to the cluster."""
    if request.executor != "ray":
        return None
    if request.models.models:
        raise PlanUsage("--executor ray runs an --agent or a --harness; a --model run stays in this process "
                        "(its cost is waiting on the endpoint, which -j already spreads)")
    spec = request.agent or request.harness
    if spec is None:
        raise PlanUsage("--executor ray runs an --agent or a --harness (each Ray worker imports it from its "
                        "MODULE:ATTR); an --agent-cmd or --agent-url run stays in this process")
    from ..run._ray import RayExecutor, RayUnavailable

    try:
        return RayExecutor(spec, kind="agent" if request.agent else "harness", connect=True)
    except RayUnavailable as exc:
        raise PlanUsage(f"--executor ray: {exc}") from None
