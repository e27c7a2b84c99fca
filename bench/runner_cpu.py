"""CPU a case of the runner alone (`schedule`, no record, no terminal), and of the compiled checks alone.

    PYTHONPATH=TREE:TREE/bench python bench/runner_cpu.py CASES REPEATS

The runner's own cost a case is the first figure less the second: what `_scheduler`, `_execute`,
`_threads` and `_stats` add around the checks, for an async and a sync agent that return at once.
"""

from __future__ import annotations

import asyncio
import collections
import sys
import time

from bench_run import ARTIFACTS, InstantAsync, InstantSync, suite_text

import evaldsl
from evaldsl.compile._model import EvalContext
from evaldsl.run._protocols import subject_for
from evaldsl.run._scheduler import schedule

N, REPEATS = int(sys.argv[1]), int(sys.argv[2])
cases = list(evaldsl.compile(suite_text(N), filename="o.evl").cases)
artifacts = ARTIFACTS


def checks_only() -> float:
    start = time.process_time()
    for case in cases:
        ctx = EvalContext(artifacts=artifacts, prompt=case.prompt, world=None, duration_s=0.0, judge=None,
                          predicates={})
        for exp in case.expectations:
            exp.check(ctx)
    return (time.process_time() - start) / N * 1e6


def runner(agent: object) -> float:
    subject = subject_for(agent)
    start, main = time.process_time(), time.thread_time()
    asyncio.run(schedule(subject, cases, on_result=lambda result: None, keep=False))
    figures["main thread " + agent.name].append((time.thread_time() - main) / N * 1e6)  # type: ignore[attr-defined]
    return (time.process_time() - start) / N * 1e6


figures: dict[str, list[float]] = collections.defaultdict(list)
for _ in range(REPEATS):
    figures["checks"].append(checks_only())
    figures["async"].append(runner(InstantAsync()))
    figures["sync"].append(runner(InstantSync()))
best = {k: min(v) for k, v in figures.items()}
print(f"  checks alone {best['checks']:6.1f} us a case; schedule: async {best['async']:6.1f} us "
      f"(runner {best['async'] - best['checks']:5.1f}), sync {best['sync']:6.1f} us "
      f"(runner {best['sync'] - best['checks']:5.1f}; main thread {best['main thread instant-sync']:5.1f})"
      f"   best of {REPEATS}")
