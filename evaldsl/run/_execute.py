"""One run of one case: call the agent under a timeout, then score it.

Everything that can go wrong in a run stays in that run: an exception from
the agent, a timeout, a return value that is not artifacts, an expectation
that cannot be evaluated (an unreadable judge reply, an unknown custom
predicate). Each becomes the run's `ErrorInfo` (type, message, traceback);
nothing but cancellation (Ctrl-C, `-x`) and `KeyboardInterrupt` escapes
`execute_run`: an agent's `GeneratorExit`, `SystemExit` or own
`BaseException` subclass is its run's error too. A
`CancelledError` the runner did not ask for (an agent, judge or predicate
raised it) is that run's error too (`_control.runner_cancelling`). What
the agent returned is made safe for the JSON record before it is scored
(`_safe`), and exception text is taken defensively there.

Timeouts: an async agent is cancelled; a sync agent runs on a daemon thread
that Python cannot stop, so it is abandoned and the run moves on. The
timeout bounds the harness's `setup` and `run` together. An async agent
that blocks the event loop (a `time.sleep` or a blocking client inside
`async def`) cannot be cancelled: the timer only fires once the loop is
free, after the agent has returned. Such a run is still a timeout when it
took longer than the timeout, so a blocking agent cannot pass a case it
did not answer in time.

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
    CompiledCase,
    CompiledExpectation,
    EvalContext,
    JudgeFn,
    Outcome,
    PredicateFn,
)
from ..compile._regex import disarm as disarm_matches
from ..compile._regex import set_match_limit
from ._bounded import bounded
from ._context import CaseContext, with_recorded_calls
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
from ._threads import DaemonPool, RunTimeout, seconds_text


class NoJudge(RuntimeError):
    """A `judge` expectation ran with no judge configured."""


async def execute_run(
    subject: Subject,
    case: CompiledCase,
    index: int,
    *,
    pool: DaemonPool,
    judge: JudgeFn | None = None,
    predicates: Mapping[str, PredicateFn] | None = None,
    clock: LoopClock | None = None,
    called: tuple[Any, float, float, float] | None = None,
) -> RunResult:
    """Run ``case`` once against ``subject`` and score it; never raises but cancellation.

    ``called``: a plain sync agent was already called for this run (by a lane, `_lanes`) and returned
    an awaitable: (that value, the call's seconds, `time.perf_counter()` when it began, ``clock.busy``
    then); it is awaited here for the time left, as if this run had called the agent.
    """
    clock = clock if clock is not None else LoopClock()
    timeout = case.settings.timeout_s
    set_match_limit(timeout)  # for the agent's mock-tool `when` patterns too (the context reaches its thread)
    start = time.perf_counter() if called is None else called[2]
    busy = clock.busy if called is None else called[3]
    on_loop = subject.run_is_async  # what a timeout stops runs on the loop (cancelled), else on a thread
    try:
        if called is not None or (subject.setup is None and not subject.context and not subject.run_is_async):
            if called is None:  # a plain sync agent: its job is timed by the pool (`_threads`), no timer
                raw, latency = await pool.submit_bounded(timeout, clock, _timed, subject.run, case.prompt)
            else:  # a lane called it already
                raw, latency = called[0], called[1]
            world = None
            if inspect.isawaitable(raw):  # a sync callable handing back an awaitable, for the time left
                on_loop = True
                left = timeout - (time.perf_counter() - start) + (clock.busy - busy)
                raw, latency = await bounded(_settle(raw, latency), max(0.0, left), clock=clock,
                                             settle=pool.settle)
        else:
            if subject.setup is None and not subject.context:  # _invoke's work, fewer frames
                work = _timed_async(subject.run, case.prompt)
            else:
                work = _invoke(subject, case, pool, index)
            raw, world, latency = await bounded(work, timeout, clock=clock, settle=pool.settle, pool=pool)
    except RunTimeout:
        return timeout_run(index, timeout, time.perf_counter() - start, on_loop=on_loop)
    except asyncio.CancelledError as exc:
        if runner_cancelling():
            raise
        forget_cancel()
        return _error_run(index, _own_time(subject, start, clock.busy - busy), cancelled_info(exc, "the agent"))
    except KeyboardInterrupt:
        raise  # the user's interrupt (Python's convention): the run stops as at Ctrl-C, keeping what finished
    except BaseException as exc:  # any other: Exception, SystemExit, GeneratorExit, an agent's own BaseException
        return _error_run(index, _own_time(subject, start, clock.busy - busy), error_info(exc))
    scored = time.perf_counter()
    if subject.run_is_async or subject.setup_is_async:
        stolen = clock.busy - busy  # other cases' scoring while this agent ran: not its time
        latency = max(0.0, latency - stolen) if subject.run_is_async else latency
        elapsed = scored - start - stolen
        if elapsed > timeout:  # the timer could not fire: the loop was blocked until the agent returned
            return _error_run(index, elapsed, _blocked_loop(timeout, elapsed))
    return await score_run(subject, case, index, raw, world, latency, pool=pool, judge=judge,
                           predicates=predicates, clock=clock, began=scored)


async def score_run(subject: Subject, case: CompiledCase, index: int, raw: Any, world: Any, latency: float, *,
                    pool: DaemonPool, judge: JudgeFn | None, predicates: Mapping[str, PredicateFn] | None,
                    clock: LoopClock, began: float) -> RunResult:
    """The run whose agent returned ``raw`` after ``latency`` seconds, scored: its artifacts made safe and
    every expectation evaluated (`execute_run`'s end, and the lanes' (`_lanes`) for each agent call they
    made). The loop time from ``began`` on is added to ``clock``. Suspends only for a judge."""
    artifacts, problem, warnings = coerce_artifacts(raw)
    if artifacts is None:
        clock.busy += time.perf_counter() - began
        return _error_run(index, latency, problem)
    if artifacts.duration_s is None:
        artifacts = _with_duration(artifacts, latency)
    predicates = subject.predicates if predicates is None else predicates
    ctx = EvalContext(artifacts=artifacts, prompt=case.prompt, world=world, duration_s=latency, judge=judge,
                      predicates=predicates)
    try:  # scoring's loop time, from `began` on, is added to the clock by evaluate
        results, eval_error = await _evaluate(case.expectations, ctx, pool=pool, timeout=case.settings.timeout_s,
                                              clock=clock, began=began)
    finally:
        disarm_matches()
    return _scored(index, latency, artifacts, warnings, results, eval_error)


def timeout_run(index: int, timeout: float, elapsed: float, *, on_loop: bool) -> RunResult:
    """The run of an agent that did not finish within ``timeout``: cancelled (``on_loop``) or abandoned."""
    how = "cancelled" if on_loop else "abandoned (a sync agent cannot be stopped)"
    message = f"the agent did not finish within {seconds_text(timeout)} (the case's timeout); the run was {how}"
    return _error_run(index, elapsed, ErrorInfo(type="TimeoutError", message=message))


def _with_duration(artifacts: RunArtifacts, latency: float) -> RunArtifacts:
    """``artifacts.model_copy(update={"duration_s": latency})``, for a quarter of its cost (the agent's own
    object is not changed: it may return the same one every time)."""
    if type(artifacts) is not RunArtifacts or artifacts.__pydantic_extra__ or artifacts.__pydantic_private__:
        return artifacts.model_copy(update={"duration_s": latency})
    fields = artifacts.__dict__.copy()
    fields["duration_s"] = latency
    copy = object.__new__(RunArtifacts)
    object.__setattr__(copy, "__dict__", fields)
    object.__setattr__(copy, "__pydantic_fields_set__", artifacts.__pydantic_fields_set__ | {"duration_s"})
    object.__setattr__(copy, "__pydantic_extra__", None)
    object.__setattr__(copy, "__pydantic_private__", None)
    return copy


def _scored(index: int, latency: float, artifacts: RunArtifacts, warnings: Sequence[str],
            results: list[dict[str, Any]], eval_error: ErrorInfo | None) -> RunResult:
    """The result of a run whose agent returned artifacts (its expectations' results as fields:
    one validation of the whole run costs less than one per expectation)."""
    error = ErrorInfo(type="AgentError", message=clip(safe_text(artifacts.error))) if artifacts.error else eval_error
    score = 0.0 if error else _product(r["credit"] for r in results)
    fields: dict[str, Any] = {
        "index": index,
        "passed": error is None and all(r["passed"] for r in results),
        "score": score,
        "latency_s": latency,
        "error": error,
        "expectations": results,
        "artifacts": artifacts,
    }
    if warnings:  # most runs have none: skip validating an empty list
        fields["warnings"] = list(warnings)
    return RunResult.model_validate(fields)


async def evaluate(
    expectations: tuple[CompiledExpectation, ...],
    ctx: EvalContext,
    *,
    pool: DaemonPool,
    timeout: float,
    clock: LoopClock | None = None,
    began: float | None = None,
) -> tuple[list[ExpectationResult], ErrorInfo | None]:
    """Evaluate every expectation; the first one that raises makes the run an error.

    Judge expectations run on a worker thread (a blocking HTTP judge must not
    stall the other runs), each bounded by the case's timeout. The time spent
    on the loop (not awaiting a judge), from ``began`` (default: now), is
    added to ``clock.busy``.
    """
    results, error = await _evaluate(expectations, ctx, pool=pool, timeout=timeout, clock=clock, began=began)
    return [ExpectationResult.model_validate(r) for r in results], error


async def _evaluate(
    expectations: tuple[CompiledExpectation, ...],
    ctx: EvalContext,
    *,
    pool: DaemonPool,
    timeout: float,
    clock: LoopClock | None = None,
    began: float | None = None,
) -> tuple[list[dict[str, Any]], ErrorInfo | None]:
    """`evaluate`, each result as the fields of an `ExpectationResult` (validated with its run)."""
    clock = clock if clock is not None else LoopClock()
    results: list[dict[str, Any]] = []
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
                info = error_info(exc)
            info.message = f"{info.message} (evaluating `{exp.label}` at {exp.file}:{exp.line})"
            first_error = first_error or info
            results.append(_expectation(exp, 0.0, f"could not be evaluated: {info.type}: "
                                                  f"{exception_text(exc, limit=500)}"))
            continue
        credit, detail = outcome.credit, outcome.detail  # what _expectation does, inline (the hot loop)
        if detail is not None and not (type(detail) is str and (detail.isascii() or text_ok(detail))):
            detail = safe_text(detail) if isinstance(detail, str) else safe_repr(detail)
        results.append({"label": exp.label, "passed": credit > 0, "credit": credit, "detail": detail,
                        "file": exp.file, "line": exp.line})
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
        if not inspect.isawaitable(value):
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


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def coerce_artifacts(raw: Any) -> tuple[RunArtifacts | None, ErrorInfo | None, Sequence[str]]:
    """Accept `RunArtifacts` or a dict of its fields, made safe for the record (see `_safe`).

    Returns (artifacts, None, warnings), or (None, the error, []) for anything
    else, naming the type or the invalid field.
    """
    if isinstance(raw, dict):
        try:
            raw = RunArtifacts.model_validate(raw)
        except ValidationError as exc:
            message = f"the agent returned a dict that is not valid RunArtifacts: {_short(exc)}"
            return None, ErrorInfo(type="TypeError", message=message), []
    elif not isinstance(raw, RunArtifacts):
        shown = "None" if raw is None else safe_text(type(raw).__qualname__)
        message = f"the agent returned {shown}, not RunArtifacts (or a dict of its fields)"
        return None, ErrorInfo(type="TypeError", message=message), []
    try:
        artifacts, warnings = make_safe(raw)
    except Refused as exc:
        return None, ErrorInfo(type="ValueError", message=f"the agent returned invalid RunArtifacts: {exc}"), []
    return artifacts, None, warnings


async def _invoke(subject: Subject, case: CompiledCase, pool: DaemonPool, index: int = 0) -> tuple[Any, Any, float]:
    """Call the agent (or harness setup + run); returns (raw result, world, run seconds).

    A subject whose ``run`` takes a `CaseContext` gets one as its last argument;
    the calls it records become the run's tool calls (see `run._context`).
    """
    if subject.context:
        ctx = CaseContext.for_case(case, index)
        raw, world, latency = await _invoke_plain(subject, case, pool, (ctx,))
        return with_recorded_calls(raw, ctx), world, latency
    return await _invoke_plain(subject, case, pool, ())


async def _invoke_plain(
    subject: Subject, case: CompiledCase, pool: DaemonPool, extra: tuple[Any, ...]
) -> tuple[Any, Any, float]:
    if subject.setup is None:
        if subject.run_is_async:
            return await _timed_async(subject.run, case.prompt, *extra)
        raw, latency = await pool.submit(_timed, subject.run, case.prompt, *extra)
        if inspect.isawaitable(raw):  # tested here, not in _settle: most runs skip a coroutine
            raw, latency = await _settle(raw, latency)
        return raw, None, latency
    if not subject.run_is_async and not subject.setup_is_async:
        # One thread call for both, so a world tied to its thread (sqlite) still works.
        raw, world, latency = await pool.submit(_sync_harness, subject, case, *extra)
        if inspect.isawaitable(raw):
            raw, latency = await _settle(raw, latency)
        return raw, world, latency
    world = await _call(subject.setup, pool, case.setup)
    raw, _, latency = await _timed_async(_call, subject.run, pool, case.prompt, world, *extra)
    return raw, world, latency


async def _timed_async(fn: Callable[..., Awaitable[Any]], *args: Any) -> tuple[Any, None, float]:
    start = time.perf_counter()
    raw = await fn(*args)
    return raw, None, time.perf_counter() - start


def _timed(fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    raw = fn(*args)
    return raw, time.perf_counter() - start


def _sync_harness(subject: Subject, case: CompiledCase, *extra: Any) -> tuple[Any, Any, float]:
    assert subject.setup is not None
    world = subject.setup(case.setup)
    raw, latency = _timed(subject.run, case.prompt, world, *extra)
    return raw, world, latency


async def _settle(raw: Awaitable[Any], latency: float) -> tuple[Any, float]:
    # A sync callable may hand back an awaitable (a partial of an async function).
    start = time.perf_counter()
    raw = await raw
    return raw, latency + time.perf_counter() - start


async def _call(fn: Callable[..., Any], pool: DaemonPool, *args: Any) -> Any:
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    value = await pool.submit(fn, *args)
    return await value if inspect.isawaitable(value) else value


def _as_outcome(value: Any) -> Outcome:
    if isinstance(value, Outcome):
        return value
    if isinstance(value, bool):
        return Outcome(1.0 if value else 0.0)
    raise TypeError(f"an expectation returned {type(value).__name__}, not an Outcome")


def _expectation(exp: CompiledExpectation, credit: float, detail: str | None) -> dict[str, Any]:
    if detail is not None and not (type(detail) is str and (detail.isascii() or text_ok(detail))):
        detail = safe_text(detail) if isinstance(detail, str) else safe_repr(detail)
    return {"label": exp.label, "passed": credit > 0, "credit": credit, "detail": detail, "file": exp.file,
            "line": exp.line}


def _own_time(subject: Subject, start: float, stolen: float) -> float:
    """Seconds since ``start``, less other cases' scoring (``stolen``) for an agent that runs on the loop."""
    elapsed = time.perf_counter() - start
    return max(0.0, elapsed - stolen) if subject.run_is_async else elapsed


def _blocked_loop(timeout: float, elapsed: float) -> ErrorInfo:
    message = (
        f"the agent did not finish within {seconds_text(timeout)} (the case's timeout): it took "
        f"{elapsed:.2g}s and blocked the event loop past the timeout, so the run could not be "
        "cancelled in time (a blocking call inside `async def`?)"
    )
    return ErrorInfo(type="TimeoutError", message=message)


def _error_run(index: int, latency: float, error: ErrorInfo | None) -> RunResult:
    return RunResult(index=index, passed=False, score=0.0, latency_s=latency, error=error)


def _product(values: Any) -> float:
    result = 1.0
    for v in values:
        result *= v
    return result


def _short(exc: ValidationError) -> str:
    parts = [f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()[:3]]
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
