"""What the runner tells its runs: the loop time it spent scoring, and the cancellations it asked for.

Kept apart from `_execute` so both the scheduler (which cancels on Ctrl-C
and `-x`) and each run (which must tell those cancellations from a
`CancelledError` an agent raised by itself) share one definition.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any


class LoopClock:
    """Seconds the event loop spent scoring (busy, not waiting): time no agent on the loop could use.

    Scoring runs on the loop, so a case whose scoring takes 0.5 s holds up
    every other run for 0.5 s. Each timeout (`bounded`) is extended by the
    scoring time that passed while it ran, and an async agent's latency
    leaves it out: a case's timeout covers its own agent, not other cases'
    scoring (docs/running.md, "Timeouts").
    """

    __slots__ = ("busy",)

    def __init__(self) -> None:
        self.busy = 0.0


_STOPPING: weakref.WeakSet[asyncio.Task] = weakref.WeakSet()  # type: ignore[type-arg]
"""Tasks the runner itself cancels (Ctrl-C, -x); see `runner_cancelling`."""


class WorkerTask(asyncio.Task):  # type: ignore[type-arg]
    """A scheduler worker, which tells the runner's cancellations from an agent's.

    The runner's are marked (`stop_task`: Ctrl-C, -x) or made from outside
    any task: a timeout's timer, or the loop cancelling what is left when it
    shuts down after a `KeyboardInterrupt`. Those are counted in
    ``external``. A `CancelledError` an agent raises, or one that follows a
    cancel() its own code made from inside a task
    (``asyncio.current_task().cancel()``), is that run's error.
    """

    external = 0

    def cancel(self, *args: Any, **kwargs: Any) -> bool:
        if asyncio.current_task(self.get_loop()) is None:
            self.external += 1
        return super().cancel(*args, **kwargs)


def stop_task(task: asyncio.Task) -> None:  # type: ignore[type-arg]
    """Cancel ``task`` as the runner: its runs let the cancellation through instead of recording it."""
    _STOPPING.add(task)
    task.cancel()


def runner_cancelling() -> bool:
    """True when the current task's cancellation was asked for (by the runner, Ctrl-C, or a caller).

    A `CancelledError` raised by an agent, judge or predicate that nobody
    asked for is that run's error. On the scheduler's own workers
    (`WorkerTask`), only the runner's marks and cancels made from outside any
    task count: a cancel() an agent made from inside its task is its own,
    though Python counts it as a request. Elsewhere (`execute_run` awaited by a
    caller's task), Python 3.11+ counts requests (`Task.cancelling`), so a
    caller's cancel passes through.
    """
    task = asyncio.current_task()
    if task is None or task in _STOPPING:
        return True
    if isinstance(task, WorkerTask):
        return task.external > 0
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling is not None and cancelling() > 0)


def forget_cancel() -> None:
    """Withdraw the cancel requests of a `CancelledError` just recorded as a run's error (3.11+).

    An agent that cancelled its own worker task leaves the request counted;
    left there, the worker's next timeout would look like someone else's
    cancellation (`_execute.bounded`).
    """
    task = asyncio.current_task()
    if task is None or task in _STOPPING:
        return
    uncancel, cancelling = getattr(task, "uncancel", None), getattr(task, "cancelling", None)
    while uncancel is not None and cancelling is not None and cancelling() > 0:
        uncancel()


def stray_cancel() -> bool:
    """True when a worker holds a cancel request the runner did not make (an agent cancelled its task)."""
    task = asyncio.current_task()
    if not isinstance(task, WorkerTask) or task in _STOPPING or task.external > 0:
        return False
    cancelling = getattr(task, "cancelling", None)  # 3.11+; on 3.10 a stray request cannot be seen
    return cancelling is not None and cancelling() > 0


def withdraw_timer_cancel(task: asyncio.Task) -> bool:  # type: ignore[type-arg]
    """Withdraw the cancel request of a timeout's timer (`_execute.bounded`) that fired on ``task``.

    Returns True when another request is still pending: the runner's (Ctrl-C,
    -x) or, off the scheduler's workers, anyone's (Python 3.11+ counts them).
    """
    uncancel = getattr(task, "uncancel", None)
    left = uncancel() if uncancel is not None else 0
    if isinstance(task, WorkerTask):
        task.external = max(0, task.external - 1)
        return task in _STOPPING or task.external > 0
    return left > 0


async def withdraw_stray_cancel() -> None:
    """Take delivery of a stray cancel request (see `stray_cancel`) and withdraw it, so the next run is not hit.

    A cancel() that was never delivered (the agent returned right after it)
    would otherwise raise in whatever the worker awaits next: the next case.
    """
    try:
        await asyncio.sleep(0)
    except asyncio.CancelledError:
        if runner_cancelling():
            raise
    forget_cancel()
