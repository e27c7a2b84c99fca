"""The daemon pool behind sync agents: results, exceptions, bursts, and jobs that outlive their loop."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from evaldsl.run._threads import DaemonPool


def test_values_and_exceptions_reach_their_futures() -> None:
    def job(i: int) -> int:
        if i % 3 == 1:
            raise ValueError(f"bad {i}")
        if i % 3 == 2:
            raise StopIteration(i)  # a future refuses StopIteration: it becomes a RuntimeError
        return i * 10

    async def main() -> list[Any]:
        pool = DaemonPool()
        return await asyncio.gather(*(pool.submit(job, i) for i in range(30)), return_exceptions=True)

    results = asyncio.run(main())
    for i, result in enumerate(results):
        if i % 3 == 0:
            assert result == i * 10
        elif i % 3 == 1:
            assert isinstance(result, ValueError) and str(result) == f"bad {i}"
        else:
            assert isinstance(result, RuntimeError) and str(result) == f"StopIteration: {i}"


def test_a_burst_of_finished_jobs_wakes_the_loop_once() -> None:
    release = threading.Event()
    jobs = 12

    async def main() -> tuple[list[Any], int]:
        loop = asyncio.get_running_loop()
        wakes = []
        real = loop.call_soon_threadsafe

        def counting(*args: Any) -> Any:
            wakes.append(1)
            return real(*args)

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
        pool = DaemonPool()
        futures = [pool.submit(lambda i=i: (release.wait(10), i)[1]) for i in range(jobs)]
        await asyncio.sleep(0)  # the jobs are handed to the workers once the submitting callbacks have run
        release.set()
        inbox = pool._inboxes[loop]
        deadline = time.monotonic() + 10
        while len(inbox.results) < jobs and time.monotonic() < deadline:
            time.sleep(0.001)  # noqa: ASYNC251 - keep the loop busy while every job finishes
        values = await asyncio.gather(*futures)
        return values, len(wakes)

    values, wakes = asyncio.run(main())
    assert values == list(range(jobs))
    assert wakes == 1


def test_a_job_that_outlives_its_loop_is_dropped_quietly() -> None:
    release = threading.Event()
    errors: list[BaseException] = []
    pool = DaemonPool()

    def slow() -> str:
        release.wait(10)
        return "late"

    async def main() -> None:
        future = pool.submit(slow)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(future, 0.01)

    asyncio.run(main())
    hook = threading.excepthook
    threading.excepthook = lambda args: errors.append(args.exc_value)  # type: ignore[assignment]
    try:
        release.set()  # the job finishes after asyncio.run closed its loop
        deadline = time.monotonic() + 10
        while pool._idle == 0 and time.monotonic() < deadline:
            time.sleep(0.001)
    finally:
        threading.excepthook = hook
    assert pool._idle == 1 and errors == []  # the worker went back to idle without raising


def test_a_result_held_behind_a_slow_next_job_is_still_settled() -> None:
    """A worker holds back the loop's wake while it takes the next queued job; if that job is slow, the
    loop's own look into the inbox settles the result (else the second job would wait for its cap)."""
    first_done = threading.Event()

    def slow() -> str:
        return "released" if first_done.wait(10) else "stuck"

    async def main() -> tuple[str, str]:
        pool = DaemonPool()
        first, second = pool.submit(lambda: "first"), pool.submit(slow)  # one burst: one worker takes both
        value = await first
        first_done.set()
        return value, await second

    assert asyncio.run(main()) == ("first", "released")


def test_a_job_queued_behind_a_slow_one_gets_a_worker_of_its_own() -> None:
    """Slow sync agents still run side by side: a queued job nobody takes is given another worker."""
    partner = threading.Event()

    def waits() -> str:
        return "together" if partner.wait(10) else "alone"

    def sets() -> str:
        partner.set()
        return "set"

    async def main() -> list[str]:
        pool = DaemonPool()
        return list(await asyncio.gather(pool.submit(waits), pool.submit(sets)))

    assert asyncio.run(main()) == ["together", "set"]


