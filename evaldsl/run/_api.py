"""The runner's front door: `run_suite`, `run_eval`, `run_case` and their async forms.

`cases` may be a `CompiledSuite`, a `CompiledCase`, or any iterable of
either (e.g. what `evaldsl.load` returns); suites are flattened in order,
and a case reached twice (the same suite passed twice, one file loaded by
two paths) runs once: a case is its file, resolved, and its name, and the
first occurrence is kept. A record could not tell two results of one case
apart anyway.
The sync functions run their own event loop; called from inside a running
loop (a notebook, an async test), they run it on a separate thread rather
than fail.

Options shared by every function (keyword-only):

- ``concurrency`` (8): runs in flight at once (see `_scheduler`).
- ``exitfirst``: stop after the first case that fails or errors.
- ``keyword``, ``markers``, ``tags``, ``last_failed``: selection (see `select_cases`).
- ``previous``: a record to resume: its cases are kept, only the missing ones run.
- ``judge``: the function `judge "..."` expectations call.
- ``user``: the model that plays a `simulated user` (a `SimulatedUser`, or any callable
  ``(*, instructions, messages, repeat_index, case) -> text or None``; None: done). A case the
  agent cannot play (a conversation for an agent that takes no ``ctx``, a simulated user with no
  ``user``) raises `ConversationUsage` before anything runs.
- ``predicates``: custom predicates, name -> ``fn(artifacts, world, **kwargs)``.
- ``on_result``: called with each `CaseResult` as it finishes (in finishing order).
- ``shard``: a `Shard` (``Shard(2, 4)`` or ``"2/4"``): run only that slice of the selected cases (see `_shard`).
- ``executor``: runs each unit instead of the local event loop, e.g. a `RayExecutor` (see `_ray`).
- ``meta``: a `RunMeta` to start from (agent name, command line, ...);
  version, times, suites and git commit are filled in when not set.
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, Union

from ..compile._model import CompiledCase, CompiledSuite, JudgeFn, PredicateFn, SuiteCases, case_keys
from ._builder import ReportBuilder, git_commit, suite_files
from ._conversation import check_conversations
from ._protocols import Subject, agent_subject, harness_subject, subject_for
from ._record import CaseResult, EvalReport, RunMeta
from ._scheduler import DEFAULT_CONCURRENCY, OnResult, schedule
from ._select import picked, select_cases
from ._shard import Shard, shard_cases, suite_version

CasesLike = Union[CompiledSuite, CompiledCase, Iterable[Union[CompiledSuite, CompiledCase]]]
T = TypeVar("T")


def flatten_cases(cases: CasesLike) -> Sequence[CompiledCase]:
    """The cases of suites and/or cases, in order.

    A list, unless a suite's cases are made when read (`LazyCases`, the rows
    of an `examples from` file): then a sequence of the same cases that
    makes them when read too, so that no run holds them all.
    """
    if isinstance(cases, _Flat):
        return cases  # flattened already, repeats left out
    items: Iterable[Any] = [cases] if isinstance(cases, (CompiledSuite, CompiledCase, SuiteCases)) else cases
    parts: list[Sequence[CompiledCase]] = []
    for item in items:
        if isinstance(item, CompiledSuite):
            parts.append(item.cases)
        elif isinstance(item, CompiledCase):
            parts.append([item])
        elif isinstance(item, SuiteCases):
            parts.append(item)
        else:
            raise TypeError(f"expected CompiledSuite or CompiledCase, got {type(item).__name__}")
    if all(isinstance(p, (tuple, list)) for p in parts):
        return unique_cases(c for p in parts for c in p)
    flat = _Flat(parts)
    kept = _unique_positions(case_keys(flat))
    return flat if len(kept) == len(flat) else [flat[i] for i in kept]


def _unique_positions(keys: Iterable[tuple[str, str]]) -> list[int]:
    """`unique_cases` over (file, name) pairs: the positions of the first of each case."""
    resolved: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    out: list[int] = []
    for i, (raw, name) in enumerate(keys):
        file = resolved.get(raw)
        if file is None:
            file = resolved[raw] = os.path.normcase(os.path.realpath(raw))
        if (file, name) not in seen:
            seen.add((file, name))
            out.append(i)
    return out


class _Flat(SuiteCases):
    """What `flatten_cases` returns when cases are made as they are read: already without repeats."""


def unique_cases(cases: Iterable[CompiledCase]) -> list[CompiledCase]:
    """The cases without repeats of one case (same resolved file, same name), first kept, in order."""
    resolved: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    out: list[CompiledCase] = []
    for case in cases:
        file = resolved.get(case.file)
        if file is None:
            file = resolved[case.file] = os.path.normcase(os.path.realpath(case.file))
        key = (file, case.name)
        if key not in seen:
            seen.add(key)
            out.append(case)
    return out


async def arun_suite(
    agent: Any, cases: CasesLike, *, predicates: Mapping[str, PredicateFn] | None = None, **opts: Any
) -> EvalReport:
    """Run cases against an agent; the async form of `run_suite`.

    Args:
        agent: an object with ``run(instruction)`` (sync or async), a class
            making one with no arguments, or a function ``(instruction) ->
            RunArtifacts``. A dict of RunArtifacts fields is accepted as a return value.
        cases: suites and/or cases.
        predicates: custom predicates available to the expectations.
        **opts: the options listed in this module's docstring.
    """
    return await _arun(agent_subject(agent, predicates), cases, **opts)


async def arun_eval(
    harness: Any, cases: CasesLike, *, predicates: Mapping[str, PredicateFn] | None = None, **opts: Any
) -> EvalReport:
    """Run cases against a harness (setup a world, run, check); the async form of `run_eval`.

    Args:
        harness: an object (or a class making one) with ``setup(value)`` and
            ``run(instruction, world)``; its ``predicates`` mapping, if any,
            is merged with ``predicates`` (which win).
        cases: suites and/or cases.
        **opts: the options listed in this module's docstring.
    """
    return await _arun(harness_subject(harness, predicates), cases, **opts)


def run_suite(agent: Any, cases: CasesLike, **opts: Any) -> EvalReport:
    """Run cases against an agent and return the `EvalReport` (see `arun_suite`)."""
    return _sync(arun_suite(agent, cases, **opts))


def run_eval(harness: Any, cases: CasesLike, **opts: Any) -> EvalReport:
    """Run cases against a harness and return the `EvalReport` (see `arun_eval`)."""
    return _sync(arun_eval(harness, cases, **opts))


async def arun_case(
    agent: Any,
    case: CompiledCase,
    *,
    judge: JudgeFn | None = None,
    predicates: Mapping[str, PredicateFn] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    user: Any = None,
) -> CaseResult:
    """Run one case (all its repeats) against an agent or a harness (told apart by shape); ``user``: the
    model that plays a `simulated user`. Raises `ConversationUsage` for a case the agent cannot play."""
    subject = subject_for(agent, predicates)
    check_conversations(subject, [case], user=user)
    results, _ = await schedule(subject, [case], concurrency=concurrency, judge=judge, user=user)
    result = results[0]
    if result is None:  # cannot happen without -x: every run is recorded, a stray CancelledError included
        raise RuntimeError(f"the runner lost the result of case {case.name!r}; please report this")
    return result


def run_case(agent: Any, case: CompiledCase, **opts: Any) -> CaseResult:
    """Run one case and return its `CaseResult` (see `arun_case`); the pytest plugin's entry."""
    return _sync(arun_case(agent, case, **opts))


