"""The runner's own work for N of bench_run.py's cases, for counting instructions (no record, no terminal).

Compiles 2,000 cases, freezes them for the collector, then schedules the first N against an agent that
returns at once (`keep=False`, results dropped): scheduling, the agent call, scoring and the case result.
Counted at two sizes, the difference is the runner's cost a case, deterministic (no timer decides
anything here, unlike a whole `evaldsl run`):

    for n in 1000 2000; do PYTHONHASHSEED=0 PYTHONPATH=TREE:TREE/bench valgrind --tool=cachegrind \\
      --cache-sim=no --cachegrind-out-file=/dev/null python bench/runner_instructions.py $n [sync]; done
"""

from __future__ import annotations

import asyncio
import gc
import sys

from _instant_agents import InstantAsync, InstantSync
from bench_run import suite_text

import evaldsl
from evaldsl.run._protocols import subject_for
from evaldsl.run._scheduler import schedule

n = int(sys.argv[1])
agent = InstantSync() if sys.argv[2:] == ["sync"] else InstantAsync()
cases = list(evaldsl.compile(suite_text(2000), filename="o.evl").cases)[:n]
gc.freeze()
asyncio.run(schedule(subject_for(agent), cases, keep=False, on_result=lambda r: None))
