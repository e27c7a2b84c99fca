"""Cost of `compare_records` (the bootstrap dominates), and of the JUnit and Markdown writers.

Two synthetic records of N cases each (random pass/fail and partial scores,
seeded), compared with the default 10,000 bootstrap resamples; then
`junit_xml` and `markdown_summary` of one record. Best of 3; wall and CPU.

    python bench/bench_compare.py [N ...]     (default: 100 1000 5000)
"""

from __future__ import annotations

import os
import platform
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import best_of  # noqa: E402

from evaldsl.report._compare import RESAMPLES, compare_records  # noqa: E402
from evaldsl.report._junit import junit_xml  # noqa: E402
from evaldsl.report._markdown import markdown_summary  # noqa: E402
from evaldsl.run._record import CaseResult, EvalReport, ExpectationResult, RunResult  # noqa: E402
from evaldsl.run._stats import summarize  # noqa: E402


def record(n: int, rng: random.Random, p: float) -> EvalReport:
    cases = []
    for i in range(n):
        score = rng.choice([0.0, 0.5, 1.0]) if rng.random() < p else 0.0
        ok = score > 0
        exp = ExpectationResult(label="final number is 4", passed=ok, credit=score, file="s.evl", line=3,
                                detail=None if ok else "expected 4, got 5")
        run = RunResult(index=0, passed=ok, score=score, latency_s=rng.random(), expectations=[exp])
        cases.append(CaseResult(suite="S", name=f"case {i}", file="s.evl", line=i + 1, prompt=f"p{i}",
                                status="passed" if ok else "failed", score=score, pass_rate=float(ok),
                                latency_s=run.latency_s, runs=[run]))
    return EvalReport(summary=summarize(cases), cases=cases)


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [100, 1000, 5000]
    print(f"python {platform.python_version()}; {os.cpu_count()} CPUs; load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}; best of 3, wall / CPU seconds")
    for n in sizes:
        rng = random.Random(n)
        a, b = record(n, rng, 0.6), record(n, rng, 0.7)
        wall, cpu = best_of(3, lambda a=a, b=b: compare_records(a, b))
        jw, jc = best_of(3, lambda a=a: junit_xml(a))
        mw, mc = best_of(3, lambda a=a: markdown_summary(a))
        print(f"{n:>6} cases: compare ({RESAMPLES:,} resamples) {wall:.3f} / {cpu:.3f}   "
              f"junit {jw:.3f} / {jc:.3f}   markdown {mw:.3f} / {mc:.3f}")


if __name__ == "__main__":
    main()
