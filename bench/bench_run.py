"""The runner's own cost: overhead per case, and how well concurrency hides waiting.

Two targets (issue 3):

- overhead: with an agent that returns at once, 10,000 cases of five
  expectations each cost under 100 microseconds a case beyond the agent's
  own time (scheduling, timeout guard, scoring, the report). Measured for
  an async agent and for a sync one (which runs on worker threads), at the
  default concurrency, best of 3; compiling the suite is not counted.
- concurrency: an async agent that sleeps 50 ms, 1,000 cases at concurrency
  100, finishes within 1.2 times the ideal 0.5 s plus start-up, where the
  start-up is the same run with an agent that does not sleep.

    python bench/bench_run.py
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable

from _timing import timings

import evaldsl
from evaldsl.artifacts import RunArtifacts, ToolCall

try:
    from evaldsl import run_suite
except ImportError:  # the runner's public name before it is re-exported
    from evaldsl.run._api import run_suite

CASE = '''
case "case {i}"
  prompt "What is {a} + 2?"
  expect called calculator with <op: add, a: {a}, b: 2>
  expect calls are calculator
  expect final number is {total}
  expect final text contains "answer" ignoring case
  expect no error
'''

ARTIFACTS = RunArtifacts(
    tool_calls=[ToolCall(name="calculator", args={"op": "add", "a": 1, "b": 2}, result="3")],
    final_text="The answer is 3.", tokens=20,
)


def suite_text(count: int, *, passing: bool = False) -> str:
    """`count` cases of five expectations each. On ARTIFACTS, every case but one fails two of them
    (`called ... with` and `final number`, each with its detail, and the summary lists them all);
    with ``passing``, every case asks for what ARTIFACTS holds (a: 1, 3) and passes."""
    return 'suite "Run overhead"\n' + "".join(
        CASE.format(i=i, a=1 if passing else i, total=3 if passing else i + 2) for i in range(count))


class InstantSync:
    name = "instant-sync"

    def run(self, instruction: str) -> RunArtifacts:
        return ARTIFACTS


class InstantAsync:
    name = "instant-async"

    async def run(self, instruction: str) -> RunArtifacts:
        return ARTIFACTS


class Sleeper:
    name = "sleeps-50ms"

    def __init__(self, seconds: float = 0.05) -> None:
        self.seconds = seconds

    async def run(self, instruction: str) -> RunArtifacts:
        await asyncio.sleep(self.seconds)
        return ARTIFACTS


def best_wall(repeats: int, fn: Callable[[], object]) -> float:
    return timings(repeats, fn)[0][0]


def overhead(cases: int, repeats: int) -> None:
    suite = evaldsl.compile(suite_text(cases), filename="overhead.evl")
    assert len(suite.cases) == cases and all(len(c.expectations) == 5 for c in suite.cases)
    report = run_suite(InstantAsync(), suite)
    assert report.summary.total == cases and report.summary.errors == 0, report.summary
    print(f"overhead: {cases} cases x 5 expectations, agent returns at once, {repeats} runs each")
    for agent in (InstantAsync(), InstantSync()):
        walls, cpus = timings(repeats, lambda agent=agent: run_suite(agent, suite))
        best, worst, cpu = (x / cases * 1e6 for x in (walls[0], walls[-1], cpus[0]))
        verdict = "met" if best < 100 else "MISSED"
        print(f"  {agent.name:<14} best {best:6.1f} us a case (target < 100 us: {verdict}), "
              f"worst {worst:6.1f}; best CPU {cpu:6.1f} us a case")


def concurrency(cases: int, jobs: int, sleep: float, repeats: int) -> None:
    suite = evaldsl.compile(suite_text(cases), filename="concurrency.evl")
    ideal = cases / jobs * sleep
    startup = best_wall(repeats, lambda: run_suite(Sleeper(0.0), suite, concurrency=jobs))
    wall = best_wall(repeats, lambda: run_suite(Sleeper(sleep), suite, concurrency=jobs))
    bound = 1.2 * ideal + startup
    print(f"concurrency: {cases} cases, async agent sleeping {sleep * 1000:.0f} ms, "
          f"concurrency {jobs}, best of {repeats}")
    print(f"  ideal {ideal:.3f} s; start-up (same run, no sleep) {startup:.3f} s; "
          f"measured {wall:.3f} s")
    print(f"  measured / ideal = {wall / ideal:.3f}; (measured - start-up) / ideal = "
          f"{(wall - startup) / ideal:.3f}")
    print(f"  target: measured <= 1.2 x ideal + start-up = {bound:.3f} s: "
          f"{'met' if wall <= bound else 'MISSED'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--concurrency-cases", type=int, default=1_000)
    parser.add_argument("-j", "--jobs", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--overhead-repeats", type=int, default=5)
    args = parser.parse_args()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}\n")
    overhead(args.cases, args.overhead_repeats)
    print()
    concurrency(args.concurrency_cases, args.jobs, 0.05, args.repeats)


if __name__ == "__main__":
    main()
