"""Issue 9's scale targets, measured as whole `evaldsl` processes, cold.

Each line is one fresh process: wall, CPU (user + system) and peak RSS.

- check: ``evaldsl check`` of the generated 10,000-case suite (gen_suite.py)
  beside a process that only does PyYAML's pure-Python
  ``yaml.load(text, Loader=yaml.SafeLoader)`` of the same cases as YAML.
  Target: check's CPU at most half of the YAML process's; RSS < 150 MB.
- examples: ``check`` and ``run`` of one case with ``examples from`` a
  JSONL file of 1,000 / 10,000 / 100,000 rows (``--rows``), agent that
  returns at once. Target: RSS < 200 MB, time linear in rows.
- run: ``run --json`` of N cases of five expectations (bench_run.py's
  cases: "failing", where all but one case fail two expectations, and
  "passing") with an async and a sync agent that return at once, and
  ``check`` of the same file, interleaved; the run's CPU beyond check's,
  per case, and the run process's CPU after compiling (`_split_run.py`).
  Target: < 100 us a case; for 100,000 cases with --json RSS < 300 MB,
  time linear (``--cases``).

    python bench/bench_scale.py                         # the default sizes
    python bench/bench_scale.py --skip examples --cases 1000 10000
    python bench/bench_scale.py --skip examples,run --repeat 3   # best of 3 processes a line
    python bench/bench_scale.py --skip check,examples --cases 10000 --repeat 3
    python bench/bench_scale.py --skip check,examples --cases 10000 --repeat 5 --suites failing
    python bench/bench_scale.py --skip check,examples --cases 10000 --repeat 7 --suites failing \
        --trees ../base,.                                # two checkouts, in the same rounds
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from _models_common import measure
from bench_run import suite_text

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EVALDSL = [sys.executable, "-m", "evaldsl"]
AGENTS = "_instant_agents"


TREES: list[Path] = [ROOT]
"""The evaldsl trees measured (``--trees``); `runs` measures them in the same rounds, interleaved."""


def _env(tree: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # A user's installed evaldsl has its bytecode (pip writes it); a machine that sets
    # PYTHONDONTWRITEBYTECODE would have every process compile each module it imports from source,
    # and `run` imports more than `check`: the children may keep their bytecode (warmed up in `main`).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), str(tree or ROOT), env.get("PYTHONPATH", "")]))
    return env


def _row(name: str, size: int, result: dict, note: str = "") -> str:
    return (f"  {name:<34} {size:>7} {result['wall']:>8.2f} {result['cpu']:>8.2f} "
            f"{result['rss_mb']:>7.0f}  exit {result['rc']}  {note}")


HEADER = f"  {'':<34} {'size':>7} {'wall s':>8} {'CPU s':>8} {'RSS MB':>7}"


REPEAT = [1]


def _run(command: list[str], work: Path, times: int | None = None) -> dict:
    """The best (least CPU) of ``times`` (default ``--repeat``) fresh processes: the machine is shared."""
    best = None
    for _ in range(REPEAT[0] if times is None else times):
        result = measure(command, cwd=work, env=_env())
        if result["rc"] not in (0, 1):
            print(result["output"].decode(errors="replace")[-2000:])
        best = _least(best, result)
    assert best is not None
    return best


def _least(best: dict | None, result: dict) -> dict:
    return result if best is None or result["cpu"] < best["cpu"] else best


def check_vs_yaml(work: Path) -> None:
    subprocess_gen = [sys.executable, str(HERE / "gen_suite.py"), "--out", str(work)]
    measure(subprocess_gen, cwd=work, env=_env())
    evl, yml = work / "generated.evl", work / "promptfooconfig.yaml"
    print("check: the generated 10,000-case suite, and PyYAML's SafeLoader of the same cases")
    print(HEADER)
    load = ("import sys, yaml; yaml.load(open(sys.argv[1], encoding='utf-8').read(), "
            "Loader=yaml.SafeLoader)")
    check = yaml_run = None
    for _ in range(REPEAT[0]):  # interleaved, so that both see the same machine
        check = _least(check, _run([*EVALDSL, "check", str(evl)], work, times=1))
        yaml_run = _least(yaml_run, _run([sys.executable, "-c", load, str(yml)], work, times=1))
    assert check is not None and yaml_run is not None
    print(_row("evaldsl check", 10_000, check, f"{evl.stat().st_size / 1e6:.2f} MB"))
    print(_row("python: yaml.load (SafeLoader)", 10_000, yaml_run, f"{yml.stat().st_size / 1e6:.2f} MB"))
    ratio = check["cpu"] / yaml_run["cpu"]
    print(f"  check / YAML by CPU: {ratio:.2f} (target <= 0.50: {'met' if ratio <= 0.5 else 'MISSED'}); "
          f"RSS {check['rss_mb']:.0f} MB (target < 150: {'met' if check['rss_mb'] < 150 else 'MISSED'})")


def examples(work: Path, sizes: list[int]) -> None:
    print("\nexamples from a JSONL file: one case, N rows, agent that returns at once")
    print(HEADER)
    for rows in sizes:
        folder = work / f"rows{rows}"
        folder.mkdir(exist_ok=True)
        with open(folder / "rows.jsonl", "w", encoding="utf-8") as fh:
            for i in range(rows):
                fh.write(json.dumps({"n": i, "city": f"city {i}", "total": i + 2}) + "\n")
        (folder / "rows.evl").write_text(
            'case "row {{n}} {{city}}"\n'
            '  prompt "What is {{n}} + 2 in {{city}}?"\n'
            "  expect called calculator with <op: add, a: $n, b: 2>\n"
            "  expect final number is $total\n"
            '  examples from "rows.jsonl"\n', encoding="utf-8")
        check = _run([*EVALDSL, "check", "rows.evl"], folder)
        print(_row("check", rows, check, f"{check['cpu'] / rows * 1e6:.0f} us CPU a row"))
        run = _run([*EVALDSL, "run", "--agent", f"{AGENTS}:InstantAsync", "rows.evl",
                    "--json", "rec.json", "-q"], folder)
        print(_row("run --json (async agent)", rows, run, f"{run['cpu'] / rows * 1e6:.0f} us CPU a row"))


def _split(output: bytes) -> tuple[float, float] | None:
    """(CPU when compiled, CPU at the end) as `_split_run.py` printed them."""
    marks = {}
    for text in output.decode(errors="replace").splitlines():
        if text.startswith("evaldsl-bench: "):
            words = text.split()
            marks[words[1]] = float(words[3])
    return (marks["compiled"], marks["ended"]) if {"compiled", "ended"} <= marks.keys() else None


def runs(work: Path, sizes: list[int], suites: list[str]) -> None:
    """Per size and suite, ``--repeat`` rounds of `SEQUENCE`: ``check``, a ``run`` with an async agent,
    ``check``, a run with a sync agent, ``check``. Two figures a case: the run's CPU beyond the check
    process's (two processes compared: noisy, as this host's speed drifts by tens of percent within
    minutes; both the least run less the least check, and the median over the rounds of each run less
    the mean of the two checks beside it, which a drift between them cancels and one lucky `check`
    does not move), and the run process's own CPU after its suites were compiled (one process). With
    ``--trees A,B`` each round measures every tree in turn, so two versions are compared on the same
    machine at the same moments."""
    print("\nrun: N cases x 5 expectations, agent that returns at once, --json")
    print("  (failing: bench_run.py's cases, all but one fail two expectations, each listed with its detail;"
          " passing: every case passes)")
    print(HEADER)
    for cases in sizes:
        for kind in suites:
            path = work / f"cases{cases}-{kind}.evl"
            path.write_text(suite_text(cases, passing=kind == "passing"), encoding="utf-8")
            commands = {"check": [*EVALDSL, "check", path.name]}
            for agent in ("InstantAsync", "InstantSync"):
                commands[agent] = [sys.executable, str(HERE / "_split_run.py"), "run", "--agent",
                                   f"{AGENTS}:{agent}", path.name, "--json", f"rec{cases}.json", "-q"]
            best: dict[tuple[Path, str], dict] = {}
            after: dict[tuple[Path, str], float] = {}
            pairs: dict[tuple[Path, str], list[float]] = {}  # each round's run less the checks beside it
            for _ in range(REPEAT[0]):
                for tree in TREES:
                    cpu: list[float] = []
                    for name in SEQUENCE:  # a check before and after each run: a drift of the machine cancels
                        at = (tree, name)
                        result = measure(commands[name], cwd=work, env=_env(tree))
                        if result["rc"] not in (0, 1):
                            print(result["output"].decode(errors="replace")[-2000:])
                        cpu.append(result["cpu"])
                        if at not in best or result["cpu"] < best[at]["cpu"]:
                            best[at] = result
                        split = _split(result["output"])
                        if split is not None:
                            after[at] = min(after.get(at, float("inf")), split[1] - split[0])
                        del result["output"]  # the summary of 10,000 failures: this process's RSS is the next child's
                    for i, name in enumerate(SEQUENCE):
                        if name != "check":
                            pairs.setdefault((tree, name), []).append(cpu[i] - (cpu[i - 1] + cpu[i + 1]) / 2)
            for tree in TREES:
                label = f"{tree.name}: " if len(TREES) > 1 else ""
                check = best[(tree, "check")]
                print(_row(f"{label}check ({kind})", cases, check))
                for agent in ("InstantAsync", "InstantSync"):
                    run = best[(tree, agent)]
                    beyond = (run["cpu"] - check["cpu"]) / cases * 1e6
                    paired = statistics.median(pairs[(tree, agent)]) / cases * 1e6
                    own = after[(tree, agent)] / cases * 1e6 if (tree, agent) in after else float("nan")
                    print(_row(f"{label}run --json ({agent}, {kind})", cases, run,
                               f"beyond check {beyond:.0f} us a case (median of the rounds' pairs "
                               f"{paired:.0f}); after compiling {own:.0f} us; "
                               f"{run['rss_mb'] - check['rss_mb']:+.0f} MB RSS"))


SEQUENCE = ("check", "InstantAsync", "check", "InstantSync", "check")
"""A round of `runs`, for each tree: each run is paired with the mean of the checks just before and after it."""


def _warm_up(work: Path) -> None:
    """One small `check` and `run` each, untimed: every module the measured processes import has its
    bytecode written by then, as in an installed evaldsl."""
    path = work / "warm.evl"
    path.write_text(suite_text(3), encoding="utf-8")
    for tree in TREES:
        measure([*EVALDSL, "check", path.name], cwd=work, env=_env(tree))
        for agent in ("InstantAsync", "InstantSync"):
            measure([sys.executable, str(HERE / "_split_run.py"), "run", "--agent", f"{AGENTS}:{agent}",
                     path.name, "--json", "warm.json", "-q"], cwd=work, env=_env(tree))
    measure([sys.executable, "-c", "import yaml"], cwd=work, env=_env())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[1_000, 10_000, 100_000])
    parser.add_argument("--cases", type=int, nargs="*", default=[10_000, 20_000])
    parser.add_argument("--skip", default="", help="comma list of: check, examples, run")
    parser.add_argument("--suites", default="failing,passing", help="run's suites: failing, passing or both")
    parser.add_argument("--repeat", "--repeats", type=int, default=1,
                        help="cold processes per line; the least CPU is shown")
    parser.add_argument("--trees", default="",
                        help="comma list of evaldsl trees (checkouts) whose runs to measure in the same rounds "
                             "(default: this one)")
    args = parser.parse_args()
    REPEAT[0] = max(1, args.repeat)
    if args.trees:
        TREES[:] = [Path(t).resolve() for t in args.trees.split(",")]
    skip = set(filter(None, args.skip.split(",")))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}\n")
    with tempfile.TemporaryDirectory(prefix="evaldsl-scale-") as tmp:
        work = Path(tmp)
        _warm_up(work)
        if "check" not in skip:
            check_vs_yaml(work)
        if "examples" not in skip:
            examples(work, args.rows)
        if "run" not in skip:
            runs(work, args.cases, args.suites.split(","))


if __name__ == "__main__":
    main()
