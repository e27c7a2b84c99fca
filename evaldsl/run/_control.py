"""What the runner tells its runs: the loop time it spent scoring, and the cancellations it asked for.

Kept apart from `_execute` so both the scheduler (which cancels on Ctrl-C
and `-x`) and each run (which must tell those cancellations from a
`CancelledError` an agent raised by itself) share one definition.
"""

from __future__ import annotations

import asyncio
import weakref


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

_WORKERS: weakref.WeakSet[asyncio.Task] = weakref.WeakSet()  # type: ignore[type-arg]
"""The scheduler's worker tasks: nobody but the runner (`stop_task`) may cancel them."""


def own_task(task: asyncio.Task) -> None:  # type: ignore[type-arg]
    """Mark ``task`` as a runner's worker: only `stop_task` cancels it; any other cancel() is a run's error."""
    _WORKERS.add(task)


def stop_task(task: asyncio.Task) -> None:  # type: ignore[type-arg]
    """Cancel ``task`` as the runner: its runs let the cancellation through instead of recording it."""
    _STOPPING.add(task)
    task.cancel()


def runner_cancelling() -> bool:
    """True when the current task's cancellation was asked for (by the runner, Ctrl-C, or a caller).

    A `CancelledError` raised by an agent, judge or predicate that nobody
    asked for is that run's error. On the scheduler's own workers (`own_task`)
    only the runner's marks count: an agent that cancels the task it runs in
    (``asyncio.current_task().cancel()``) raised its own cancellation, though
    Python counts it as a request. Elsewhere (`execute_run` awaited by a
    caller's task), Python 3.11+ counts requests (`Task.cancelling`), so a
    caller's cancel passes through.
    """
    task = asyncio.current_task()
    if task is None or task in _STOPPING:
        return True
    if task in _WORKERS:
        return False
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling is not None and cancelling() > 0)


def forget_cancel() -> None:
    """Withdraw the cancel requests of a `CancelledError` just recorded as a run's error (3.11+).

    An agent that cancelled its own worker task leaves the request counted;
    left there, the worker's next timeout would look like someone else's
    cancellation (`_execute.bounded`).
    """
    task = asyncio.current_task()
    uncancel = getattr(task, "uncancel", None)
    if task is None or uncancel is None or task in _STOPPING:
        return
    while task.cancelling() > 0:
        uncancel()


def stray_cancel() -> bool:
    """True when a worker holds a cancel request the runner did not make (an agent cancelled its task)."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return bool(task in _WORKERS and task not in _STOPPING and cancelling is not None and cancelling() > 0)


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
