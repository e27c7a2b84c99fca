"""The suite cache (issue 28): a second `check` or `run` of an unchanged suite, whole processes.

In a fresh project folder holding the generated 10,000-case suite, each
round runs, as cold `python -m evaldsl` processes, one after the other:

- the command with ``--no-suite-cache`` (what every command cost before);
- the command with an empty cache (the first: it compiles and writes the entry);
- the same command again (the second: from the cache).

for `check` and for `run --json` with an agent that returns at once
(`_instant_agents.py`). Rounds interleave the variants so that the host's
drift touches them alike; the figures are the least wall and CPU seconds
(the child's `getrusage`) of the rounds, and the ratio second / first.
Target: the second costs at most 0.3 x the first.

    python bench/bench_suite_cache.py [--cases 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gen_suite import make_cases, render_evl  # noqa: E402


def timed(args: list[str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and exit code of one cold process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}
    code = subprocess.run([sys.executable, "-m", "evaldsl", *args], cwd=cwd, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="evaldsl-suite-cache-"))
    try:
        (folder / "suite.evl").write_text(render_evl(make_cases(opts.cases)), encoding="utf-8")
        commands = {
            "check": ["check", "suite.evl"],
            "run --json": ["run", "suite.evl", "--agent", "_instant_agents:InstantAsync", "--json", "r.json", "-q"],
        }
        rows: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(opts.rounds):
            for name, args in commands.items():
                shutil.rmtree(folder / ".evaldsl_cache", ignore_errors=True)
                for variant, extra in (("no cache", ["--no-suite-cache"]), ("first", []), ("second", [])):
                    wall, cpu, _ = timed(args + extra, folder)
                    rows.setdefault((name, variant), []).append((wall, cpu))
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}; "
              f"{opts.cases} cases, least of {opts.rounds} rounds (cold processes)\n")
        print(f"{'':28}{'wall s':>9}{'CPU s':>9}")
        for (name, variant), runs in rows.items():
            print(f"  {name + ' (' + variant + ')':26}{min(w for w, _ in runs):9.2f}{min(c for _, c in runs):9.2f}")
        print()
        for name in commands:
            first, second, none = (rows[(name, v)] for v in ("first", "second", "no cache"))
            by_wall = min(w for w, _ in second) / min(w for w, _ in first)
            by_cpu = min(c for _, c in second) / min(c for _, c in first)
            plain = min(c for _, c in second) / min(c for _, c in none)
            verdict = "met" if max(by_wall, by_cpu) <= 0.3 else "MISSED"
            print(f"  {name}: second / first {by_wall:.2f} by wall, {by_cpu:.2f} by CPU "
                  f"(/ no cache {plain:.2f} by CPU): target <= 0.30 {verdict}")
        entry = sorted((folder / ".evaldsl_cache" / "suites").glob("*.bin"), key=lambda p: p.stat().st_size)
        print(f"\n  entries: {', '.join(f'{p.stat().st_size / 1e6:.1f} MB' for p in entry)}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
