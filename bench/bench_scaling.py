"""Size-scaling probes: does `evaldsl check` stay linear in the size of its input?

Issue 11 found inputs on which `check` was quadratic: a case followed by many
blank lines or comment lines (the continuation-line look-ahead rescanned every
following line at every line break), and a file with syntax errors (error
recovery parsed the whole file again once per error). Each probe writes one
input at 1x, 2x and 4x its base size and times a whole `evaldsl check`
process on it (wall and the child's CPU seconds, best of `--repeats`). A
linear probe doubles its time when the size doubles; the script prints the
ratio of each step and the ratio of the `errors` probe to the `plain` one
(recovery from 20 errors should cost about what a valid file of the same
size costs).

    python bench/bench_scaling.py                  # base sizes below, best of 2
    python bench/bench_scaling.py --scale 0.25     # quicker, smaller inputs
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HEAD = 'suite "scaling"\n\n'
CASE = 'case "c{i}"\n  prompt "What is {i} plus 1?"\n  expect final number is {j}\n  expect no error\n\n'


def blank_lines(n: int) -> str:
    return HEAD + CASE.format(i=0, j=1) + "\n" * n + CASE.format(i=1, j=2)


def comment_lines(n: int) -> str:
    return HEAD + CASE.format(i=0, j=1) + "  # a note\n" * n + CASE.format(i=1, j=2)


def plain_cases(n: int) -> str:
    return HEAD + "".join(CASE.format(i=i, j=i + 1) for i in range(n))


def many_errors(n: int) -> str:
    """`plain_cases(n)` with 20 of its cases broken, spread evenly (20 is the error cap)."""
    every = max(1, n // 20)
    parts = [HEAD]
    for i in range(n):
        case = CASE.format(i=i, j=i + 1)
        if i % every == every // 2:
            case = case.replace("final number is", "final numbr is")
        parts.append(case)
    return "".join(parts)


PROBES: dict[str, tuple[Callable[[int], str], int, str]] = {
    "blank": (blank_lines, 16_000, "blank lines after a case"),
    "comments": (comment_lines, 16_000, "comment lines after a case"),
    "plain": (plain_cases, 20_000, "valid cases"),
    "errors": (many_errors, 20_000, "cases, 20 of them with a syntax error"),
}


def time_check(path: Path, repeats: int) -> tuple[float, float, int]:
    """Best (wall, CPU) seconds of `python -m evaldsl check path`, and its exit code."""
    best_wall = best_cpu = float("inf")
    code = 0
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "evaldsl", "check", "--error-format", "short", str(path)],
                              capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_wall, best_cpu, code = min(best_wall, wall), min(best_cpu, cpu), proc.returncode
    return best_wall, best_cpu, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every base size by this")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--probe", choices=sorted(PROBES), action="append", help="run only these probes")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}; best of {args.repeats}; {os.cpu_count()} CPUs, "
          f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'probe':<10} {'size':>8} {'MB':>6} {'wall s':>8} {'CPU s':>8} {'x prev':>7} exit")
    cpu_at: dict[tuple[str, int], float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.probe or list(PROBES):
            make, base, what = PROBES[name]
            prev = None
            for factor in (1, 2, 4):
                n = max(1, int(base * args.scale)) * factor
                path = Path(tmp) / f"{name}_{factor}.evl"
                path.write_text(make(n), encoding="utf-8")
                wall, cpu, code = time_check(path, args.repeats)
                cpu_at[(name, factor)] = cpu
                step = f"{cpu / prev:6.2f}x" if prev else "       "
                print(f"{name:<10} {n:>8} {path.stat().st_size / 1e6:>6.2f} {wall:>8.2f} {cpu:>8.2f} {step} {code}"
                      f"   ({what})" if factor == 1 else
                      f"{name:<10} {n:>8} {path.stat().st_size / 1e6:>6.2f} {wall:>8.2f} {cpu:>8.2f} {step} {code}")
                prev = cpu
    for factor in (1, 2, 4):
        if ("errors", factor) in cpu_at and ("plain", factor) in cpu_at:
            ratio = cpu_at[("errors", factor)] / cpu_at[("plain", factor)]
            print(f"errors / plain at {factor}x: {ratio:.2f} (CPU)")
    print("linear: each 'x prev' near 2.0 (start-up, ~0.3 s, makes small sizes grow by less)")


if __name__ == "__main__":
    main()
