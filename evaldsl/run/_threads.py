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

The hop to a thread and back is most of what a sync agent costs beyond an
async one, and what it costs is mostly context switches: a worker woken
while the loop is busy waits for the interpreter lock and takes it at the
loop's next system call, and each hand-back that writes to the loop's
self-pipe wakes the loop for one result. So jobs and results move in
bursts, each crossing once:

- Jobs are handed to the workers when the loop has run the callbacks that
  submitted them (one `call_soon` a burst), not one by one, so a worker
  wakes when the loop is about to wait, not in the middle of its scoring.
  A job whose run was cancelled meanwhile (`-x`, a timeout) is dropped then.
- One worker is woken for a burst. A worker that takes a job while more are
  queued wakes one more (unless one is already awake and looking), so slow
  agents still run side by side, and a burst of instant ones is run by one
  thread while the next one is still waking.
- A finished job's result goes to a per-loop inbox. The worker wakes the
  loop for it unless it is about to take the next queued job of the same
  loop: then the wake is held, and paid with the last result of the burst
  (or when the worker finds the queue empty or moves to another loop's job).
  While it has jobs out, the loop also looks into the inbox on a short timer
  (`_POLL_S`), so a result held back by a next job that turns out slow is
  settled within milliseconds; and a run's timeout settles the inbox before
  it decides the agent did not finish (`settle`; its latency was measured
  on the worker).

The job of a run that is all sync (an agent, one that takes the case
context, a harness's setup and run) carries its run's deadline
(`submit_bounded`): the inbox keeps it and its looks end the job's future
with `RunTimeout` when it is due (after settling what came back), so a run
that is back at once costs no timer, no closure and no coroutine around the
future; `_bounded.bounded` is for work on the loop (async agents and
harnesses, a coroutine a sync agent returns, judges).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import threading
from collections.abc import Callable
from typing import Any

from ._control import LoopClock
from ._safe import exception_text


class RunTimeout(TimeoutError):
    """A run (or a judge) did not finish within the case's timeout."""

    @classmethod
    def after(cls, timeout: float, what: str = "agent") -> RunTimeout:
        return cls(f"the {what} did not finish within {seconds_text(timeout)}")


def seconds_text(value: float) -> str:
    """A timeout as messages show it: ``0.05s``, ``30s``."""
    return f"{value:g}s"


_Job = tuple[contextvars.Context, Callable[..., Any], tuple[Any, ...], asyncio.Future, "_Inbox"]

_POLL_S = (0.001, 0.016)
"""How often a loop with jobs out looks for held results: from the first figure, doubling while none is found."""


class DaemonPool:
    """Runs blocking callables on daemon threads and returns asyncio futures."""

    def __init__(self, name: str = "evaldsl-worker") -> None:
        self._name = name
        self._jobs: collections.deque[_Job] = collections.deque()  # handed to the workers, taken in order
        self._lock = threading.Lock()
        self._parked: list[threading.Lock] = []  # a sleeping worker's gate (held locked); releasing it wakes it
        self._searching = 0  # workers woken (or started) that have not yet looked at the queue
        self._spawned = 0
        self._taken = 0  # jobs taken by workers so far; `_spread` tells busy workers from slow ones by it
        self._last_look = (0, False)  # (jobs taken, any queued) at the last look
        self._inboxes: dict[asyncio.AbstractEventLoop, _Inbox] = {}

    def submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future:
        """Run ``fn(*args)`` on a worker; the future resolves on the running loop."""
        return self._submit(asyncio.get_running_loop(), fn, args)[0]

    def submit_bounded(self, timeout: float, clock: LoopClock, fn: Callable[..., Any], *args: Any) -> asyncio.Future:
        """`submit`, with the job's future ended by `RunTimeout` once ``timeout`` seconds have passed
        (plus the scoring time ``clock`` counts meanwhile, as `_bounded.bounded` gives) and it is still out.

        The deadline is checked at the loop's looks at its jobs, each scheduled no later than the
        earliest deadline; results already back are settled first, so a run that finished in time
        is never timed out by a late look."""
        loop = asyncio.get_running_loop()
        future, inbox = self._submit(loop, fn, args)
        inbox.deadlines[future] = (loop.time() + timeout, clock.busy, clock, timeout)
        return future

    def _submit(self, loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], args: tuple[Any, ...]
                ) -> tuple[asyncio.Future, _Inbox]:
        inbox = self._inboxes.get(loop)
        if inbox is None:
            inbox = self._inboxes[loop] = _Inbox(loop, self)
        future = loop.create_future()
        inbox.outgoing.append((contextvars.copy_context(), fn, args, future, inbox))
        if not inbox.release_due:
            inbox.release_due = True
            loop.call_soon(inbox.release)
        return future, inbox

    def settle(self) -> bool:
        """Settle the running loop's finished jobs now (a timeout asks before deciding); True when any was."""
        inbox = self._inboxes.get(asyncio.get_running_loop())
        if inbox is None or not inbox.results:
            return False
        inbox.drain()
        return True

    @property
    def threads(self) -> int:
        """How many worker threads were started (for tests and diagnostics)."""
        return self._spawned

    @property
    def _idle(self) -> int:
        """How many workers are parked, waiting for a job."""
        return len(self._parked)

    def _put(self, jobs: list[_Job]) -> None:
        """Queue ``jobs`` (on the loop) and wake a worker unless one is woken and not yet looking."""
        with self._lock:
            self._jobs.extend(jobs)
            if self._searching:
                return
            self._searching += 1
            gate = self._parked.pop() if self._parked else None
        self._wake(gate)

    def _wake(self, gate: threading.Lock | None) -> None:
        """Wake a parked worker by its gate, or start one (it has been counted as searching)."""
        if gate is not None:
            gate.release()
            return
        with self._lock:
            self._spawned += 1
            number = self._spawned
        gate = threading.Lock()
        gate.acquire()
        threading.Thread(target=self._work, args=(gate,), name=f"{self._name}-{number}", daemon=True).start()

    def _spread(self) -> bool:
        """On a loop's timer: when no job was taken since the last look (the awake workers are busy with
        slow ones), each job still queued gets a worker; True if any did."""
        with self._lock:
            stuck = self._taken == self._last_look[0] and self._last_look[1]
            self._last_look = (self._taken, bool(self._jobs))
            want = len(self._jobs) - self._searching
            if want <= 0 or not stuck:
                return False
            self._searching += want
            gates = [self._parked.pop() for _ in range(min(want, len(self._parked)))]
        for gate in gates:
            gate.release()
        for _ in range(want - len(gates)):
            self._wake(None)
        return True

    def _work(self, gate: threading.Lock) -> None:
        jobs, lock = self._jobs, self._lock
        owed: _Inbox | None = None  # an inbox whose wake this worker is holding back
        counted = True  # woken (or started) as searching: counted by the one who woke it
        while True:
            with lock:
                if counted:
                    self._searching -= 1
                    counted = False
                if jobs:
                    job: _Job | None = jobs.popleft()
                    self._taken += 1
                else:
                    job = None
                    self._parked.append(gate)
            if owed is not None and (job is None or job[4] is not owed):
                owed.wake()  # the held wake is paid before parking or moving to another loop's job
                owed = None
            if job is None:
                gate.acquire()  # parked until a loop releases the gate, counting this one as searching
                counted = True
                continue
            ctx, fn, args, future, inbox = job
            del job
            error: BaseException | None = None
            try:
                value = ctx.run(fn, *args)
            except BaseException as exc:  # handed to the awaiting coroutine
                value, error = None, exc
            try:
                following = jobs[0][4] is inbox if jobs else False
            except IndexError:  # another worker took it meanwhile
                following = False
            inbox.post(future, value, error, hold=following)
            owed = inbox if following else None
            del ctx, fn, args, future, inbox, value, error  # hold nothing while idle


class _Inbox:
    """One loop's side of the pool: jobs submitted and not yet handed over, and finished jobs to settle."""

    def __init__(self, loop: asyncio.AbstractEventLoop, pool: DaemonPool) -> None:
        self._loop = loop
        self._pool = pool
        self.outgoing: list[_Job] = []
        self.release_due = False
        self.results: collections.deque[tuple[asyncio.Future, Any, BaseException | None]] = collections.deque()
        self._wake_pending = False
        self._out = 0  # jobs handed over and not yet settled
        self._poll: asyncio.TimerHandle | None = None
        self._period = _POLL_S[0]
        self.deadlines: dict[asyncio.Future, tuple[float, float, LoopClock, float]] = {}
        """The out jobs' deadlines (`DaemonPool.submit_bounded`): (loop time, the clock's busy seconds at
        submission, the clock, the timeout)."""

    def release(self) -> None:
        """Called on the loop once the callbacks that submitted jobs have run: hand them to the workers."""
        self.release_due = False
        jobs = [job for job in self.outgoing if not job[3].done()]  # a cancelled run's job is not started
        if len(jobs) < len(self.outgoing) and self.deadlines:  # the dropped ones' deadlines go with them
            for job in self.outgoing:
                if job[3].done():
                    self.deadlines.pop(job[3], None)
        self.outgoing.clear()
        if not jobs:
            return
        self._out += len(jobs)
        self._pool._put(jobs)
        self._period = _POLL_S[0]
        if self._poll is None:
            self._poll = self._loop.call_later(self._period, self._look)

    def post(self, future: asyncio.Future, value: Any, exc: BaseException | None, *, hold: bool = False) -> None:
        """Called on a worker thread; ``hold``: this worker takes another job of this loop at once."""
        if self._loop.is_closed():  # an abandoned job that outlived its run: nobody waits for it
            return
        self.results.append((future, value, exc))
        if not hold:
            self.wake()

    def wake(self) -> None:
        """Called on a worker thread: have the loop settle the results (once for all that are waiting)."""
        if self._wake_pending or not self.results:
            return  # a drain is scheduled, and it runs after this append
        self._wake_pending = True
        try:
            self._loop.call_soon_threadsafe(self.drain)
        except RuntimeError:  # the loop is closed: nobody waits for these results any more
            self.results.clear()

    def _look(self) -> None:
        """On the loop, on a timer while jobs are out: settle results whose wake a worker is holding,
        and give jobs still queued behind busy workers a worker each."""
        self._poll = None
        spread = self._pool._spread()
        if self.results and not self._wake_pending:
            self.drain()
            self._period = _POLL_S[0]
        elif spread:
            self._period = _POLL_S[0]
        else:
            self._period = min(self._period * 2, _POLL_S[1])
        wait = self._expire() if self.deadlines else self._period
        if self._out > 0:
            self._poll = self._loop.call_later(min(wait, self._period), self._look)

    def _expire(self) -> float:
        """End the jobs past their deadline with `RunTimeout` (what came back is settled first); the
        seconds until the next deadline."""
        now = self._loop.time()
        due = []
        wait = _POLL_S[1]
        for future, (deadline, busy, clock, _) in self.deadlines.items():
            left = deadline + (clock.busy - busy) - now  # other cases' scoring meanwhile is given back
            if left <= 0:
                due.append(future)
            else:
                wait = min(wait, left)
        if due:
            if self.results:
                self.drain()  # a result back in time is taken, not timed out
            for future in due:
                entry = self.deadlines.pop(future, None)
                if entry is not None and not future.done():
                    future.set_exception(RunTimeout.after(entry[3]))
        return wait

    def drain(self) -> None:
        """Called on the loop: settle every finished job."""
        self._wake_pending = False  # before popping: a job posted from now on schedules a new drain
        results, deadlines = self.results, self.deadlines
        while results:
            future, value, exc = results.popleft()
            self._out -= 1
            if deadlines:
                deadlines.pop(future, None)
            if future.done():  # abandoned after a timeout, or cancelled
                continue
            if isinstance(exc, StopIteration):  # futures refuse StopIteration
                future.set_exception(RuntimeError(f"StopIteration: {exception_text(exc)}"))
            elif exc is not None:
                future.set_exception(exc)
            else:
                future.set_result(value)
