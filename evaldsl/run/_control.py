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


def stop_task(task: asyncio.Task) -> None:  # type: ignore[type-arg]
    """Cancel ``task`` as the runner: its runs let the cancellation through instead of recording it."""
    _STOPPING.add(task)
    task.cancel()


def runner_cancelling() -> bool:
    """True when the current task's cancellation was asked for (by the runner, Ctrl-C, or a caller).

    A `CancelledError` raised by an agent, judge or predicate that nobody
    asked for is that run's error. Python 3.11+ counts requests
    (`Task.cancelling`); on 3.10 the runner marks the tasks it cancels.
    """
    task = asyncio.current_task()
    if task is None or task in _STOPPING:
        return True
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling is not None and cancelling() > 0)
