"""A pool of daemon threads for sync agents, sync harnesses and judges.

Why not `loop.run_in_executor` with a `ThreadPoolExecutor`: its workers are
joined when the interpreter exits, and `asyncio.run` waits for the default
executor on shutdown. A sync agent that hangs forever would then hang
evaldsl forever, even after its run was reported as a timeout, and Ctrl-C
could not end the process. Here every worker is a daemon thread: a run that
times out is abandoned (Python cannot kill a thread), its worker stays busy
until the agent returns (or the process exits), and a fresh worker takes
the next job. The scheduler's concurrency bound limits how many jobs are
in flight, so the pool only grows past it by the number of hung runs.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any

_Job = tuple[contextvars.Context, Callable[..., Any], tuple[Any, ...], asyncio.Future, asyncio.AbstractEventLoop]


class DaemonPool:
    """Runs blocking callables on daemon threads and returns asyncio futures."""

    def __init__(self, name: str = "evaldsl-worker") -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._spawned = 0

    def submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future:
        """Run ``fn(*args)`` on a worker; the future resolves on the running loop."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._lock:
            if self._idle > 0:
                self._idle -= 1  # reserve an idle worker for this job
                spawn = False
            else:
                spawn = True
                self._spawned += 1
                number = self._spawned
        if spawn:
            thread = threading.Thread(target=self._work, name=f"{self._name}-{number}", daemon=True)
            thread.start()
        self._jobs.put((contextvars.copy_context(), fn, args, future, loop))
        return future

    @property
    def threads(self) -> int:
        """How many worker threads were started (for tests and diagnostics)."""
        return self._spawned

    def _work(self) -> None:
        while True:
            ctx, fn, args, future, loop = self._jobs.get()
            try:
                value = ctx.run(fn, *args)
            except BaseException as exc:  # handed to the awaiting coroutine
                _resolve(loop, future, None, exc)
            else:
                _resolve(loop, future, value, None)
            del ctx, fn, args, future, loop
            with self._lock:
                self._idle += 1


def _resolve(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future, value: Any, exc: BaseException | None
) -> None:
    def settle() -> None:
        if future.done():  # abandoned after a timeout, or cancelled
            return
        if isinstance(exc, StopIteration):  # futures refuse StopIteration
            future.set_exception(RuntimeError(f"StopIteration: {exc}"))
        elif exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(value)

    try:
        loop.call_soon_threadsafe(settle)
    except RuntimeError:  # the loop is closed: nobody waits for this result any more
        pass
