"""CPU a case of `run_suite` over bench_run.py's cases, for a given source tree: for A/B pairs on a busy machine.

    python bench/run_cpu.py CASES REPEATS TREE    # e.g. 10000 3 /path/to/checkout (put TREE on PYTHONPATH too)

Prints the best and median CPU seconds a case (`time.process_time`, all threads) and the
context switches a case (`getrusage`) for an async and a sync agent that return at once.
"""

from __future__ import annotations

import resource
import sys
import time

sys.path.insert(0, sys.argv[3] + "/bench")

from bench_run import InstantAsync, InstantSync, suite_text  # noqa: E402

import evaldsl  # noqa: E402
from evaldsl.run._api import run_suite  # noqa: E402

N = int(sys.argv[1])
suite = evaldsl.compile(suite_text(N), filename="o.evl")
run_suite(InstantAsync(), suite)
for agent in (InstantAsync(), InstantSync()):
    cpus, switches = [], []
    for _ in range(int(sys.argv[2])):
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        c = time.process_time()
        run_suite(agent, suite)
        cpus.append(time.process_time() - c)
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        switches.append((r1.ru_nvcsw - r0.ru_nvcsw + r1.ru_nivcsw - r0.ru_nivcsw) / N)
    cpus.sort()
    print(f"  {agent.name:14} CPU best {cpus[0] / N * 1e6:6.1f} us  median {cpus[len(cpus) // 2] / N * 1e6:6.1f} us"
          f"  ctx switches/case {min(switches):.2f}")
