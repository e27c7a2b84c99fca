"""Scoring a run: what the agent returned made safe, then every expectation evaluated.

Scoring runs on the event loop, and while it runs no other run makes
progress; a shared `LoopClock` counts those seconds, and each timeout is
extended by the scoring time that passed during its run (see `bounded`),
so one case's slow scoring never makes another case time out. Why not a
worker thread: the regex scans and most Python-level scoring hold the
interpreter lock, so the loop would stall just the same. Regex matching is
time-limited by the case's timeout (`compile/_regex.py`), on the main
thread: a match a sync agent's mock tool asks for on its worker thread is
done there too, since the regex engine holds the interpreter lock.

Judges: a judge expectation runs on a worker thread, since a sync judge
may block on HTTP. An `async def` judge is called there too, and the
coroutine it returns is handed to the event loop with
`asyncio.run_coroutine_threadsafe`, so it shares the loop (and the clients
bound to it) with async agents; on a timeout it is cancelled there.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from ..artifacts import RunArtifacts
from ..compile._model import (
    NO_STATE,
    CompiledCase,
    CompiledExpectation,
    EvalContext,
    JudgeFn,
    Outcome,
    PredicateFn,
)
from ..compile._regex import disarm as disarm_matches
from ._bounded import bounded
from ._control import LoopClock, forget_cancel, runner_cancelling
from ._protocols import Subject
from ._record import ErrorInfo, ExpectationResult, RunResult
from ._safe import (
    Refused,
    cancelled_info,
    clip,
    error_info,
    exception_text,
    make_safe,
    safe_repr,
    safe_text,
    text_ok,
)
from ._threads import DaemonPool
from ._trusted import expectation, made, run_result


class NoJudge(RuntimeError):
    """A `judge` expectation ran with no judge configured."""

    error_kind = "judge_missing"


async def score_run(subject: Subject, case: CompiledCase, index: int, raw: Any, world: Any, latency: float, *,
                    pool: DaemonPool, judge: JudgeFn | None, predicates: Mapping[str, PredicateFn] | None,
                    clock: LoopClock, began: float, world_state: Any = NO_STATE) -> RunResult:
    """The run whose agent returned ``raw`` after ``latency`` seconds, scored: its artifacts made safe and
    every expectation evaluated (`execute_run`'s end, and the lanes' (`_lanes`) for each agent call they
    made). The loop time from ``began`` on is added to ``clock``. Suspends only for a judge."""
    artifacts, problem, warnings = coerce_artifacts(raw, latency)
    if artifacts is None:
        clock.busy += time.perf_counter() - began
        return _error_run(index, latency, problem)
    if artifacts.duration_s is None:
        artifacts = _with_duration(artifacts, latency)
    predicates = subject.predicates if predicates is None else predicates
    ctx = EvalContext(artifacts=artifacts, prompt=case.prompt, world=world, duration_s=latency, judge=judge,
                      predicates=predicates, world_state=world_state, tools=case.tools)
    try:  # scoring's loop time, from `began` on, is added to the clock by evaluate
        results, eval_error = await evaluate(case.expectations, ctx, pool=pool, timeout=case.settings.timeout_s,
                                              clock=clock, began=began)
    finally:
        disarm_matches()
    # the run: its score, the product of its credits (0 for an error), and whether every credit is above 0
    error = ErrorInfo(type="AgentError", message=clip(safe_text(artifacts.error)),
                      kind=artifacts.error_kind or "agent_error") if artifacts.error else eval_error
    score, passed = 1.0, error is None
    for result in results:
        score *= result.credit
        passed = passed and result.passed
    return run_result(index, passed, 0.0 if error else score, latency, error, results, artifacts, warnings)


def _with_duration(artifacts: RunArtifacts, latency: float) -> RunArtifacts:
    """``artifacts.model_copy(update={"duration_s": latency})``, for a quarter of its cost (the agent's own
    object is not changed: it may return the same one every time)."""
    if type(artifacts) is not RunArtifacts or artifacts.__pydantic_extra__ or artifacts.__pydantic_private__:
        return artifacts.model_copy(update={"duration_s": latency})
    fields = artifacts.__dict__.copy()
    fields["duration_s"] = latency
    return made(RunArtifacts, fields, artifacts.__pydantic_fields_set__ | {"duration_s"})


async def evaluate(
    expectations: tuple[CompiledExpectation, ...],
    ctx: EvalContext,
    *,
    pool: DaemonPool,
    timeout: float,
    clock: LoopClock | None = None,
    began: float | None = None,
    turn: int | None = None,
) -> tuple[list[ExpectationResult], ErrorInfo | None]:
    """Evaluate every expectation; the first one that raises makes the run an error.

    Judge expectations run on a worker thread (a blocking HTTP judge must not
    stall the other runs), each bounded by the case's timeout. The time spent
    on the loop (not awaiting a judge), from ``began`` (default: now), is
    added to ``clock.busy``. ``turn``: the conversation turn the expectations
    judge (recorded with each result); None for the whole run.
    """
    clock = clock if clock is not None else LoopClock()
    results: list[ExpectationResult] = []
    first_error: ErrorInfo | None = None
    began = time.perf_counter() if began is None else began
    for exp in expectations:
        try:
            if exp.needs_judge:
                if ctx.judge is None:
                    raise NoJudge("this expectation needs a judge, and none was configured: pass --judge "
                                  "PROVIDER:MODEL to `evaldsl run` or `rescore` (--evl-judge to pytest, "
                                  "judge= in Python)")
                clock.busy += time.perf_counter() - began
                try:
                    outcome = await _judged(exp, ctx, pool, timeout, clock)
                finally:
                    began = time.perf_counter()
            else:
                outcome = exp.check(ctx)  # what exp(ctx) calls, one frame less: this is the hot loop
            if type(outcome) is not Outcome:
                outcome = _as_outcome(outcome)
        except BaseException as exc:  # everything but the runner's own cancellation and the user's interrupt
            if isinstance(exc, KeyboardInterrupt) or (isinstance(exc, asyncio.CancelledError) and runner_cancelling()):
                clock.busy += time.perf_counter() - began
                raise
            if isinstance(exc, asyncio.CancelledError):
                forget_cancel()
                info = cancelled_info(exc, "it")
            else:
                info = error_info(exc, "scoring_error")
            info.message = f"{info.message} (evaluating `{exp.label}` at {exp.file}:{exp.line})"
            first_error = first_error or info
            results.append(_expectation(exp, 0.0, f"could not be evaluated: {info.type}: "
                                                  f"{exception_text(exc, limit=500)}", turn))
            continue
        credit, detail = outcome.credit, outcome.detail  # what _expectation does, inline (the hot loop)
        if detail is not None and not (type(detail) is str and (detail.isascii() or text_ok(detail))):
            detail = safe_text(detail) if isinstance(detail, str) else safe_repr(detail)
        results.append(expectation(exp.label, credit > 0, credit, detail, exp.file, exp.line, turn))
    clock.busy += time.perf_counter() - began
    return results, first_error


async def _judged(exp: CompiledExpectation, ctx: EvalContext, pool: DaemonPool, timeout: float,
                  clock: LoopClock) -> Any:
    """Evaluate a judge expectation on a worker; an awaitable the judge returns runs on this loop."""
    loop = asyncio.get_running_loop()
    judge: Callable[..., Any] = ctx.judge  # type: ignore[assignment]
    pending: list[concurrent.futures.Future[Any]] = []
    over = False

    def on_worker(**kwargs: Any) -> Any:
        value = judge(**kwargs)
        if not is_awaitable(value):
            return value
        future = asyncio.run_coroutine_threadsafe(_awaited(value), loop)
        pending.append(future)
        if over:  # timed out while the judge was being called: nobody waits for it
            future.cancel()
        return future.result()

    try:
        return await bounded(pool.submit(exp, replace(ctx, judge=on_worker)), timeout, what="judge", clock=clock,
                             settle=pool.settle)
    finally:
        over = True
        for future in pending:
            future.cancel()  # a no-op once done; else a timed-out judge stops where it is


def is_awaitable(value: Any) -> bool:
    """`inspect.isawaitable`, answered at once for what agents return most (artifacts or a dict), whose
    classes are never awaitable: the general test asks an abstract base class, a case at a time."""
    kind = type(value)
    return kind is not RunArtifacts and kind is not dict and inspect.isawaitable(value)


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def coerce_artifacts(raw: Any, duration: float | None = None) -> tuple[RunArtifacts | None, ErrorInfo | None,
                                                                       Sequence[str]]:
    """Accept `RunArtifacts` or a dict of its fields, made safe for the record (see `_safe`); ``duration``
    (the run's seconds) set in the copy made when it holds none, where the copy is made anyway.

    Returns (artifacts, None, warnings), or (None, the error, []) for anything
    else, naming the type or the invalid field.
    """
    if isinstance(raw, dict):
        try:
            raw = RunArtifacts.model_validate(raw)
        except ValidationError as exc:
            message = f"the agent returned a dict that is not valid RunArtifacts: {_short(exc)}"
            return None, ErrorInfo(type="TypeError", message=message, kind="invalid_artifacts"), []
    elif not isinstance(raw, RunArtifacts):
        shown = "None" if raw is None else safe_text(type(raw).__qualname__)
        message = f"the agent returned {shown}, not RunArtifacts (or a dict of its fields)"
        return None, ErrorInfo(type="TypeError", message=message, kind="invalid_artifacts"), []
    try:
        artifacts, warnings = make_safe(raw, duration)
    except Refused as exc:
        return None, ErrorInfo(type="ValueError", message=f"the agent returned invalid RunArtifacts: {exc}",
                               kind="invalid_artifacts"), []
    return artifacts, None, warnings


def _as_outcome(value: Any) -> Outcome:
    if isinstance(value, Outcome):
        return value
    if isinstance(value, bool):
        return Outcome(1.0 if value else 0.0)
    raise TypeError(f"an expectation returned {type(value).__name__}, not an Outcome")


def _expectation(exp: CompiledExpectation, credit: float, detail: str | None,
                 turn: int | None = None) -> ExpectationResult:
    if detail is not None and not (type(detail) is str and (detail.isascii() or text_ok(detail))):
        detail = safe_text(detail) if isinstance(detail, str) else safe_repr(detail)
    return expectation(exp.label, credit > 0, credit, detail, exp.file, exp.line, turn)


def _error_run(index: int, latency: float, error: ErrorInfo | None) -> RunResult:
    return RunResult(index=index, passed=False, score=0.0, latency_s=latency, error=error)


def _short(exc: ValidationError) -> str:
    parts = [f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()[:3]]
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
