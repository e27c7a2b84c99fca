"""Wall and CPU of `evaldsl run --model` up to its first request, for one or two source trees, interleaved.

A model run's process against the practical limit (bench_models.py, section (d)) is its start-up plus a
run phase that the server's 50 ms bounds; this measures the first part alone. Each process runs
bench_models.py's 1,000-case suite against its server (started here, in a process of its own) and exits
when its first request would go out: aiohttp's import and session are made, nothing is sent. Two trees
(say a checkout before a change, made with ``git archive HEAD evaldsl grammar | tar -x -C DIR``, and
the worktree) are run a round at a time, so a busy host stretches both alike.

    python bench/bench_first_request.py --rounds 15 TREE [TREE]       # e.g. /tmp/before .
    python bench/bench_first_request.py --rounds 10 --cache . .        # a second run, from the suite cache
    python bench/bench_first_request.py --rounds 12 --whole /tmp/before .   # whole processes, every request

Byte-compile each tree first (``python -m compileall -q TREE/evaldsl``): this machine sets
PYTHONDONTWRITEBYTECODE=1.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_models import Server, write_suite

STOP_AT_FIRST_REQUEST = """
import os, runpy, sys
import evaldsl.models._transport as transport

async def post(self, *args, **kwargs):
    self._session or self._open()  # aiohttp imported and its session made, as a first request does
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)

transport.AiohttpClient.post = post
sys.argv = ["evaldsl", *sys.argv[1:]]
runpy.run_module("evaldsl", run_name="__main__")
"""


def one(tree: Path, base_url: str, suite: Path, cache: bool, whole: bool = False) -> tuple[float, float]:
    """(wall, CPU) seconds of one process up to its first request (``whole``: to its end)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["PYTHONPATH"] = str(tree)
    start_of = ["-m", "evaldsl"] if whole else ["-c", STOP_AT_FIRST_REQUEST]
    command = [sys.executable, *start_of, "run", str(suite), "--model", "openai:bench",
               "--base-url", base_url, "--no-cache", "-j", "50", "-q", "--json", str(suite.parent / "r.json")]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command + ([] if cache else ["--no-suite-cache"]), env=env, cwd=suite.parent,
                          capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        sys.exit(f"{tree}: exit {done.returncode}\n{done.stderr.decode(errors='replace')[-2000:]}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="+", type=Path, help="one or two source trees (holding evaldsl/)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--cache", action="store_true", help="the suite from the suite cache (filled first)")
    parser.add_argument("--whole", action="store_true", help="whole processes: every request sent, to the end")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    server = Server(0.05)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-first-") as tmp:
            suites = {}
            for n, tree in enumerate(args.trees):  # a folder each: each tree its own suite cache
                (Path(tmp) / str(n)).mkdir()
                suites[n] = write_suite(Path(tmp) / str(n), args.cases)
                if args.cache:
                    one(tree.resolve(), server.base_url, suites[n], True)
            results: dict[int, list[tuple[float, float]]] = {n: [] for n in suites}
            for _ in range(args.rounds):
                for n, tree in enumerate(args.trees):
                    results[n].append(one(tree.resolve(), server.base_url, suites[n], args.cache, args.whole))
    finally:
        server.stop()
    what = "whole processes" if args.whole else "to the first request"
    print(f"{what}, {args.cases} cases, {'from the suite cache' if args.cache else 'compiling'}, "
          f"{args.rounds} rounds interleaved: wall min / median, CPU min / median (ms)")
    for n, tree in enumerate(args.trees):
        walls = [w for w, _ in results[n]]
        cpus = [c for _, c in results[n]]
        print(f"  {str(tree):<40} {1000 * min(walls):7.1f} {1000 * statistics.median(walls):7.1f}"
              f"   {1000 * min(cpus):7.1f} {1000 * statistics.median(cpus):7.1f}")


if __name__ == "__main__":
    main()
