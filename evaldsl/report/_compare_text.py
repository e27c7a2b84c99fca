"""A `Comparison` as plain text, for the terminal (`evaldsl compare`).

Reads only the `Comparison`; the numbers are all computed in `_compare`.
The verdict comes first, then the table of A, B and the delta, then the
case lists: regressions before fixes (they are what a reviewer acts on),
then pass-rate changes, and the cases that could not be compared, so
nothing in either record goes unmentioned.
"""

from __future__ import annotations

from ._compare import ALPHA, CaseDelta, CaseRef, Comparison
from ._numbers import pct as _pct

VERDICTS = {
    "better": "B is better than A",
    "worse": "B is worse than A",
    "no_significant_difference": "no significant difference between A and B",
}


_VERDICTS = VERDICTS  # the name the dashboard (`_html_compare`) imports, with `_flip`, `_p`, `_rate`, `_where`


def format_comparison(cmp: Comparison, *, limit: int = 50) -> str:
    """The comparison as text; each case list shows at most ``limit`` entries (and says how many more)."""
    lines = [
        f"A: {_describe(cmp.a.agent, cmp.a.started_at, cmp.a.cases)}{_incomplete(cmp.a.complete)}",
        f"B: {_describe(cmp.b.agent, cmp.b.started_at, cmp.b.cases)}{_incomplete(cmp.b.complete)}",
        f"paired cases: {cmp.paired} (in both records, run in both, same prompt)",
        "",
        f"{'':10}{'A':>9}{'B':>9}{'B - A':>11}",
        _row("accuracy", cmp.accuracy.a, cmp.accuracy.b, cmp.accuracy.delta, percent=True),
        _row("score", cmp.score.a, cmp.score.b, cmp.score.delta, percent=False),
    ]
    if cmp.bootstrap is not None:
        bs = cmp.bootstrap
        lines.append(f"score difference {bs.mean_difference:+.3f}, {bs.confidence:.0%} interval "
                     f"[{bs.low:+.3f}, {bs.high:+.3f}] (paired bootstrap, {bs.resamples:,} resamples, seed {bs.seed})")
    m = cmp.mcnemar
    significant = "significant" if m.p_value < ALPHA else "not significant"
    lines.append(f"flipped: {m.regressed} regressed, {m.fixed} fixed, exact McNemar p = {_p(m.p_value)}, "
                 f"{significant} at {ALPHA:g}")
    verdict = VERDICTS[cmp.verdict]
    if cmp.verdict == "no_significant_difference" and m.regressed:  # plainly: the regressions are real cases
        verdict = f"{m.regressed} case(s) regressed, but the difference is not significant at {ALPHA:g}"
    lines.append(f"verdict: {verdict}" + (f" (p < {ALPHA:g})" if cmp.verdict != "no_significant_difference" else ""))
    lines += _section("REGRESSED", [_flip(d) for d in cmp.regressed], limit)
    lines += _section("FIXED", [_flip(d) for d in cmp.fixed], limit)
    lines += _section("PASS RATE CHANGED", [_rate(d) for d in cmp.pass_rate_changes], limit)
    lines += _section("ONLY IN A", [_where(c) for c in cmp.only_in_a], limit)
    lines += _section("ONLY IN B", [_where(c) for c in cmp.only_in_b], limit)
    lines += _section("NOT COMPARED", [f"{_where(c)}  ({c.reason})" for c in cmp.not_compared], limit)
    return "\n".join(lines) + "\n"


def _describe(agent: str, started: object, cases: int) -> str:
    when = f", started {started:%Y-%m-%d %H:%M:%S}" if started is not None else ""
    return f"{agent or '(unnamed agent)'}{when}, {cases} case(s)"


def _incomplete(complete: bool) -> str:
    return "" if complete else " (incomplete: the run was interrupted or stopped early)"


def _row(name: str, a: float | None, b: float | None, delta: float | None, *, percent: bool) -> str:
    if percent:
        shown = [_pct(a), _pct(b), "-" if delta is None else f"{delta * 100:+.1f} pts"]
    else:
        shown = ["-" if a is None else f"{a:.3f}", "-" if b is None else f"{b:.3f}",
                 "-" if delta is None else f"{delta:+.3f}"]
    return f"{name:10}{shown[0]:>9}{shown[1]:>9}{shown[2]:>11}"



def _p(value: float) -> str:
    return f"{value:.3g}" if value >= 1e-4 else f"{value:.2e}"


def _where(case: CaseRef) -> str:
    return f"{case.file}:{case.line} {case.suite}::{case.name}"


def _flip(d: CaseDelta) -> str:
    return f"{_where(d)}  {d.status_a} -> {d.status_b}  (score {d.score_a:.2f} -> {d.score_b:.2f})"


def _rate(d: CaseDelta) -> str:
    return (f"{_where(d)}  {round(d.pass_rate_a * d.runs_a)}/{d.runs_a} -> "
            f"{round(d.pass_rate_b * d.runs_b)}/{d.runs_b} runs passed ({d.pass_rate_a:.0%} -> {d.pass_rate_b:.0%})")


def _section(title: str, entries: list[str], limit: int) -> list[str]:
    if not entries:
        return []
    shown = [f"  {e}" for e in entries[:limit]]
    if len(entries) > limit:
        shown.append(f"  ... and {len(entries) - limit} more (--json lists every one)")
    return ["", f"{title} ({len(entries)})", *shown]