def test_a_timeout_settles_a_held_result_before_deciding(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop's looks are turned off here, so only the timeout's own `settle` can save the first run:
    its agent returned at once, its worker went on to a job that blocks, holding the wake."""
    from evaldsl.run import _threads
    from evaldsl.run._bounded import bounded
    from evaldsl.run._threads import RunTimeout

    monkeypatch.setattr(_threads, "_POLL_S", (3600.0, 3600.0))
    release = threading.Event()

    async def main(settle: bool) -> str:
        pool = DaemonPool()
        first = pool.submit(lambda: "returned")
        pool.submit(lambda: release.wait(10))
        try:
            return await bounded(first, 1.0, settle=pool.settle if settle else None)
        except RunTimeout:
            return "timed out"
        finally:
            release.set()

    assert asyncio.run(main(settle=True)) == "returned"
    release.clear()
    assert asyncio.run(main(settle=False)) == "timed out"  # what the settle saves it from


def test_a_bounded_job_past_its_deadline_ends_with_run_timeout_and_is_forgotten() -> None:
    from evaldsl.run._control import LoopClock
    from evaldsl.run._threads import RunTimeout

    release = threading.Event()

    async def main() -> tuple[str, str, int]:
        pool = DaemonPool()
        clock = LoopClock()
        hung = pool.submit_bounded(0.05, clock, lambda: release.wait(10))
        quick = pool.submit_bounded(5.0, clock, lambda: "quick")
        try:
            await hung
            outcome = "returned"
        except RunTimeout as exc:
            outcome = str(exc)
        answer = await quick
        inbox = pool._inboxes[asyncio.get_running_loop()]
        release.set()
        return outcome, answer, len(inbox.deadlines)

    outcome, answer, kept = asyncio.run(main())
    assert outcome == "the agent did not finish within 0.05s" and answer == "quick"
    assert kept == 0  # neither the timed-out job nor the finished one is remembered


def test_a_bounded_job_back_in_time_is_settled_before_its_deadline_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first job returns at once, but its worker goes on to a job that blocks, holding the wake: the
    loop's first look comes after the deadline, and settles the held result before it times anything out."""
    from evaldsl.run import _threads
    from evaldsl.run._control import LoopClock

    monkeypatch.setattr(_threads, "_POLL_S", (0.3, 0.3))
    release = threading.Event()

    async def main() -> str:
        pool = DaemonPool()
        first = pool.submit_bounded(0.05, LoopClock(), lambda: "returned")
        pool.submit(lambda: release.wait(10))
        try:
            return await first
        finally:
            release.set()

    assert asyncio.run(main()) == "returned"


def test_a_bounded_job_gets_the_loops_scoring_time_back() -> None:
    """Seconds the loop spends scoring other cases while a job is out (the `LoopClock`) extend its deadline."""
    from evaldsl.run._control import LoopClock
    from evaldsl.run._threads import RunTimeout

    async def main() -> str:
        pool = DaemonPool()
        clock = LoopClock()
        job = pool.submit_bounded(0.2, clock, lambda: (time.sleep(0.4), "late but given back")[1])
        await asyncio.sleep(0.01)
        time.sleep(0.3)  # noqa: ASYNC251 - scoring that holds the loop, counted as such
        clock.busy += 0.3
        try:
            return await job
        except RunTimeout:
            return "timed out"

    assert asyncio.run(main()) == "late but given back"


def test_a_job_cancelled_before_it_is_handed_over_leaves_its_burst_its_deadlines() -> None:
    """A cancelled run's job is not started; the other jobs handed over with it still time out."""
    from evaldsl.run._control import LoopClock
    from evaldsl.run._threads import RunTimeout

    release = threading.Event()

    async def main() -> str:
        pool = DaemonPool()
        clock = LoopClock()
        hung = pool.submit_bounded(0.05, clock, lambda: release.wait(3) and "returned late")
        pool.submit_bounded(5.0, clock, lambda: "never started").cancel()  # before the burst is handed over
        try:
            return str(await hung)
        except RunTimeout:
            return "timed out"
        finally:
            release.set()

    assert asyncio.run(main()) == "timed out"
