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

The scoring of what the agent returned is `_scoring.score_run` (its
module docstring tells how scoring shares the loop, and how judges run).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..compile._model import (
    CompiledCase,
    JudgeFn,
    PredicateFn,
)
from ..compile._regex import set_match_limit
from ._bounded import bounded
from ._context import CaseContext, with_recorded_calls
from ._control import LoopClock, forget_cancel, runner_cancelling
from ._protocols import Subject
from ._record import ErrorInfo, RunResult
from ._safe import (
    cancelled_info,
    error_info,
)
from ._scoring import _error_run, is_awaitable, score_run
from ._threads import DaemonPool, RunTimeout, seconds_text


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
    user: Any = None,
) -> RunResult:
    """Run ``case`` once against ``subject`` and score it; never raises but cancellation.

    ``user``: the simulated user's model, for a case with a `simulated user` (`run._conversation`).
    ``called``: a plain sync agent was already called for this run (by a lane, `_lanes`) and returned
    an awaitable: (that value, the call's seconds, `time.perf_counter()` when it began, ``clock.busy``
    then); it is awaited here for the time left, as if this run had called the agent.
    """
    clock = clock if clock is not None else LoopClock()
    if called is None and (case.world is not None or case.turns or case.simulated_user is not None):
        from ._conversation import execute_conversation  # v2: turns, a simulated user, a world

        return await execute_conversation(subject, case, index, pool=pool, judge=judge, predicates=predicates,
                                          clock=clock, user=user)
    timeout = case.settings.timeout_s
    set_match_limit(timeout)  # for the agent's mock-tool `when` patterns too (the context reaches its thread)
    start = time.perf_counter() if called is None else called[2]
    busy = clock.busy if called is None else called[3]
    on_loop = subject.run_is_async  # what a timeout stops runs on the loop (cancelled), else on a thread
    try:
        if called is not None or not (subject.run_is_async or subject.setup_is_async):
            # All sync: one job on a worker, timed by the pool (`_threads`), no timer and no coroutine
            # around it; a harness's setup and run in that one job (a world tied to its thread works).
            context = CaseContext.for_case(case, index) if subject.context else None
            extra = () if context is None else (context,)
            world = None
            if called is not None:  # a lane called the agent already
                raw, latency = called[0], called[1]
            elif subject.setup is None:
                raw, latency = await pool.submit_bounded(timeout, clock, _timed, subject.run, case.prompt, *extra)
            else:
                raw, world, latency = await pool.submit_bounded(timeout, clock, _sync_harness, subject, case, *extra)
            if is_awaitable(raw):  # a sync callable handing back an awaitable, for the time left
                on_loop = True
                left = timeout - (time.perf_counter() - start) + (clock.busy - busy)
                raw, latency = await bounded(_settle(raw, latency), max(0.0, left), clock=clock,
                                             settle=pool.settle)
            if context is not None:
                raw = with_recorded_calls(raw, context)
        else:
            if subject.setup is None and not subject.context:  # _invoke's work, fewer frames
                work = _timed_async(subject.run, case.prompt)
            else:
                work = _invoke(subject, case, pool, index)
            raw, world, latency = await bounded(work, timeout, clock=clock, settle=pool.settle)
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


def timeout_run(index: int, timeout: float, elapsed: float, *, on_loop: bool) -> RunResult:
    """The run of an agent that did not finish within ``timeout``: cancelled (``on_loop``) or abandoned."""
    how = "cancelled" if on_loop else "abandoned (a sync agent cannot be stopped)"
    message = f"the agent did not finish within {seconds_text(timeout)} (the case's timeout); the run was {how}"
    return _error_run(index, elapsed, ErrorInfo(type="TimeoutError", message=message, kind="timeout"))


async def _invoke(subject: Subject, case: CompiledCase, pool: DaemonPool, index: int = 0) -> tuple[Any, Any, float]:
    """Call an agent or harness with an async part (async `run`, or an async `setup`); returns (raw
    result, world, run seconds).

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
    """`_invoke` for a subject with an async part (an all-sync one is one job: `execute_run`)."""
    if subject.setup is None:  # an async agent
        return await _timed_async(subject.run, case.prompt, *extra)
    world = await _call(subject.setup, pool, case.setup)  # a harness: each sync part on a worker
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
    return await value if is_awaitable(value) else value


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
    return ErrorInfo(type="TimeoutError", message=message, kind="timeout")
