"""The long run of the mutation fuzzer (issue 11, item 7): inputs tried and escapes.

Same inputs and the same check as tests/properties/test_fuzz.py
(tests/properties/_mutate.py), many more of them: every input goes through
the reader, `parse`, `compile` and `format`; an escape is any exception other
than `EvlError`, a `format` that changes the meaning of text that parses,
or an input still running after `--hang-limit` seconds. Inputs are split in
chunks over worker processes; input i of a seed is the same on every run.

    python bench/fuzz.py --inputs 100000 --seed 1           # target: 0 escapes
    python bench/fuzz.py --inputs 2000 --seed 5 --workers 1
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "properties"))

from _mutate import check_input, mutants, seeds  # noqa: E402

CHUNK = 1000


def _hung(signum: int, frame: object) -> None:
    raise TimeoutError("hang")


def run_chunk(job: tuple[int, int, int, int]) -> tuple[int, list[str], float]:
    """Check inputs `start` .. `start + count` of chunk seed `seed`; (tried, escapes, slowest s)."""
    seed, index, count, hang_limit = job
    signal.signal(signal.SIGALRM, _hung)
    escapes, slowest = [], 0.0
    for i, data in enumerate(mutants(seed * 1_000_003 + index, count)):
        began = time.perf_counter()
        signal.alarm(hang_limit)
        try:
            problem = check_input(data)
        except TimeoutError:
            problem = f"no answer after {hang_limit} s"
        finally:
            signal.alarm(0)
        slowest = max(slowest, time.perf_counter() - began)
        if problem is not None:
            escapes.append(f"chunk {index} input {i} ({len(data)} bytes): {data[:400]!r}\n{problem}")
    return count, escapes, slowest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--hang-limit", type=int, default=10, help="seconds before an input counts as hung")
    args = ap.parse_args()
    jobs = [(args.seed, i, min(CHUNK, args.inputs - start), args.hang_limit)
            for i, start in enumerate(range(0, args.inputs, CHUNK))]
    began = time.perf_counter()
    tried, escapes, slowest = 0, [], 0.0
    with multiprocessing.Pool(args.workers) as pool:
        for count, found, slow in pool.imap_unordered(run_chunk, jobs):
            tried, slowest = tried + count, max(slowest, slow)
            escapes += found
    wall = time.perf_counter() - began
    print(f"seeds: {len(seeds())} .evl files (suites/, tests/golden/); seed {args.seed}; "
          f"{args.workers} worker(s)")
    print(f"inputs tried: {tried:,}; escapes: {len(escapes)}; slowest input {slowest:.2f} s; "
          f"wall {wall:.0f} s ({tried / wall:,.0f} inputs/s)")
    for text in escapes[:10]:
        print("\n" + text)
    return 1 if escapes else 0


if __name__ == "__main__":
    sys.exit(main())