async def _arun(
    subject: Subject,
    cases: CasesLike,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    exitfirst: bool = False,
    keyword: str | None = None,
    markers: str | None = None,
    tags: Sequence[str] = (),
    last_failed: EvalReport | None = None,
    previous: EvalReport | None = None,
    judge: JudgeFn | None = None,
    on_result: OnResult | None = None,
    meta: RunMeta | None = None,
    shard: Shard | str | None = None,
    executor: Any = None,
    user: Any = None,
) -> EvalReport:
    flat = flatten_cases(cases)
    selected = select_cases(flat, keyword=keyword, markers=markers, tags=tags, last_failed=last_failed)
    check_conversations(subject, selected, user=user)
    selection: dict[str, Any] = {"keyword": keyword, "markers": markers, "tags": list(tags) or None}
    selection["last_failed"] = True if last_failed is not None else None
    suites = [cases] if isinstance(cases, CompiledSuite) else cases
    held = suites if isinstance(suites, (list, tuple)) and all(isinstance(s, CompiledSuite) for s in suites) else None
    meta = fill_meta(meta, subject, flat, concurrency, {k: v for k, v in selection.items() if v}, held)
    if shard is not None:
        shard = Shard.parse(shard) if isinstance(shard, str) else shard
        selected = shard_cases(selected, shard, meta.suites)
        if "shard" not in meta.model_fields_set:
            meta.shard = str(shard)
    if previous is not None and previous.meta.started_at is not None and "started_at" not in meta.model_fields_set:
        meta.started_at = previous.meta.started_at
    builder = ReportBuilder(flat, meta, previous)
    # positions, not cases: the rows of an `examples from` file left to resume are made as they run
    todo = selected if previous is None else picked(
        selected, [i for i, case in enumerate(selected) if not builder.is_done(case)])

    def on_case(result: CaseResult) -> None:
        builder.add(result)
        if on_result is not None:
            on_result(result)

    gc.freeze()  # the compiled suite is long-lived: keep the collector from rescanning it every run
    try:
        stopped = await run_cases(subject, todo, concurrency=concurrency, exitfirst=exitfirst, judge=judge,
                                  on_result=on_case, executor=executor, user=user)
    finally:
        gc.unfreeze()
    return builder.build(complete=not stopped)


