"""The dashboard's comparison section: its data contract, and the hook to `compare`.

When the dashboard is given exactly two records it shows the comparison of
the second (B) against the first (A). The statistics are not computed here:
`evaldsl compare` owns them (`evaldsl.report._compare`), and this module only
turns its result into `ComparisonView`, plain strings the page shows as text.
Keeping the page's side this small means the page cannot disagree with
`evaldsl compare`, and the section is tested without a browser.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict


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


def comparison_for(records: Sequence[tuple[str, Any]]) -> dict[str, Any] | None:
    """The `ComparisonView` of two records (B = the second against A = the first); None otherwise.

    None also when this installation has no `evaldsl.report._compare` (the
    page then simply has no comparison section).
    """
    if len(records) != 2:
        return None
    try:
        from . import _compare  # type: ignore[attr-defined]  # noqa: F401  (built on the `reports` branch)
    except ImportError:
        return None
    return None  # pragma: no cover - replaced by the adapter once `_compare` exists
