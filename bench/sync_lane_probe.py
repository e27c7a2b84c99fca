"""A probe, not the runner: what a sync agent's run would cost if a worker thread ran whole cases.

    PYTHONPATH=.:bench python bench/sync_lane_probe.py [CASES] [REPEATS] [J] [POLL]   # default 10000 3 8 0.001

Beside `schedule` (the runner as it is, no record and no terminal) with an async and a sync agent
that return at once, a "lane": J worker threads (8 by default, the default -j) each take the next
case from one shared iterator, call the agent, make its artifacts safe, score the compiled checks
and build the case's result, and put it in a queue that the event loop empties every POLL seconds
(where the record and the terminal would take it). No timeouts, judges, regex time limits or -x: the probe
measures the floor of that design (bench/README.md, "The sync hop's floor"), CPU a case of all
threads, least of REPEATS, and context switches a case.
"""

from __future__ import annotations

import asyncio
import collections
import resource
import sys
import threading
import time
from typing import Any

from bench_run import InstantAsync, InstantSync, suite_text

import evaldsl
from evaldsl.compile._model import EvalContext
from evaldsl.run._execute import _timed
from evaldsl.run._protocols import subject_for
from evaldsl.run._scheduler import schedule
from evaldsl.run._scoring import _scored, coerce_artifacts
from evaldsl.run._stats import case_result

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
J = int(sys.argv[3]) if len(sys.argv) > 3 else 8
POLL = float(sys.argv[4]) if len(sys.argv) > 4 else 0.001
cases = list(evaldsl.compile(suite_text(N), filename="o.evl").cases)


def one_case(agent: Any, case: Any) -> Any:
    raw, latency = _timed(agent.run, case.prompt)
    artifacts, _problem, warnings = coerce_artifacts(raw)
    assert artifacts is not None
    ctx = EvalContext(artifacts=artifacts, prompt=case.prompt, world=None, duration_s=latency, judge=None,
                      predicates={})
    results = []
    for exp in case.expectations:
        outcome = exp.check(ctx)
        results.append({"label": exp.label, "passed": outcome.credit > 0, "credit": outcome.credit,
                        "detail": outcome.detail, "file": exp.file, "line": exp.line})
    return case_result(case, [_scored(0, latency, artifacts, warnings, results, None)])


async def lane(agent: Any) -> int:
    todo, lock = iter(cases), threading.Lock()
    done: collections.deque[Any] = collections.deque()
    left = [J]

    def work() -> None:
        while True:
            with lock:
                case = next(todo, None)
            if case is None:
                with lock:
                    left[0] -= 1
                return
            done.append(one_case(agent, case))

    for _ in range(J):
        threading.Thread(target=work, daemon=True).start()
    taken = 0
    while left[0] or done:
        while done:
            done.popleft()  # the record and the terminal would take it here
            taken += 1
        await asyncio.sleep(POLL)
    return taken


def measure(run: Any) -> tuple[float, float]:
    r0, c0 = resource.getrusage(resource.RUSAGE_SELF), time.process_time()
    run()
    c1, r1 = time.process_time(), resource.getrusage(resource.RUSAGE_SELF)
    return (c1 - c0) / N * 1e6, (r1.ru_nvcsw - r0.ru_nvcsw + r1.ru_nivcsw - r0.ru_nivcsw) / N


ways = {
    "schedule, async": lambda: asyncio.run(schedule(subject_for(InstantAsync()), cases, keep=False,
                                                    on_result=lambda r: None)),
    "schedule, sync": lambda: asyncio.run(schedule(subject_for(InstantSync()), cases, keep=False,
                                                   on_result=lambda r: None)),
    "lane, sync": lambda: asyncio.run(lane(InstantSync())),
}
for run in ways.values():
    run()  # warm-up
figures: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
for _ in range(REPEATS):
    for name, run in ways.items():  # interleaved
        figures[name].append(measure(run))
print(f"{N} cases x 5 checks, -j {J}, looks every {POLL:g} s, least of {REPEATS}: "
      "us CPU a case (context switches a case)")
for name, runs in figures.items():
    print(f"  {name:16} {min(runs)[0]:6.1f} ({min(runs)[1]:.2f})")