async def run_cases(
    subject: Subject,
    cases: Sequence[CompiledCase],
    *,
    on_result: OnResult,
    concurrency: int = DEFAULT_CONCURRENCY,
    exitfirst: bool = False,
    judge: JudgeFn | None = None,
    executor: Any = None,
    halted: Callable[[], bool] | None = None,
    user: Any = None,
) -> bool:
    """Run ``cases`` (already selected) and hand each result to ``on_result``, keeping none;
    True when ``-x`` stopped the run. What `evaldsl run` calls, which keeps its results on disk.
    ``halted``: asked before each case starts; once it says so, no more case starts."""
    extra = {} if executor is None else {"execute": executor.execute}
    _, stopped = await schedule(subject, cases, concurrency=concurrency, exitfirst=exitfirst, judge=judge,
                                on_result=on_result, keep=False, halted=halted, user=user, **extra)
    return stopped


def fill_meta(
    meta: RunMeta | None,
    subject: Subject,
    cases: Sequence[CompiledCase],
    concurrency: int,
    selection: dict[str, Any],
    suites: Sequence[CompiledSuite] | None = None,
) -> RunMeta:
    """``meta`` with every field the caller did not set filled in from the run; ``suites``: those
    ``cases`` were flattened from, when known (the fingerprint then uses what they keep: `suite_version`)."""
    from .. import __version__

    given = meta.model_fields_set if meta is not None else set()
    out = meta.model_copy() if meta is not None else RunMeta()
    found: list[list[str]] = []

    def files() -> list[str]:
        if not found:
            found.append(suite_files(cases))
        return found[0]

    defaults: dict[str, Any] = {
        "evaldsl_version": lambda: __version__,
        "agent": lambda: subject.name,
        "backend": lambda: subject.kind,
        "suites": lambda: files(),
        "git_commit": lambda: git_commit(files()[0]) if files() and Path(files()[0]).exists() else None,
        "concurrency": lambda: concurrency,
        "selection": lambda: selection,
        "suite_version": lambda: suite_version(cases, suites),
    }
    for name, value in defaults.items():  # each only when not given: a pass over lazily made cases costs
        if name not in given:
            setattr(out, name, value())
    return out


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run`, except that the main task's result is kept out of the task.

    On Python 3.11, `asyncio.run` ends by formatting the finished main task
    with its result (while checking the SIGINT handler), which for a report
    of 10,000 cases means seconds spent building a repr nobody reads.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await coro)

    asyncio.run(main())
    return box[0]


def _sync(coro: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        in_loop = False
    else:
        in_loop = True
    if not in_loop:
        # Outside the `except` block, so an error raised in a run does not carry
        # "no running event loop" as its context into the recorded traceback.
        return run_async(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = run_async(coro)
        except BaseException as exc:  # re-raised on the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="evaldsl-run")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
