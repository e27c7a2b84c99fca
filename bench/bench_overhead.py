"""The runner's overhead against a bare loop (issue 28), whole cold processes, per case.

Each round runs, one after the other, in a folder holding bench_run.py's N
cases of five expectations (the failing suite by default):

- ``evaldsl check --no-suite-cache`` of the file;
- ``evaldsl run --no-suite-cache --agent _instant_agents:InstantAsync --json``
  (through ``_split_run.py``, which also tells the CPU it had used once the
  suite was compiled);
- ``evaldsl check`` again (the run is paired with the mean of the two);
- ``bare_run_loop.py N``: asyncio, the same agent, the five checks by hand,
  a JSON line a case, as many at once as ``run``'s default ``-j`` (8);
- ``bare_run_loop.py 0``: the same process with no case (its start-up).

Per case: evaldsl's run less check, and the bare loop less its empty run,
in CPU seconds of the processes (`getrusage`). Two readings of evaldsl's: the
median over the rounds of (run less the mean of the checks beside it), and
the run's own CPU after its suite was compiled (one process: no drift
between processes in it). Target: at most 4 x the bare loop's.

    python bench/bench_overhead.py [--cases 10000] [--rounds 3] [--passing]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _models_common import measure  # noqa: E402
from bench_run import suite_text  # noqa: E402
from bench_scale import _split  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--passing", action="store_true", help="the suite where every case passes")
    opts = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="evaldsl-overhead-"))
    n = opts.cases
    try:
        (work / "cases.evl").write_text(suite_text(n, passing=opts.passing), encoding="utf-8")
        evaldsl = [sys.executable, "-m", "evaldsl"]
        commands = {
            "check": [*evaldsl, "check", "cases.evl", "--no-suite-cache"],
            "run": [sys.executable, str(HERE / "_split_run.py"), "run", "cases.evl", "--no-suite-cache",
                    "--agent", "_instant_agents:InstantAsync", "--json", "rec.json", "-q"],
            "bare": [sys.executable, str(HERE / "bare_run_loop.py"), str(n), "bare.jsonl"],
            "bare0": [sys.executable, str(HERE / "bare_run_loop.py"), "0", "bare0.jsonl"],
        }
        measure(commands["bare0"], cwd=work, env=ENV)  # bytecode and page cache warm
        cpu: dict[str, list[float]] = {name: [] for name in (*commands, "check2", "after")}
        for _ in range(opts.rounds):
            for name in ("check", "run", "check2", "bare", "bare0"):
                result = measure(commands[name.rstrip("2")], cwd=work, env=ENV)
                if result["rc"] not in (0, 1):
                    print(f"{name}: exit {result['rc']}\n{result['output'].decode(errors='replace')[-2000:]}")
                cpu[name].append(result["cpu"])
                split = _split(result["output"]) if name == "run" else None
                if split is not None:
                    cpu["after"].append(split[1] - split[0])
        lines = sum(1 for _ in open(work / "bare.jsonl", encoding="utf-8"))
        assert lines == n, f"the bare loop wrote {lines} lines for {n} cases"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    pairs = [r - (a + b) / 2 for r, a, b in zip(cpu["run"], cpu["check"], cpu["check2"])]
    per = {
        "run less check (median of the rounds)": statistics.median(pairs) / n * 1e6,
        "run less check (least less least)": (min(cpu["run"]) - min(cpu["check"] + cpu["check2"])) / n * 1e6,
        "run after compiling (in the process)": min(cpu["after"]) / n * 1e6 if cpu["after"] else float("nan"),
    }
    bare = statistics.median(b - z for b, z in zip(cpu["bare"], cpu["bare0"])) / n * 1e6
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}; {n} cases "
          f"({'passing' if opts.passing else 'failing'}), {opts.rounds} rounds, CPU of cold processes\n")
    for name in ("check", "run", "bare", "bare0"):
        print(f"  {name:8} least {min(cpu[name]):6.2f} s  median {statistics.median(cpu[name]):6.2f} s")
    print(f"\n  bare loop, a case (median of the rounds' N less 0)   {bare:7.1f} us")
    for name, value in per.items():
        verdict = "met" if value <= 4 * bare else "MISSED"
        print(f"  evaldsl {name:38} {value:7.1f} us  = {value / bare:4.1f} x the bare loop (target <= 4: {verdict})")


if __name__ == "__main__":
    main()
