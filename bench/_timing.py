"""Timing helper shared by the benchmarks: wall and CPU seconds of repeated calls."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def timings(repeats: int, fn: Callable[[], object]) -> tuple[list[float], list[float]]:
    """(wall, CPU) seconds of `repeats` calls, each list sorted; CPU counts every thread.

    CPU time is shown beside wall time because on a shared machine other
    processes stretch the wall clock but not the work this process did.
    The garbage collector is run before each call, so no call pays for the last.
    """
    walls, cpus = [], []
    for _ in range(repeats):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return sorted(walls), sorted(cpus)


def best_of(repeats: int, fn: Callable[[], object]) -> tuple[float, float]:
    """The best (wall, CPU) seconds of `repeats` calls."""
    walls, cpus = timings(repeats, fn)
    return walls[0], cpus[0]
