"""Scoring cost of `called [S1, S2, S3, S4] in any order` beside `called S1 then S2 then S3 then S4` (issue 26).

1,000 cases, each with one four-step expectation, scored over each case's
own calls (six calls: the four the steps ask for, in the steps' order, and
two others between them). The same suite is written twice, with `then`
chains and with `in any order` lists; only scoring is timed (the suites are
compiled first), best of 5, CPU seconds. Target: `in any order` costs at
most 2x the `then` chains.

Three more rows, for information (no target): the list written in the
reverse order of the calls (the greedy first pass still succeeds, scanning
further), a run where a step has no call of its own (the full matching runs,
then the failure detail is worded), and `calls are [...] in any order`.

    python bench/bench_any_order.py [--cases N] [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable

import evaldsl
from evaldsl import RunArtifacts, ToolCall
from evaldsl.compile._model import EvalContext

HEAD = '''tool search
  param q: string
tool fetch
  param url: string
tool summarize
  param text?: string
tool send_email
  param to: string
  param body?: string
tool log
'''
STEPS = ['search with <q: "topic {i}">', 'fetch with <url: starts with "https://">', "summarize",
         'send_email with <to: "user{i}@example.com">']


def calls_for(i: int, *, drop_last: bool = False) -> list[ToolCall]:
    calls = [ToolCall(name="search", args={"q": f"topic {i}"}), ToolCall(name="log", args={}),
             ToolCall(name="fetch", args={"url": "https://example.com/a"}), ToolCall(name="summarize", args="{}"),
             ToolCall(name="log", args={}), ToolCall(name="send_email", args={"to": f"user{i}@example.com"})]
    return calls[:-1] if drop_last else calls


def suite(n: int, form: str) -> evaldsl.CompiledSuite:
    lines = [HEAD]
    for i in range(n):
        steps = [s.format(i=i) for s in STEPS]
        if form == "then":
            expect = "called " + " then ".join(steps)
        elif form == "any order":
            expect = f"called [{', '.join(steps)}] in any order"
        elif form == "reversed":
            expect = f"called [{', '.join(reversed(steps))}] in any order"
        else:  # calls are, with the two `log` calls listed too
            expect = f"calls are [{', '.join(steps + ['log', 'log'])}] in any order"
        lines.append(f'case "c{i}"\n  prompt "p{i}"\n  expect {expect}\n')
    return evaldsl.compile("".join(lines))


def score(compiled: evaldsl.CompiledSuite, contexts: list[EvalContext], want: bool) -> Callable[[], float]:
    checks = [case.expectations[0] for case in compiled.cases]

    def run() -> float:
        start = time.process_time()
        for check, ctx in zip(checks, contexts, strict=True):
            if check(ctx).passed is not want:
                raise SystemExit("a check gave the wrong verdict: the benchmark is broken")
        return time.process_time() - start

    return run


def best(run: Callable[[], float], repeats: int) -> float:
    return min(run() for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = args.cases
    passing = [EvalContext(artifacts=RunArtifacts(tool_calls=calls_for(i))) for i in range(n)]
    failing = [EvalContext(artifacts=RunArtifacts(tool_calls=calls_for(i, drop_last=True))) for i in range(n)]
    rows = [
        ("then chains (passing)", score(suite(n, "then"), passing, True)),
        ("in any order (passing)", score(suite(n, "any order"), passing, True)),
        ("in any order, list reversed", score(suite(n, "reversed"), passing, True)),
        ("in any order, a step unmatched", score(suite(n, "any order"), failing, False)),
        ("calls are [...] in any order", score(suite(n, "calls are"), passing, True)),
    ]
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}; {n} cases, best of {args.repeats}, CPU seconds")
    figures = {}
    for label, run in rows:
        run()  # warm-up
        seconds = best(run, args.repeats)
        figures[label] = seconds
        print(f"{label:<34} {seconds:8.4f} s  {seconds / n * 1e6:7.1f} µs a case")
    ratio = figures["in any order (passing)"] / figures["then chains (passing)"]
    verdict = "meets" if ratio <= 2.0 else "MISSES"
    print(f"\nin any order / then chains = {ratio:.2f}x: {verdict} the target (<= 2x)")


if __name__ == "__main__":
    main()
