"""Lanes: a plain sync agent's runs, called back to back on a few threads, scored on the loop in batches.

Why: a sync agent runs on a worker thread, and handing each run to a thread
and its result back wakes a thread both ways. With at most ``-j`` runs in
flight, the scheduler's workers hand over bursts of at most ``-j`` runs, so
an agent that answers at once pays those wake-ups every few runs: on a
small virtual machine they were most of what a sync run cost beyond an
async one. A lane is a thread that takes the next unit from a queue the
loop keeps filled well ahead (units not yet started are not in flight),
calls the agent, puts what it returned in a second queue, and takes the
next unit at once; the loop looks at the lanes on a short timer, scores
what came back (`_scoring.score_run`, the same scoring as every run),
refills the queue, and wakes a lane only when it had found the queue empty.
A lane that has put a result in asks the loop to look at once (never more
than one such request pending), so what came back is written to the
record within moments and a short run does not wait for the timer.

What stays as it was:

- Concurrency: a lane runs one agent call at a time and there are never
  more live lanes than ``-j``. There is one lane to start with; a lane whose
  call is still the one it had at the previous look is busy with a slow
  agent, and gets a sibling (up to ``-j``), so slow agents still run side by
  side.
- Timeouts: a lane notes when its call began and the loop's scoring time
  then (`LoopClock`); a look that finds the call past the case's timeout,
  plus the scoring time since, gives the run the same `TimeoutError` as
  `execute_run` and abandons the lane (Python cannot stop a thread): what
  the agent returns later is dropped, and a fresh lane takes its place.
  What came back is settled before any deadline is looked at.
- Everything else a run can do goes through the scheduler's own workers:
  the lanes stop taking units (handing the ones not started back, in
  order) when a case needs a judge (judging waits on other threads) or when
  an agent returned an awaitable (it is awaited on the loop, for the time
  left, as `execute_run` does). `-x`, other executors (Ray), harnesses and
  agents that take a case context never use lanes.
- An agent's exception is its run's error; a `KeyboardInterrupt` it raises
  stops the run as at Ctrl-C, after the runs that came back before it are
  scored. On cancellation (Ctrl-C) the lanes stop, and the runs that had
  already come back are scored and reported first.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..compile._model import CompiledCase, JudgeFn, PredicateFn
from ..compile._regex import set_match_limit
from ._control import LoopClock
from ._execute import _timed, timeout_run
from ._protocols import Subject
from ._record import RunResult
from ._safe import cancelled_info, error_info
from ._scoring import _error_run, is_awaitable, score_run
from ._threads import DaemonPool

Unit = tuple[Any, int, int]
"""The scheduler's unit: (its case's slot, the case's index, the run's index); the slot has ``.case``."""

AHEAD = 512
"""Units the loop keeps queued for the lanes (refilled when fewer than `LOW` are left)."""
LOW = 128
_LOOK_S = (0.001, 0.016)
"""How often the loop looks at the lanes: from the first figure, doubling while it finds nothing new."""


def lanes_fit(subject: Subject) -> bool:
    """Whether ``subject``'s runs can go through lanes: a plain sync agent (no harness, no case context)."""
    return subject.setup is None and not subject.context and not subject.run_is_async


def needs_loop(case: CompiledCase) -> bool:
    """A case the lanes leave to the scheduler's workers (its scoring waits on a judge; a world or a
    conversation (v2) is run by `execute_run`)."""
    return any(e.needs_judge for e in case.expectations) or case.world is not None or case.is_conversation


class _Lane:
    __slots__ = ("current", "began", "busy", "abandoned", "seen")

    def __init__(self) -> None:
        self.current: Unit | None = None
        self.began = 0.0
        self.busy = 0.0
        self.abandoned = False
        self.seen: Unit | None = None  # `current` at the loop's last look


