"""What one hop of an instant sync call to a thread and back costs on this machine, beside the peers.

    python bench/hop_floor.py [CALLS] [REPEATS]    # default 20000 3

Each way runs CALLS calls of a function that returns at once, from J coroutines on one event loop
(J = 1, 8, 64; 8 is evaldsl's default -j), and prints the CPU a call (`time.process_time`, all
threads, best of REPEATS) and the context switches a call (`getrusage`):

- direct: the call made on the loop, with an `await asyncio.sleep(0)` (an async agent's floor);
- to_thread: `asyncio.to_thread` (the standard library's way);
- executor: `loop.run_in_executor` on a `ThreadPoolExecutor` of J threads;
- evaldsl pool: `DaemonPool.submit`, what evaldsl runs a sync agent on;
- evaldsl pool, timed: `DaemonPool.submit_bounded`, with the run's deadline (what `execute_run` uses).

No evaldsl scoring, record or terminal is in these figures: they are the floor under a sync agent's
run overhead, the price of leaving the loop free while the agent blocks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import resource
import sys
import time
from collections.abc import Awaitable, Callable

from evaldsl.run._control import LoopClock
from evaldsl.run._threads import DaemonPool

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else 3


def instant(i: int) -> int:
    return i


def ways(j: int) -> dict[str, Callable[[], Callable[[int], Awaitable[int]]]]:
    def direct() -> Callable[[int], Awaitable[int]]:
        async def call(i: int) -> int:
            await asyncio.sleep(0)
            return instant(i)
        return call

    def to_thread() -> Callable[[int], Awaitable[int]]:
        return lambda i: asyncio.to_thread(instant, i)

    def executor() -> Callable[[int], Awaitable[int]]:
        pool = concurrent.futures.ThreadPoolExecutor(j)
        return lambda i: asyncio.get_running_loop().run_in_executor(pool, instant, i)

    def daemon() -> Callable[[int], Awaitable[int]]:
        pool = DaemonPool()
        return lambda i: pool.submit(instant, i)

    def timed() -> Callable[[int], Awaitable[int]]:
        pool, clock = DaemonPool(), LoopClock()
        return lambda i: pool.submit_bounded(60.0, clock, instant, i)

    return {"direct": direct, "to_thread": to_thread, "executor": executor, "evaldsl pool": daemon,
            "evaldsl pool, timed": timed}


async def drive(call: Callable[[int], Awaitable[int]], j: int) -> None:
    todo = iter(range(CALLS))

    async def worker() -> None:
        for i in todo:
            await call(i)

    await asyncio.gather(*(worker() for _ in range(j)))


def main() -> None:
    print(f"python {sys.version.split()[0]}, {CALLS} calls, best of {REPEATS}; us CPU a call (switches a call)")
    for j in (1, 8, 64):
        figures: dict[str, list[tuple[float, float]]] = {}
        for _ in range(REPEATS):  # the ways interleaved, so that each sees the same machine
            for name, make in ways(j).items():
                r0, c0 = resource.getrusage(resource.RUSAGE_SELF), time.process_time()
                asyncio.run(drive(make(), j))
                c1, r1 = time.process_time(), resource.getrusage(resource.RUSAGE_SELF)
                switches = r1.ru_nvcsw - r0.ru_nvcsw + r1.ru_nivcsw - r0.ru_nivcsw
                figures.setdefault(name, []).append(((c1 - c0) / CALLS * 1e6, switches / CALLS))
        print(f"  j={j:<3}" + "".join(f"  {name} {min(f)[0]:6.1f} ({min(f)[1]:.2f})" for name, f in figures.items()))


if __name__ == "__main__":
    main()
