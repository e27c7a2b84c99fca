"""The dashboard's comparison section: its data contract, and the hook to `compare`.

When the dashboard is given exactly two records it shows the comparison of
the second (B) against the first (A). The statistics are not computed here:
`evaldsl compare` owns them (`evaldsl.report._compare`), and this module only
turns its result into `ComparisonView`, plain strings the page shows as text.
Keeping the page's side this small means the page cannot disagree with
`evaldsl compare`, and the section is tested without a browser.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, TypedDict

from ..run._record import EvalReport
from ._compare import ALPHA, Comparison, Delta, compare_records
from ._compare_text import _VERDICTS, _flip, _p, _rate, _where  # one wording for the terminal and the page


class MetricRow(TypedDict):
    """One row of the comparison table, already formatted (e.g. ``"80.0%"``, ``"+5.0 pts"``)."""

    name: str
    a: str
    b: str
    delta: str


class CaseList(TypedDict):
    """A titled list of cases (``"suite / case"``, or with a note such as a pass-rate change)."""

    title: str
    items: list[str]


class ComparisonView(TypedDict):
    """What the page's comparison section shows; every value is display text."""

    a: str
    """Record A: ``agent · file``."""
    b: str
    """Record B."""
    verdict: str
    """One sentence a reader can act on (e.g. whether B is significantly better)."""
    metrics: list[MetricRow]
    """Accuracy, average score, ... with their deltas."""
    statements: list[str]
    """The tests' results, one sentence each (McNemar, bootstrap interval)."""
    lists: list[CaseList]
    """Fixed, regressed, pass-rate changes, cases in one record only."""


def comparison_for(records: Sequence[tuple[str, EvalReport]]) -> dict[str, Any] | None:
    """The `ComparisonView` of two records (B = the second against A = the first); None otherwise."""
    if len(records) != 2:
        return None
    (source_a, a), (source_b, b) = records
    return dict(comparison_view(compare_records(a, b), os.path.basename(source_a), os.path.basename(source_b)))


def comparison_view(cmp: Comparison, source_a: str, source_b: str) -> ComparisonView:
    """`evaldsl compare`'s result as the page shows it, worded as `evaldsl compare` words it."""
    m = cmp.mcnemar
    significance = f"p < {ALPHA:g}" if cmp.verdict != "no_significant_difference" else f"p >= {ALPHA:g}"
    statements = [f"{cmp.paired} paired case(s): in both records, run in both, with the same prompt; "
                  "only they enter the statistics.",
                  f"Flipped: {m.fixed} fixed, {m.regressed} regressed; exact McNemar p = {_p(m.p_value)}."]
    if cmp.bootstrap is not None:
        bs = cmp.bootstrap
        statements.append(f"Score difference {bs.mean_difference:+.3f}, {bs.confidence:.0%} interval "
                          f"[{bs.low:+.3f}, {bs.high:+.3f}] (paired bootstrap, {bs.resamples:,} resamples, "
                          f"seed {bs.seed}).")
    lists: list[CaseList] = [
        {"title": "Regressed (passed in A, not in B)", "items": [_flip(d) for d in cmp.regressed]},
        {"title": "Fixed (failed in A, passed in B)", "items": [_flip(d) for d in cmp.fixed]},
        {"title": "Pass rate changed", "items": [_rate(d) for d in cmp.pass_rate_changes]},
        {"title": "Only in A", "items": [_where(c) for c in cmp.only_in_a]},
        {"title": "Only in B", "items": [_where(c) for c in cmp.only_in_b]},
        {"title": "Not compared", "items": [f"{_where(c)}  ({c.reason})" for c in cmp.not_compared]},
    ]
    return {
        "a": f"{cmp.a.agent or '(unnamed agent)'} \u00b7 {source_a}",
        "b": f"{cmp.b.agent or '(unnamed agent)'} \u00b7 {source_b}",
        "verdict": f"{_VERDICTS[cmp.verdict]} ({significance}, exact McNemar test on the cases that flipped)",
        "metrics": [_metric("accuracy (paired cases)", cmp.accuracy, percent=True),
                    _metric("average score (paired cases)", cmp.score, percent=False)],
        "statements": statements,
        "lists": [entry for entry in lists if entry["items"]],
    }


def _metric(name: str, d: Delta, *, percent: bool) -> MetricRow:
    def show(value: float | None, delta: bool = False) -> str:
        if value is None:
            return "\u2013"
        if percent:
            return f"{value * 100:+.1f} pts" if delta else f"{value:.1%}"
        return f"{value:+.3f}" if delta else f"{value:.3f}"

    return {"name": name, "a": show(d.a), "b": show(d.b), "delta": show(d.delta, delta=True)}
