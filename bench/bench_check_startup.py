"""Wall time of `python -m evaldsl check` on a one-case file, and what it imports.

The targets (issue 2, DESIGN rule 12): `evaldsl check` on a one-case file
under 0.3 s wall, and nothing from httpx or jinja2 imported at check time
(they serve model runs and HTML reports only). Each timing is a fresh
interpreter, as a user or an editor would start it; the median of 10 runs
after one warm-up (which also fills Lark's grammar cache). `python -c pass`
is timed the same way, for the interpreter's own share.

    python bench/bench_check_startup.py
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ONE_CASE = '''suite "Startup"

case "adds two numbers"
  prompt "What is 2 + 2?"
  expect called calculator with <op: add>
  expect final number is 4
'''
FORBIDDEN = ("httpx", "jinja2", "aiohttp", "asyncio")


def wall_times(argv: list[str], runs: int) -> list[float]:
    """Seconds for each of `runs` fresh runs of argv (after one warm-up); fails on a non-zero exit."""
    subprocess.run(argv, check=True, capture_output=True)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def imported_modules(argv: list[str]) -> dict[str, int]:
    """Top-level package -> cumulative import time (us), from `python -X importtime`."""
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], check=True,
                          capture_output=True, text=True)
    packages: dict[str, int] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = (part.strip() for part in line[len("import time:"):].split("|"))
        if cumulative.isdigit():
            top = name.strip().split(".")[0]
            packages[top] = max(packages.get(top, 0), int(cumulative))
    return packages


def interleaved(commands: dict[str, list[str]], runs: int, cwd: str) -> dict[str, list[float]]:
    """Seconds of each command, ``runs`` rounds of one run each, after a warm-up round."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for round_ in range(runs + 1):
        for name, argv in commands.items():
            start = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True, cwd=cwd)
            if round_:
                times[name].append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "one.evl"
        path.write_text(ONE_CASE, encoding="utf-8")
        check = [sys.executable, "-m", "evaldsl", "check", str(path), "--no-suite-cache"]
        check_times = wall_times(check, args.runs)
        bare_times = wall_times([sys.executable, "-c", "pass"], args.runs)
        packages = imported_modules(check)
        ratio = interleaved({  # issue 28: check within 2 x `python -c "import lark, pydantic"`, same rounds
            "check": check,
            "check, from the suite cache": [sys.executable, "-m", "evaldsl", "check", "one.evl"],
            "import lark, pydantic": [sys.executable, "-c", "import lark, pydantic"],
        }, args.runs, tmp)

    median = statistics.median(check_times)
    print(f"python {sys.version.split()[0]}; median of {args.runs} fresh runs after a warm-up")
    print(f"  python -m evaldsl check one.evl   {median * 1000:7.1f} ms "
          f"(min {min(check_times) * 1000:.1f}, max {max(check_times) * 1000:.1f})")
    print(f"  python -c pass                    {statistics.median(bare_times) * 1000:7.1f} ms")
    print(f"  target < 300 ms: {'met' if median < 0.3 else 'MISSED'}")
    heaviest = sorted(packages.items(), key=lambda kv: -kv[1])[:8]
    print("  heaviest imports (cumulative ms): "
          + ", ".join(f"{name} {us / 1000:.1f}" for name, us in heaviest))
    floor = statistics.median(ratio["import lark, pydantic"])
    print(f"  interleaved, median of {args.runs} rounds: python -c 'import lark, pydantic' {floor * 1000:.1f} ms")
    for name in ("check", "check, from the suite cache"):
        times = ratio[name]
        print(f"    {name:28} {statistics.median(times) * 1000:6.1f} ms = "
              f"{statistics.median(times) / floor:.2f} x (target <= 2: "
              f"{'met' if statistics.median(times) <= 2 * floor else 'MISSED'})")
    leaked = [name for name in FORBIDDEN if name in packages]
    print(f"  httpx / jinja2 imported at check time: {', '.join(leaked) if leaked else 'neither'}")
    return 1 if leaked or median >= 0.3 else 0


if __name__ == "__main__":
    raise SystemExit(main())
