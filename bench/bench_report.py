"""The HTML dashboard on a large input: file size, build time, and how the page behaves.

Target (issue 7): 5,000 cases x 5 run records open, filter and sort without
freezing the browser. Measured here, in Debian's headless chromium driven by
Playwright (as the tests do):

- build: `render_html` of the five records (Python), best of 3; and, for
  `evaldsl report A.json B.json`, the comparison of two of them (once);
- size of the written file;
- first contentful paint, and the time until the page's script has drawn
  the leaderboard, the heatmap's first page and the filters (the
  ``evaldsl-drawn`` performance mark), both from navigation start, median of
  3 fresh loads from file://;
- in the opened page: sorting the case table by a column, a status filter,
  a text search and opening an expander, each timed in the page from the
  click to the next frame (handlers, layout and paint included), median of 5.

The records are synthetic but shaped like real ones: each case has a
four-message transcript with a tool call, three expectations, tags, and one
case in ten is repeated three times (some flaky), one in fifty errors.

    python bench/bench_report.py [--cases 5000] [--records 5] [--keep report.html]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _timing import best_of

from evaldsl import CaseResult, EvalReport, ExpectationResult, RunArtifacts, RunMeta, RunResult, Summary, ToolCall
from evaldsl.report._html import render_html, write_html
from evaldsl.report._html_compare import comparison_for

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def _run(rng: random.Random, i: int, index: int, passed: bool, error: bool) -> RunResult:
    same = random.Random(i)  # the same question for every model, so that records pair up
    a, b = same.randint(1, 999), same.randint(1, 999)
    answer = a + b if passed else a + b + 1
    args = {"op": "add", "a": a, "b": b}
    transcript = [
        {"role": "user", "content": f"Case {i}: what is {a} + {b}? Answer with the number only."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": str(args)}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": str(answer)},
        {"role": "assistant", "content": f"The sum of {a} and {b} is {answer}."},
    ]
    labels = ["called calculator with <op: add>", "calls are calculator", f"final number is {a + b}"]
    wrong = f"expected the last number to be {a + b}, got {answer}"
    exps = [ExpectationResult(label=label, passed=passed or k < 2, credit=1.0 if passed or k < 2 else 0.0,
                              detail=None if passed or k < 2 else wrong,
                              file=f"suites/s{i % 20}.evl", line=10 + k) for k, label in enumerate(labels)]
    return RunResult(
        index=index, passed=passed and not error, score=0.0 if error or not passed else 1.0,
        latency_s=rng.uniform(0.2, 3.0),
        error=None, expectations=[] if error else exps,
        artifacts=None if error else RunArtifacts(
            tool_calls=[ToolCall(name="calculator", args=args, result=str(answer))],
            final_text=f"The sum of {a} and {b} is {answer}.", tokens=rng.randint(80, 400), transcript=transcript),
    )


def make_record(n_cases: int, model: int) -> EvalReport:
    rng = random.Random(model)
    skill = 0.6 + 0.08 * model
    cases = []
    for i in range(n_cases):
        repeat = 3 if i % 10 == 0 else 1
        error = i % 50 == 7
        runs = [_run(rng, i, k, rng.random() < skill, error) for k in range(repeat)]
        passed = sum(r.passed for r in runs)
        status = "error" if error else ("passed" if passed == repeat else "failed")
        cases.append(CaseResult(
            suite=f"Suite {i % 20}", name=f"case {i:05d}", file=f"suites/s{i % 20}.evl", line=10 + i,
            prompt=runs[0].artifacts.transcript[0]["content"] if runs[0].artifacts else f"case {i}",
            status=status, score=passed / repeat, pass_rate=passed / repeat, repeat=repeat,
            latency_s=sum(r.latency_s for r in runs) / repeat,
            tags=["maths", f"group{i % 7}"], runs=runs))
    total_passed = sum(c.status == "passed" for c in cases)
    return EvalReport(meta=RunMeta(agent=f"model-{model}", complete=True),
                      summary=Summary(total=n_cases, passed=total_passed, accuracy=total_passed / n_cases,
                                      average_score=sum(c.score or 0 for c in cases) / n_cases),
                      cases=cases)


_TIMED = """async (selector) => {
  const t0 = performance.now();
  const action = %s;
  action(selector);
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return performance.now() - t0;
}"""
CLICK = _TIMED % "(s) => document.querySelector(s).click()"
STATUS = _TIMED % ("(v) => { const s = document.getElementById('f-status'); s.value = v; "
                   "s.dispatchEvent(new Event('change')); }")
SEARCH = _TIMED % ("(v) => { const s = document.getElementById('f-search'); s.value = v; "
                   "document.getElementById('filters').requestSubmit(); }")


def measure_page(path: Path, chromium: str) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    out: dict[str, list[float]] = {k: [] for k in ("fcp", "drawn", "frame", "sort", "filter", "search", "expand")}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
        for _ in range(3):
            page = context.new_page()
            page.goto(path.as_uri(), wait_until="load")
            page.wait_for_timeout(300)  # let the first paint be recorded
            marks = page.evaluate("""() => ({
              fcp: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime,
              drawn: (performance.getEntriesByName('evaldsl-drawn')[0] || {}).startTime })""")
            out["fcp"].append(marks["fcp"])
            out["drawn"].append(marks["drawn"])
            page.close()
        page = context.new_page()
        page.goto(path.as_uri(), wait_until="load")
        for k in range(5):
            out["frame"].append(page.evaluate(CLICK, "#generated"))  # a click that does nothing: the floor
            out["sort"].append(page.evaluate(CLICK, f"#cases th:nth-child({3 + k % 2})"))
            out["filter"].append(page.evaluate(STATUS, "failed" if k % 2 == 0 else ""))
            out["search"].append(page.evaluate(SEARCH, "case 001" if k % 2 == 0 else ""))
            out["expand"].append(page.evaluate(CLICK, "#cases tbody button.case"))
            page.evaluate(CLICK, "#cases tbody button.case")  # close it again (not counted)
        browser.close()
    return {k: statistics.median(x for x in v if x is not None) if any(x is not None for x in v) else float("nan")
            for k, v in out.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--records", type=int, default=5)
    parser.add_argument("--keep", metavar="FILE", help="also keep the generated dashboard here")
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    t = time.perf_counter()
    records = [(f"model-{m}.json", make_record(args.cases, m)) for m in range(args.records)]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{args.cases} cases x {args.records} records (made in {time.perf_counter() - t:.1f} s)")
    html: list[str] = []
    wall, cpu = best_of(3, lambda: html.append(render_html(records)))
    print(f"  build (render_html)        {wall:7.2f} s wall, {cpu:.2f} s CPU (best of 3)")
    wall, cpu = best_of(1, lambda: comparison_for(records[:2]))
    print(f"  comparison of two records  {wall:7.2f} s wall, {cpu:.2f} s CPU (compare_records, for `report A B`)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep or Path(tmp) / "report.html").resolve()
        write_html(path, html[-1])
        print(f"  file size                  {path.stat().st_size / 1e6:7.1f} MB")
        if chromium is None:
            print("  chromium not found: page timings skipped (apt-get install chromium)")
            return 0
        m = measure_page(path, chromium)
    print(f"  first contentful paint     {m['fcp']:7.0f} ms (median of 3 loads from file://)")
    print(f"  page drawn (script done)   {m['drawn']:7.0f} ms")
    for key, what in (("frame", "a click that does nothing"), ("sort", "sort the case table"),
                      ("filter", "status filter"), ("search", "text search"), ("expand", "open an expander")):
        print(f"  {what:<26} {m[key]:7.0f} ms (click to next frame, median of 5)")
    worst = max(m[k] for k in ("sort", "filter", "search", "expand"))
    print(f"  target: no interaction freezes the page (each under 100 ms): {'met' if worst < 100 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
