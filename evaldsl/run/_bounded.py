"""`bounded`: await something for at most a case's timeout, in the current task.

Kept apart from `_execute` (which calls it for async agents, harnesses and
judges): how a timer cancels the run's own task without an extra task, how
an agent that answers at once sets no timer at all, and how the scoring
time other cases spent on the loop is given back before the timer decides.
A run whose agent (or harness) is all sync does not come here: its deadline
goes with its job to the worker pool (`_threads.DaemonPool.submit_bounded`).
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any

from ._control import LoopClock, withdraw_timer_cancel
from ._threads import RunTimeout


async def bounded(
    awaitable: Awaitable[Any], timeout: float, *, what: str = "agent", clock: LoopClock | None = None,
    settle: Callable[[], bool] | None = None,
) -> Any:
    """Await ``awaitable`` in the current task for at most ``timeout`` seconds, else raise `RunTimeout`.

    A timer cancels the current task, as `asyncio.timeout` does (which needs
    Python 3.11); the cancellation reaches whatever is awaited: an async
    agent's coroutine is cancelled, a thread's future is dropped (the thread
    is abandoned). No extra task is made, so a run that finishes at once
    costs no extra trips through the event loop, and a coroutine that
    returns without suspending (an agent that answers at once) arms no
    timer at all: its first step is taken before the timer is set, for the
    same deadline (it could not have fired during that step). An async agent that
    swallows `CancelledError` keeps its worker until it returns; its run is
    still reported as a timeout. When the timer is due, the time the loop
    spent scoring other cases meanwhile (``clock``) is added to it once more,
    so that other cases' scoring does not count against this timeout.
    ``settle`` (the pool's) is called before the timer decides: a sync
    agent's result that a worker is holding back (`_threads`) is settled
    first, and if it was this run's, the run ends before the timer fires.

    A `CancelledError` that neither this timer nor anybody else asked for
    (the agent raised it) propagates; `execute_run` records it.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    busy = clock.busy if clock is not None else 0.0
    step: Any = None
    if type(awaitable) is _Coroutine:  # its first step is taken here: an agent that returns at once needs no timer
        try:
            step = awaitable.send(None)  # type: ignore[union-attr]
        except StopIteration as stop:
            return stop.value  # (one that blocked the loop past its timeout is caught by `execute_run`)
        awaitable = _resume(awaitable, step)  # type: ignore[arg-type]
    task = asyncio.current_task()
    assert task is not None
    fired = False
    timer: asyncio.Handle

    def expire() -> None:
        nonlocal fired, busy, timer
        if clock is not None and clock.busy > busy:  # other cases' scoring held the loop: give the time back
            timer = loop.call_later(clock.busy - busy, again[0])
            busy = clock.busy
            return
        if settle is not None and settle():  # the runs just settled resume first: this one's, if among them
            timer = loop.call_soon(fire)  # type: ignore[assignment]
            return
        fire()

    def fire() -> None:
        nonlocal fired
        fired = True
        task.cancel()

    again = [expire]  # how `expire` re-arms itself: through a list emptied at the end, not its own name,
    # which would make it a cycle left for the collector every run

    timer = loop.call_at(deadline, expire)
    try:
        result = await awaitable
    except asyncio.CancelledError:
        if not fired or withdraw_timer_cancel(task):  # True: someone else's cancel request is still pending
            raise  # Ctrl-C, -x, or the agent's own CancelledError: not ours to swallow
        raise RunTimeout.after(timeout, what) from None
    finally:
        timer.cancel()
        again.clear()
    if fired:  # the agent swallowed our cancellation and returned late
        withdraw_timer_cancel(task)
        raise RunTimeout.after(timeout, what)
    return result


_Coroutine = types.CoroutineType


@types.coroutine
def _resume(coro: Coroutine[Any, Any, Any], step: Any) -> Generator[Any, Any, Any]:
    """Go on awaiting ``coro``, whose first step (which yielded ``step``) `bounded` took itself:
    what ``await coro`` does from there (sends, throws, close), without starting it again."""
    while True:
        thrown: BaseException | None = None
        try:
            sent = yield step
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # a cancellation, thrown in by the task: the coroutine's to handle
            thrown = exc
        try:
            step = coro.send(sent) if thrown is None else coro.throw(thrown)
        except StopIteration as stop:
            return stop.value
        finally:
            del thrown
