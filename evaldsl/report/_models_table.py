"""The table that ends a run of several models: one row per model, from its record.

`evaldsl run --model A --model B` runs the same suites against each model and
writes one record each; this compares them side by side on what a user
choosing a model looks at: accuracy and score, how many cases failed or
errored, latency (p50, p95 over runs), tokens, and the calls the cache served.
It reads only the records (and the cache counters), like every report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..run._record import EvalReport
from ._terminal import _num, _pct, _secs

HEADER = ("model", "accuracy", "score", "passed", "failed", "errors", "p50", "p95", "tokens", "cached")


def format_comparison(rows: Sequence[tuple[str, EvalReport | None, Any]]) -> str:
    """The comparison table, preceded by a title rule.

    Args:
        rows: ``(model, report, cache)`` per model, in command-line order;
            ``cache`` is its `ResponseCache` (None when off), ``report`` None
            when that model's run did not finish.
    """
    lines = [[*HEADER]]
    for model, report, cache in rows:
        lines.append(_row(model, report, cache))
    widths = [max(len(r[i]) for r in lines) for i in range(len(HEADER))]
    out = [f"\n{'=' * 3} models compared {'=' * 3}"]
    for row in lines:
        cells = (c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
        out.append("  ".join(cells).rstrip())
    return "\n".join(out) + "\n"


def _row(model: str, report: EvalReport | None, cache: Any) -> list[str]:
    if report is None:
        return [model, *["-"] * (len(HEADER) - 1)]
    s = report.summary
    if cache is None:
        cached = "off"
    else:
        cached = f"{cache.hits}/{cache.hits + cache.misses}"
    return [
        model, _pct(s.accuracy), _num(s.average_score), str(s.passed + s.xpassed), str(s.failed),
        str(s.errors), _secs(s.latency_p50_s), _secs(s.latency_p95_s),
        "-" if s.tokens_total is None else f"{s.tokens_total:,}", cached,
    ]
