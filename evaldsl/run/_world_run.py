"""One run of a case whose suite has a `world` (LANGUAGE.md 14): instance, answers, state, close.

Each run gets a fresh instance of the world class (``Shop(setup)`` when the
case has a `setup`, ``Shop()`` otherwise), made on the thread that runs
the agent, so a world holding a thread-bound resource (an sqlite
connection) works with a sync agent as with an async one. The run's
`CaseContext` answers through a `ToolAnswerer` holding that instance, so the
model loop and a Python agent's ``ctx.call`` reach the same methods. After
the agent returns, the world's state (``state()`` or its public fields, as
JSON) is read for `expect world`; then ``close()`` is called, whatever
happened: after an error too, and after a timeout (a sync agent's thread
is abandoned, so its world is closed from a thread of its own, at once).

Every failure stays in the run: a constructor that raises makes that run an
error whose message names the class, the exception and the setup value; a
``state()`` or ``close()`` that raises likewise (kind ``world_error``).

A case of several turns is the conversation runtime's (`convrun`); this
module runs the single-prompt case, the first and the most common.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..compile._model import CompiledCase, JudgeFn, PredicateFn
from ..compile._world import NO_SETUP, aclose_world, astate_of, close_world, state_of
from ._bounded import bounded
from ._context import CaseContext, with_recorded_calls
from ._control import LoopClock, forget_cancel, runner_cancelling
from ._protocols import Subject
from ._record import RunResult
from ._safe import cancelled_info, error_info
from ._scoring import _error_run, is_awaitable, score_run
from ._threads import DaemonPool, RunTimeout


class WorldError(Exception):
    """The world itself failed (its constructor, ``state()`` or ``close()``): the run is an error."""

    error_kind = "world_error"


class RunWorld:
    """One run's world instance: made, read, closed once (from whichever thread gets there first)."""

    def __init__(self, case: CompiledCase) -> None:
        self.case = case
        self.world = case.world
        self.instance: Any = None
        self._closed = False
        self._lock = threading.Lock()
        self.close_error: WorldError | None = None

    def open(self) -> Any:
        """The run's instance (`WorldError` when the constructor raises)."""
        setup = NO_SETUP if self.case.setup is None else self.case.setup
        try:
            self.instance = self.world.new(setup)
        except Exception as exc:
            shown = "" if setup is NO_SETUP else f" (setup: {_shown(setup)})"
            called = f"{self.world.name}()" if setup is NO_SETUP else f"{self.world.name}(setup)"
            raise WorldError(f"the world {called} raised {type(exc).__name__}: {exc}{shown}") from exc
        return self.instance

    def state(self) -> Any:
        try:
            return state_of(self.instance)
        except Exception as exc:
            raise WorldError(f"reading the world's state raised {type(exc).__name__}: {exc}") from exc

    async def astate(self) -> Any:
        try:
            return await astate_of(self.instance)
        except Exception as exc:
            raise WorldError(f"reading the world's state raised {type(exc).__name__}: {exc}") from exc

    def _claim(self) -> bool:
        with self._lock:
            if self._closed or self.instance is None:
                return False
            self._closed = True
            return True

    def close(self) -> None:
        """Call ``close()`` once; what it raises is kept in `close_error`."""
        if self._claim():
            try:
                close_world(self.instance)
            except Exception as exc:
                self.close_error = WorldError(f"the world's close() raised {type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        if self._claim():
            try:
                await aclose_world(self.instance)
            except Exception as exc:
                self.close_error = WorldError(f"the world's close() raised {type(exc).__name__}: {exc}")


def _shown(value: Any) -> str:
    import json

    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 500 else text[:500] + "..."


async def execute_world_run(subject: Subject, case: CompiledCase, index: int, *, pool: DaemonPool,
                            judge: JudgeFn | None, predicates: Mapping[str, PredicateFn] | None,
                            clock: LoopClock) -> RunResult:
    """`execute_run` for a case with a world: never raises but cancellation (see the module docstring)."""
    world = RunWorld(case)
    timeout = case.settings.timeout_s
    start, busy = time.perf_counter(), clock.busy
    sync = not (subject.run_is_async or subject.setup_is_async)
    try:
        if sync:
            raw, seen, state, latency = await pool.submit_bounded(timeout, clock, _sync_job, subject, case, index,
                                                                  world)
        else:
            raw, seen, state, latency = await bounded(_async_job(subject, case, index, world, pool), timeout,
                                                      clock=clock, settle=pool.settle)
    except RunTimeout:
        _close_later(world, sync)
        from ._execute import timeout_run

        return timeout_run(index, timeout, time.perf_counter() - start, on_loop=not sync)
    except asyncio.CancelledError as exc:
        if runner_cancelling():
            _close_later(world, sync)
            raise
        forget_cancel()
        await _close_now(world, sync)
        return _error_run(index, time.perf_counter() - start, cancelled_info(exc, "the agent"))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        await _close_now(world, sync)
        return _error_run(index, time.perf_counter() - start, error_info(exc))
    if world.close_error is not None:
        return _error_run(index, latency, error_info(world.close_error))
    scored = time.perf_counter()
    if not sync:
        latency = max(0.0, latency - (clock.busy - busy))
    return await score_run(subject, case, index, raw, seen, latency, pool=pool, judge=judge,
                           predicates=predicates, clock=clock, began=scored, world_state=state)


def _sync_job(subject: Subject, case: CompiledCase, index: int, world: RunWorld) -> tuple[Any, Any, Any, float]:
    """A sync agent's whole run on one worker thread: the world made, the agent run, the state read, closed."""
    instance = world.open()
    try:
        ctx = CaseContext.for_case(case, index, world=instance) if subject.context else None
        extra = () if ctx is None else (ctx,)
        seen = instance
        began = time.perf_counter()
        if subject.setup is None:
            raw = subject.run(case.prompt, *extra)
        else:  # a harness: its own world for its run and predicates, the suite's world for the tools
            seen = subject.setup(case.setup)
            began = time.perf_counter()
            raw = subject.run(case.prompt, seen, *extra)
        if is_awaitable(raw):  # a sync callable handing back an awaitable: run it here, on a loop of its own
            raw = asyncio.run(_awaited(raw))
        latency = time.perf_counter() - began
        if ctx is not None:
            raw = with_recorded_calls(raw, ctx)
        return raw, seen, world.state(), latency
    finally:
        world.close()


async def _async_job(subject: Subject, case: CompiledCase, index: int, world: RunWorld,
                     pool: DaemonPool) -> tuple[Any, Any, Any, float]:
    """An agent with an async part: the world made on the loop, the agent awaited, the state read, closed."""
    from ._execute import _call

    instance = world.open()
    try:
        ctx = CaseContext.for_case(case, index, world=instance) if subject.context else None
        extra = () if ctx is None else (ctx,)
        seen = instance
        if subject.setup is not None:
            seen = await _call(subject.setup, pool, case.setup)
            extra = (seen, *extra)
        began = time.perf_counter()
        raw = await _call(subject.run, pool, case.prompt, *extra)
        latency = time.perf_counter() - began
        if ctx is not None:
            raw = with_recorded_calls(raw, ctx)
        return raw, seen, await world.astate(), latency
    finally:
        await world.aclose()


async def _awaited(value: Any) -> Any:
    return await value


def _close_later(world: RunWorld, sync: bool) -> None:
    """After a timeout or Ctrl-C: close the world from a thread of its own, not waiting for it."""
    threading.Thread(target=world.close, name="evaldsl-world-close", daemon=True).start()


async def _close_now(world: RunWorld, sync: bool) -> None:
    if sync:
        world.close()
    else:
        await world.aclose()

