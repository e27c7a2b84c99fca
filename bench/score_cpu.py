"""CPU a case of scoring alone: every expectation's `check(ctx)` of bench_run.py's cases, A/B between trees.

    python bench/score_cpu.py [--cases N] [--rounds R] [--pairs P] BASE_TREE TREE   # the driver
    PYTHONPATH=TREE:TREE/bench python bench/score_cpu.py --inner [--cases N] [--rounds R]

The driver runs `--inner` for the base tree and the other tree in turn, each in its own
subprocess (so each imports its own evaldsl), P times alternating, and prints each run's figures.
`--inner` compiles `suite_text(N)` once (not timed), builds one EvalContext as the runner does
(evaldsl/run/_scoring.py), and times calling every check of every case on it: best and median of R
rounds, microseconds a case (`time.process_time`), then the same split by the five expectations.
Most cases fail two checks (`called ... with` and `final number is`), so this is the failing path's cost.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import time


def inner(cases_n: int, rounds: int) -> None:
    """Time the checks of this process's evaldsl (whatever PYTHONPATH puts first)."""
    from bench_run import ARTIFACTS, suite_text

    import evaldsl
    from evaldsl.compile._model import EvalContext

    cases = list(evaldsl.compile(suite_text(cases_n), filename="o.evl").cases)
    ctx = EvalContext(artifacts=ARTIFACTS, prompt="", world=None, duration_s=0.0, judge=None, predicates={})
    checks = [exp.check for case in cases for exp in case.expectations]
    width = len(cases[0].expectations)
    columns = [checks[k::width] for k in range(width)]
    labels = [exp.label.split(" ")[0:3] for exp in cases[0].expectations]

    def timed(group: list) -> float:
        gc.collect()
        start = time.process_time()
        for check in group:
            check(ctx)
        return (time.process_time() - start) / cases_n * 1e6

    whole = [timed(checks) for _ in range(rounds)]
    split = [[timed(column) for _ in range(rounds)] for column in columns]
    print(f"  {evaldsl.__file__.rsplit('/evaldsl/', 1)[0]}: all five {min(whole):6.2f} us a case best, "
          f"{statistics.median(whole):6.2f} median ({rounds} rounds, {cases_n} cases)")
    for words, times in zip(labels, split):
        print(f"      {' '.join(words):28} {min(times):6.2f} best {statistics.median(times):6.2f} median")


def driver(base: str, tree: str, cases_n: int, rounds: int, pairs: int) -> None:
    """Alternate the base tree and the tree `pairs` times, each in a fresh interpreter."""
    for _ in range(pairs):
        for root in (base, tree):
            env = dict(os.environ, PYTHONPATH=f"{root}:{root}/bench")
            subprocess.run([sys.executable, os.path.abspath(__file__), "--inner", "--cases", str(cases_n),
                            "--rounds", str(rounds)], env=env, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inner", action="store_true")
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("trees", nargs="*")
    args = parser.parse_args()
    if args.inner:
        inner(args.cases, args.rounds)
    elif len(args.trees) == 2:
        driver(args.trees[0], args.trees[1], args.cases, args.rounds, args.pairs)
    else:
        parser.error("give --inner, or BASE_TREE TREE")


if __name__ == "__main__":
    main()
