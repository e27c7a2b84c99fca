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
        release.set()
        inbox = pool._inboxes[loop]
        deadline = time.monotonic() + 10
        while len(inbox._results) < jobs and time.monotonic() < deadline:
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
