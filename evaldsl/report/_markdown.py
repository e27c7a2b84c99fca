"""A run record as a short Markdown summary, for CI job summaries and PR comments.

GitHub-flavoured Markdown: a headline with the counts, one table row per
suite and a total (passed / failed / errors / skipped, accuracy, average
score, latency p50 / p95), then the failed and errored cases with their
failed expectations. It is meant to be pasted where space is scarce (a PR
comment holds 65,536 characters), so it is bounded: at most `MAX_CASES`
cases and `MAX_EXPECTATIONS` expectations per case are listed (the rest are
counted), and each detail is cut to `MAX_DETAIL` characters.

Everything from a record is escaped for where it lands: Markdown and HTML
specials are backslash-escaped or turned into entities, so an agent's
answer cannot add a heading, a link, a table cell or an ``<img>``; newlines
are folded into one line; code spans get a fence longer than any run of
backticks inside; and ``|`` is escaped in table cells (inside code spans
too, as GFM tables require). Characters XML cannot hold are shown as escapes
here as well, since a CI page is HTML.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from ..run._record import CaseResult, EvalReport, Summary
from ..run._stats import summarize
from ._compare import CaseRef, Comparison, NotCompared
from ._json import write_atomic
from ._junit import clean
from ._numbers import num as _num
from ._numbers import pct as _pct
from ._numbers import secs as _secs
from ._terminal import failed_expectations, run_errors

MAX_CASES = 50
MAX_EXPECTATIONS = 10
MAX_DETAIL = 300
_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def markdown_summary(report: EvalReport) -> str:
    """The Markdown summary of a record (see the module docstring)."""
    s = report.summary
    who = report.meta.agent or "(unnamed agent)"
    lines = [f"### evaldsl: {_counts(s)} ({text(who)})", ""]
    if not report.meta.complete:
        lines += ["> **Incomplete run**: interrupted or stopped early; only the finished cases are shown.", ""]
    lines += _table(report.cases)
    ran = s.total - s.skipped
    lines += ["", f"accuracy {_pct(s.accuracy)} ({s.passed + s.xpassed}/{ran} cases that ran) · "
              f"average score {_num(s.average_score)} · runs {s.runs}"
              + (f" · tokens {s.tokens_total:,}" if s.tokens_total is not None else "")]
    failures = report.failures()
    if failures:
        lines += ["", f"#### Failed cases ({len(failures)})", ""]
        for case in failures[:MAX_CASES]:
            lines += _case(case)
        if len(failures) > MAX_CASES:
            lines.append(f"- … and {len(failures) - MAX_CASES} more")
    return "\n".join(lines) + "\n"


def write_markdown(report: EvalReport, path: str | os.PathLike[str]) -> None:
    """Write `markdown_summary` of ``report`` to ``path`` atomically."""
    write_atomic(path, markdown_summary(report))


def text(value: str) -> str:
    """``value`` as inline Markdown text that renders literally, on one line (safe in a table cell)."""
    value = " ".join(clean(value).split())
    value = _SPECIAL.sub(r"\\\1", value)
    return "".join(_HTML.get(ch, ch) for ch in value)


def code(value: str) -> str:
    """``value`` as an inline code span, on one line, whatever backticks it holds (not for table cells)."""
    value = " ".join(clean(value).split())
    longest = max((len(m) for m in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _table(cases: Sequence[CaseResult]) -> list[str]:
    header = ["suite", "passed", "failed", "errors", "skipped", "accuracy", "score", "latency p50 / p95"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["--:"] * (len(header) - 1)) + "|"]
    groups: dict[str, list[CaseResult]] = {}
    for case in cases:
        groups.setdefault(case.suite, []).append(case)
    for suite, members in groups.items():
        lines.append(_row(text(suite), summarize(members)))
    lines.append(_row("**total**", summarize(cases)))
    return lines


def _row(name: str, s: Summary) -> str:
    skipped = f"{s.skipped}" + (f" (+{s.xfailed} xfail)" if s.xfailed else "")
    passed = f"{s.passed}" + (f" (+{s.xpassed} xpass)" if s.xpassed else "")
    latency = f"{_secs(s.latency_p50_s)} / {_secs(s.latency_p95_s)}"
    cells = [name, passed, str(s.failed), str(s.errors), skipped, _pct(s.accuracy), _num(s.average_score), latency]
    return "| " + " | ".join(cells) + " |"


def _case(case: CaseResult) -> list[str]:
    n = len(case.runs)
    head = f"- **{case.status}** {text(case.suite)} › {text(case.name)} ({code(f'{case.file}:{case.line}')})"
    if n > 1:
        head += f", {sum(r.passed for r in case.runs)}/{n} runs passed (needed {case.required_pass_rate:.0%})"
    lines = [head]
    for (kind, message), count in run_errors(case).items():
        times = f" ({count} of {n} runs)" if n > 1 else ""
        lines.append(f"  - error {code(kind)}: {text(_cut(message))}{times}")
    failed = failed_expectations(case)
    for label, where, detail, count in failed[:MAX_EXPECTATIONS]:
        times = f" (failed in {count} of {n} runs)" if n > 1 else ""
        shown = f": {text(_cut(detail))}" if detail else ""
        lines.append(f"  - ✗ {code('expect ' + label)} at {code(where)}{times}{shown}")
    if len(failed) > MAX_EXPECTATIONS:
        lines.append(f"  - … and {len(failed) - MAX_EXPECTATIONS} more failed expectations")
    return lines


def _counts(s: Summary) -> str:
    parts = [(s.failed, "failed"), (s.errors, "errors" if s.errors != 1 else "error"), (s.passed, "passed"),
             (s.skipped, "skipped"), (s.xfailed, "xfailed"), (s.xpassed, "xpassed")]
    return ", ".join(f"{n} {word}" for n, word in parts if n) or "no cases"


def _cut(value: str) -> str:
    value = " ".join(value.split())
    return value if len(value) <= MAX_DETAIL else value[: MAX_DETAIL - 1] + "…"





def markdown_comparison(cmp: Comparison, *, a_name: str = "A", b_name: str = "B") -> str:
    """A `Comparison` as Markdown: verdict, the table of A, B and the delta, the flipped cases."""
    from ._compare_text import VERDICTS

    m = cmp.mcnemar
    lines = [f"### Comparison: {text(b_name)} against {text(a_name)}", "",
             f"**{VERDICTS[cmp.verdict]}** (exact McNemar p = {m.p_value:.3g}; {m.fixed} fixed, {m.regressed} "
             f"regressed, over {cmp.paired} paired cases)", "",
             "| | A | B | B - A |", "|---|--:|--:|--:|",
             f"| accuracy | {_pct(cmp.accuracy.a)} | {_pct(cmp.accuracy.b)} | "
             f"{'-' if cmp.accuracy.delta is None else f'{cmp.accuracy.delta * 100:+.1f} pts'} |",
             f"| score | {_num(cmp.score.a)} | {_num(cmp.score.b)} | "
             f"{'-' if cmp.score.delta is None else f'{cmp.score.delta:+.3f}'} |"]
    if cmp.bootstrap is not None:
        bs = cmp.bootstrap
        lines += ["", f"score difference {bs.mean_difference:+.3f}, {bs.confidence:.0%} interval "
                      f"[{bs.low:+.3f}, {bs.high:+.3f}] (paired bootstrap, {bs.resamples:,} resamples)"]
    sections: list[tuple[str, Sequence[CaseRef]]] = [
        ("Regressed", cmp.regressed), ("Fixed", cmp.fixed), ("Only in A", cmp.only_in_a),
        ("Only in B", cmp.only_in_b), ("Not compared", cmp.not_compared)]
    for title, cases in sections:
        if cases:
            lines += ["", f"#### {title} ({len(cases)})", ""]
            lines += [f"- {text(c.suite)} › {text(c.name)} ({code(f'{c.file}:{c.line}')})"
                      + (f": {text(c.reason)}" if isinstance(c, NotCompared) else "")
                      for c in cases[:MAX_CASES]]
            if len(cases) > MAX_CASES:
                lines.append(f"- … and {len(cases) - MAX_CASES} more")
    return "\n".join(lines) + "\n"
