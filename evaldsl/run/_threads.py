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

Why results go through an inbox: handing a result back to the event loop
(`call_soon_threadsafe`) writes to the loop's self-pipe and costs the loop
one wake-up. With instant sync agents, jobs finish in bursts while the loop
is busy, so finished jobs are queued in a per-loop inbox and only the first
of a burst wakes the loop, which then settles them all. That is most of
the difference between a sync and an async agent's overhead per run.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any

from ._safe import exception_text

_Job = tuple[contextvars.Context, Callable[..., Any], tuple[Any, ...], asyncio.Future, "_Inbox"]


class DaemonPool:
    """Runs blocking callables on daemon threads and returns asyncio futures."""

    def __init__(self, name: str = "evaldsl-worker") -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._spawned = 0
        self._inboxes: dict[asyncio.AbstractEventLoop, _Inbox] = {}

    def submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future:
        """Run ``fn(*args)`` on a worker; the future resolves on the running loop."""
        loop = asyncio.get_running_loop()
        inbox = self._inboxes.get(loop)
        if inbox is None:
            inbox = self._inboxes[loop] = _Inbox(loop)
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
        self._jobs.put((contextvars.copy_context(), fn, args, future, inbox))
        return future

    @property
    def threads(self) -> int:
        """How many worker threads were started (for tests and diagnostics)."""
        return self._spawned

    def _work(self) -> None:
        while True:
            ctx, fn, args, future, inbox = self._jobs.get()
            value = None
            try:
                value = ctx.run(fn, *args)
            except BaseException as exc:  # handed to the awaiting coroutine
                inbox.post(future, None, exc)
            else:
                inbox.post(future, value, None)
            del ctx, fn, args, future, inbox, value  # hold nothing while idle
            with self._lock:
                self._idle += 1


class _Inbox:
    """Finished jobs waiting for one loop; the first of a burst wakes the loop, which settles all."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._results: collections.deque[tuple[asyncio.Future, Any, BaseException | None]] = collections.deque()
        self._wake_pending = False

    def post(self, future: asyncio.Future, value: Any, exc: BaseException | None) -> None:
        """Called on a worker thread."""
        if self._loop.is_closed():  # an abandoned job that outlived its run: nobody waits for it
            return
        self._results.append((future, value, exc))
        if self._wake_pending:
            return  # a drain is scheduled, and it runs after this append
        self._wake_pending = True
        try:
            self._loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the loop is closed: nobody waits for these results any more
            self._results.clear()

    def _drain(self) -> None:
        """Called on the loop: settle every finished job."""
        self._wake_pending = False  # before popping: a job posted from now on schedules a new drain
        results = self._results
        while results:
            future, value, exc = results.popleft()
            if future.done():  # abandoned after a timeout, or cancelled
                continue
            if isinstance(exc, StopIteration):  # futures refuse StopIteration
                future.set_exception(RuntimeError(f"StopIteration: {exception_text(exc)}"))
            elif exc is not None:
                future.set_exception(exc)
            else:
                future.set_result(value)