class Lanes:
    """One schedule's lanes (see the module docstring); `run` returns the units left for the workers."""

    def __init__(self, subject: Subject, todo: Iterator[Unit], record: Callable[[Any, int, int, RunResult], None],
                 *, limit: int, pool: DaemonPool, judge: JudgeFn | None,
                 predicates: Mapping[str, PredicateFn] | None, clock: LoopClock) -> None:
        self._subject, self._todo, self._record, self._limit = subject, todo, record, limit
        self._pool, self._judge, self._predicates, self._clock = pool, judge, predicates, clock
        self._cond = threading.Condition(threading.Lock())
        self._queue: collections.deque[Unit] = collections.deque()
        self._done: collections.deque[tuple[Unit, Any, float, BaseException | None, float, float]] = (
            collections.deque())
        """What came back: (unit, what the agent returned, its latency, its exception, when the call began,
        the clock's busy seconds then)."""
        self._lanes: list[_Lane] = []
        self._parked = 0
        self._closing = False  # no lane takes another unit
        self._spent = False  # the scheduler's iterator has no more units
        self._left: list[Any] = []  # units handed back for the workers, in order (see `run`)
        self._context = contextvars.copy_context()
        self._started = 0  # lanes started, for their threads' names
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._poked = False  # a lane asked the loop to look now (`_poke`), and it has not yet

    async def run(self) -> list[Any]:
        """Run units until the scheduler's iterator is spent or a unit needs the workers; the units left
        for them, in order: (slot, i, r), or (slot, i, r, called) for a run whose agent returned an
        awaitable (`execute_run`'s ``called``)."""
        self._loop = asyncio.get_running_loop()
        try:
            self._refill()
            period = _LOOK_S[0]
            while True:
                found = self._settle()
                found = self._expire() or found
                if self._closing:
                    if not self._done and not any(lane.current for lane in self._lanes):
                        return self._left
                else:
                    self._refill()
                    if self._spent and not self._queue and not any(lane.current for lane in self._lanes):
                        self._close(hand_back=False)
                        continue
                period = _LOOK_S[0] if found else min(period * 2, _LOOK_S[1])
                await self._pause(period)
        except BaseException:
            self._close(hand_back=False)
            with contextlib.suppress(KeyboardInterrupt):
                self._settle(final=True)  # what came back is kept (Ctrl-C): those runs finished
            raise

    # ---- the loop's side -----------------------------------------------------------------------------

    async def _pause(self, seconds: float) -> None:
        """Wait until the next look: ``seconds``, or less when a lane found the queue empty (`_poke`)."""
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = loop.call_later(seconds, _wake, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None

    def _poke(self) -> None:
        """On the loop, asked by a lane that has nothing left to take: look now."""
        self._poked = False
        if self._waiter is not None:
            _wake(self._waiter)

    def _refill(self) -> None:
        """Keep `AHEAD` units queued (when fewer than `LOW` are); a unit the lanes cannot run closes them."""
        if self._spent or self._closing or len(self._queue) >= LOW:
            return
        taken: list[Unit] = []
        stop: Unit | None = None
        for unit in self._todo:
            if needs_loop(unit[0].case):
                stop = unit
                break
            taken.append(unit)
            if len(taken) + len(self._queue) >= AHEAD:
                break
        else:
            self._spent = True
        with self._cond:
            self._queue.extend(taken)
            if self._parked and taken:
                self._cond.notify(min(self._parked, len(taken)))
        if not self._lanes and taken:
            self._spawn()
        if stop is not None:
            self._close(hand_back=True)
            self._left.append(stop)

    def _close(self, *, hand_back: bool) -> None:
        """No lane takes another unit; the queued ones go back to the workers (``hand_back``) or are dropped."""
        with self._cond:
            self._closing = True
            if hand_back:
                self._left.extend(self._queue)
            self._queue.clear()
            self._cond.notify_all()

    def _settle(self, *, final: bool = False) -> bool:
        """Score every run that came back; True when any had. A `KeyboardInterrupt` an agent raised is
        raised here, after the runs before it are recorded."""
        done = self._done
        if not done:
            return False
        interrupt: BaseException | None = None
        while done:
            unit, raw, latency, exc, began, busy = done.popleft()
            slot, i, r = unit
            if exc is not None:
                if isinstance(exc, KeyboardInterrupt):
                    interrupt = interrupt or exc
                    self._close(hand_back=False)
                    continue
                info = cancelled_info(exc, "the agent") if isinstance(exc, asyncio.CancelledError) else error_info(exc)
                self._record(slot, i, r, _error_run(r, latency, info))
                continue
            if is_awaitable(raw):  # awaited by a worker, on the loop, for the run's time left
                if final:
                    _close_awaitable(raw)
                    continue
                self._left.insert(0, (slot, i, r, (raw, latency, began, busy)))
                self._close(hand_back=True)
                continue
            try:
                run = self._score(slot.case, r, raw, latency)
            except (asyncio.CancelledError, KeyboardInterrupt):
                raise
            except BaseException as error:  # a runner bug costs one run, never the lanes and their cases
                run = RunResult(index=r, passed=False, score=0.0, latency_s=latency, error=error_info(error))
            self._record(slot, i, r, run)
        if interrupt is not None:
            raise interrupt
        return True

    def _score(self, case: CompiledCase, r: int, raw: Any, latency: float) -> RunResult:
        set_match_limit(case.settings.timeout_s)  # the case's regex time limit, as `execute_run` sets it
        coro = score_run(self._subject, case, r, raw, None, latency, pool=self._pool, judge=self._judge,
                         predicates=self._predicates, clock=self._clock, began=time.perf_counter())
        try:
            coro.send(None)  # no judge here (`needs_loop`): scoring does not suspend
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        coro.close()  # pragma: no cover
        raise RuntimeError("a lane's run suspended while it was scored")  # pragma: no cover

    def _expire(self) -> bool:
        """Time out the calls past their deadline and give a lane stuck on a slow call a sibling."""
        now = time.perf_counter()
        busy = self._clock.busy
        expired: list[tuple[Unit, float, float]] = []  # (unit, its timeout, seconds since its call began)
        stuck = 0
        with self._cond:
            for lane in self._lanes:
                unit = lane.current
                if unit is None:
                    lane.seen = None
                    continue
                timeout = unit[0].case.settings.timeout_s
                if now - lane.began > timeout + (busy - lane.busy):
                    lane.abandoned = True
                    expired.append((unit, timeout, now - lane.began))
                elif lane.seen is unit:
                    stuck += 1
                lane.seen = unit
            if expired:
                self._lanes = [lane for lane in self._lanes if not lane.abandoned]
        for (slot, i, r), timeout, elapsed in expired:  # recorded outside the lock: recording writes the journal
            self._record(slot, i, r, timeout_run(r, timeout, elapsed, on_loop=False))
        want = len(expired) + stuck if self._queue and not self._closing else 0
        for _ in range(min(want, self._limit - len(self._lanes))):
            self._spawn()
        return bool(expired or want)

    def _spawn(self) -> None:
        lane = _Lane()
        self._lanes.append(lane)
        self._started += 1
        threading.Thread(target=self._work, args=(lane,), name=f"evaldsl-lane-{self._started}", daemon=True).start()

    # ---- a lane's thread -----------------------------------------------------------------------------

    def _work(self, lane: _Lane) -> None:
        cond, queue, done, clock = self._cond, self._queue, self._done, self._clock
        run = self._subject.run
        while True:
            with cond:
                while not queue and not self._closing:
                    self._parked += 1
                    cond.wait()
                    self._parked -= 1
                if self._closing or lane.abandoned:
                    return
                unit = queue.popleft()
                lane.current, lane.busy = unit, clock.busy
                lane.began = began = time.perf_counter()
            case = unit[0].case
            try:
                raw, latency = self._context.copy().run(_call, run, case.prompt, case.settings.timeout_s)
                exc = None
            except BaseException as error:  # the run's error (a KeyboardInterrupt stops the run, on the loop)
                raw, latency, exc = None, time.perf_counter() - began, error
            with cond:
                if lane.abandoned:  # timed out meanwhile: nobody waits for this result
                    return
                lane.current = None
                done.append((unit, raw, latency, exc, began, lane.busy))
                if isinstance(exc, KeyboardInterrupt) or is_awaitable(raw):
                    self._closing = True  # the loop decides what comes next: take no more units
                poke = not self._poked and self._loop is not None
                if poke:  # the loop looks now rather than at its timer: what came back is recorded
                    self._poked = True  # within moments (a kill -9 loses little), one wake while it is due
            if poke:
                try:
                    self._loop.call_soon_threadsafe(self._poke)  # type: ignore[union-attr]
                except RuntimeError:  # the loop is closed: the run is over
                    return
            del unit, case, raw, exc


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _call(run: Callable[[str], Any], prompt: str, timeout: float) -> tuple[Any, float]:
    set_match_limit(timeout)  # for the agent's mock-tool `when` patterns (regex time limits)
    return _timed(run, prompt)


def _close_awaitable(value: Any) -> None:
    close = getattr(value, "close", None)
    if callable(close):
        close()

