"""Parse and parse+compile throughput, beside PyYAML's pure-Python loader.

The target (issue 2): parse+compile a generated 10,000-case suite at least
as fast as PyYAML's pure-Python `SafeLoader` loads the same cases written as
a promptfoo-style YAML test file. Both run in this process, on text already
in memory, best of 3. The C loader (`CSafeLoader`) is deliberately not the
yardstick: it is an optional build, and a YAML file is only data, whereas
compile yields runnable checks.

    python bench/bench_parse.py                 # 10,000 cases, best of 3
    python bench/bench_parse.py --profile       # plus a cProfile of parse+compile
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml
from _timing import best_of
from gen_suite import SEED, generate

import evaldsl


def check_loader() -> None:
    loader = yaml.SafeLoader
    if loader.__module__ != "yaml.loader" or "CSafeLoader" in loader.__name__:
        raise SystemExit(f"expected the pure-Python SafeLoader, got {loader.__module__}.{loader.__name__}")


def profile(evl: str, top: int) -> str:
    """cProfile of one parse+compile: the top functions by cumulative and by own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    evaldsl.compile(evl, filename="generated.evl")
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of parse+compile")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    check_loader()

    evl, yml, statements = generate(args.cases, SEED)
    compiled = evaldsl.compile(evl, filename="generated.evl")
    assert len(compiled.cases) == args.cases, len(compiled.cases)
    assert len(yaml.load(yml, Loader=yaml.SafeLoader)["tests"]) == args.cases

    parse_s = best_of(args.repeats, lambda: evaldsl.parse(evl, filename="generated.evl"))
    compile_s = best_of(args.repeats, lambda: evaldsl.compile(evl, filename="generated.evl"))
    yaml_s = best_of(args.repeats, lambda: yaml.load(yml, Loader=yaml.SafeLoader))

    n = args.cases
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, PyYAML {yaml.__version__} (pure-Python SafeLoader), "
          f"best of {args.repeats}; {os.cpu_count()} CPUs, load average {load}")
    print(f"{n} cases, {statements} statements; .evl {len(evl) / 1e6:.2f} MB, "
          f"YAML {len(yml) / 1e6:.2f} MB\n")
    print(f"{'':<26}{'wall s':>8}{'cases/s':>10}{'statements/s':>14}{'CPU s':>8}")
    for label, (wall, cpu) in (("evaldsl parse", parse_s), ("evaldsl parse+compile", compile_s),
                               ("yaml.load (SafeLoader)", yaml_s)):
        print(f"{label:<26}{wall:>8.3f}{n / wall:>10,.0f}{statements / wall:>14,.0f}{cpu:>8.3f}")
    ratio = yaml_s[0] / compile_s[0]
    cpu_ratio = yaml_s[1] / compile_s[1]
    verdict = "meets" if ratio >= 1 else "MISSES"
    print(f"\nparse+compile is {ratio:.2f}x the speed of the YAML load by wall time "
          f"({cpu_ratio:.2f}x by CPU time): {verdict} the target (>= 1.00x)")
    if args.profile or ratio < 1:
        print("\n" + profile(evl, args.top))


if __name__ == "__main__":
    main()
