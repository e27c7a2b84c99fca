"""Conversations at run time: the whole `evaldsl run` process on N two-turn conversation cases beside N
single-prompt cases doing the same work (two tool calls, four expectations), an agent taking ctx.

    python bench/bench_conversation_run.py [--cases 1000] [--rounds 3]

Prints the best wall time of each and their ratio (interleaved rounds, one machine)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = '''
from evaldsl import RunArtifacts

def agent(message, ctx):
    ctx.call("lookup", {"id": 1})
    if "both" in message:
        ctx.call("refund", {"id": 1})
    return RunArtifacts(final_text="done: " + message)
'''
HEAD = ('tool lookup "l"\n  param id: integer\n  otherwise returns "found"\n'
        'tool refund "r"\n  param id: integer\n  otherwise returns "ok"\n\n')


def suites(n: int, folder: Path) -> None:
    (folder / "bench_agent.py").write_text(AGENT)
    conv = [HEAD] + [f'case "c{i}"\n  user "first {i}"\n    expect called lookup\n'
                     f'    expect final text contains "first"\n'
                     f'  user "second {i}"\n    expect called lookup\n    expect final text contains "second"\n'
                     for i in range(n)]
    single = [HEAD] + [f'case "c{i}"\n  prompt "both {i}"\n  expect called lookup\n  expect called refund\n'
                       f'  expect final text contains "both"\n  expect no error\n' for i in range(n)]
    (folder / "conv.evl").write_text("".join(conv))
    (folder / "single.evl").write_text("".join(single))


def timed(folder: Path, name: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "evaldsl", "run", name, "--agent", "bench_agent:agent", "-q",
                           "--no-suite-cache", "--json", "r.json"], cwd=folder, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suites(args.cases, folder)
        best = {"single.evl": float("inf"), "conv.evl": float("inf")}
        for _ in range(args.rounds):
            for name in best:
                best[name] = min(best[name], timed(folder, name))
    s, c = best["single.evl"], best["conv.evl"]
    print(f"{args.cases} cases, best of {args.rounds}: single prompt {s:.2f} s, two-turn conversation {c:.2f} s, "
          f"ratio {c / s:.2f}x")


if __name__ == "__main__":
    main()
