"""CPU a case of `evaldsl run --json` beyond compiling, for A/B pairs on a busy machine.

    PYTHONPATH=TREE:TREE/bench python bench/run_cli_cpu.py CASES REPEATS AGENTS
    # e.g. 10000 3 InstantAsync,InstantSync (the agents are alternated)

Compiles bench_run.py's CASES cases once (in a temporary folder), then runs the CLI's `run`
REPEATS times per agent in this process on the compiled suite (`plan._inputs.load_suites` returns it
again), and prints each run's CPU a case (`time.process_time`, all threads), the main thread's
share (`time.thread_time`), and the context switches a case (`getrusage`: all, voluntary), then
the best and median.
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import sys
import tempfile
import time
from typing import Any

from bench_run import suite_text

import evaldsl.plan._inputs as plan_inputs
from evaldsl.cli import main

N, REPEATS, AGENTS = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
cached: list[Any] = []
real_load = plan_inputs.load_suites


def load(*args: Any, **kwargs: Any) -> Any:
    if not cached:
        cached.append(real_load(*args, **kwargs))
    return cached[0]


plan_inputs.load_suites = load  # type: ignore[assignment]
rows: dict[str, list[tuple[float, float, float, float]]] = {agent: [] for agent in AGENTS}
with tempfile.TemporaryDirectory(prefix="evaldsl-runcpu-") as tmp:
    os.chdir(tmp)
    with open("cases.evl", "w", encoding="utf-8") as fh:
        fh.write(suite_text(N))
    for i in range(REPEATS + 1):
        for agent in AGENTS:  # alternating, so that each agent sees the same machine
            r0, c0, m0 = resource.getrusage(resource.RUSAGE_SELF), time.process_time(), time.thread_time()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                with contextlib.suppress(SystemExit):
                    main(["run", "--agent", f"_instant_agents:{agent}", "cases.evl", "--json", "rec.json", "-q"])
            c1, m1, r1 = time.process_time(), time.thread_time(), resource.getrusage(resource.RUSAGE_SELF)
            if i:  # the first round compiles the suite
                voluntary = r1.ru_nvcsw - r0.ru_nvcsw
                switches = voluntary + r1.ru_nivcsw - r0.ru_nivcsw
                rows[agent].append(((c1 - c0) / N * 1e6, (m1 - m0) / N * 1e6, switches / N, voluntary / N))
for agent, runs in rows.items():
    print("   ", " ".join(f"{r[0]:.0f}/{r[1]:.0f}/{r[2]:.2f}/{r[3]:.2f}" for r in runs),
          "(us CPU / us main thread / switches / voluntary, a case)")
    runs.sort()
    best, median = runs[0], runs[len(runs) // 2]
    print(f"  {agent:13} CPU best {best[0]:6.1f} us (main thread {best[1]:6.1f})  median {median[0]:6.1f} us"
          f"  ctx switches/case {min(r[2] for r in runs):.2f}-{max(r[2] for r in runs):.2f}  "
          f"load {os.getloadavg()[0]:.2f}")
