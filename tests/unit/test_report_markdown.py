"""The Markdown summary: the table, the failed cases, and escaping that holds for any text."""

from __future__ import annotations

import re

from _records import case, record, run
from hypothesis import given, settings
from hypothesis import strategies as st
from test_report_junit import sample

from evaldsl.report import _markdown
from evaldsl.report._markdown import code, markdown_summary, text, write_markdown


def table_rows(md: str) -> list[list[str]]:
    """The table's rows split on unescaped pipes."""
    return [re.split(r"(?<!\\)\|", line)[1:-1] for line in md.splitlines() if line.startswith("|")]


def test_table_has_a_row_per_suite_and_a_total() -> None:
    md = markdown_summary(sample())
    assert md.startswith("### evaldsl: 2 failed, 1 error, 2 passed, 1 skipped, 1 xfailed (agent-a)\n")
    rows = table_rows(md)
    assert [r[0].strip() for r in rows] == ["suite", "---", "Math", "Chat", "**total**"]
    assert [c.strip() for c in rows[2]] == ["Math", "1", "2", "1", "1 (+1 xfail)", "20.0%", "0.33", "500ms / 1.50s"]
    assert [c.strip() for c in rows[4]][1:6] == ["2", "2", "1", "1 (+1 xfail)", "33.3%"]
    assert "accuracy 33.3% (2/6 cases that ran)" in md


def test_failed_cases_list_their_failed_expectations() -> None:
    md = markdown_summary(sample())
    assert "#### Failed cases (3)" in md
    assert ("- **failed** Math › wrong (`suites/m.evl:7`)\n"
            "  - ✗ `expect final number is 4` at `suites/m.evl:4`: expected the last number to be 4, got 5") in md
    assert "- **error** Math › boom (`suites/m.evl:2`)\n  - error `ConnectionError`: refused" in md
    assert "2/3 runs passed (needed 90%)" in md and "(failed in 1 of 3 runs)" in md
    assert "Math › adds" not in md and "later" not in md  # passed and skipped cases are not listed


def test_a_clean_run_lists_no_failures_and_an_incomplete_one_says_so() -> None:
    ok = record(case("a", run()))
    md = markdown_summary(ok)
    assert "Failed cases" not in md and "Incomplete" not in md
    ok.meta.complete = False
    assert "**Incomplete run**" in markdown_summary(ok)


def test_pipes_backticks_and_html_are_escaped() -> None:
    nasty = "a|b `tick` <script>alert(1)</script> [x](http://e) *bold* _u_\nsecond line"
    report = record(case(nasty, run(failed=[("final text is `x|y`", nasty)]), suite=nasty))
    md = markdown_summary(report)
    rows = table_rows(md)
    assert all(len(r) == 8 for r in rows)  # the suite name added no cell
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert "a\\|b \\`tick\\`" in md and "\\[x\\](http://e) \\*bold\\* \\_u\\_ second line" in md
    assert "``expect final text is `x|y` ``" not in md and "`` expect final text is `x|y` ``" in md


def test_details_are_cut_and_the_list_is_bounded(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(_markdown, "MAX_CASES", 2)
    report = record(*(case(f"c{i}", run(failed=[("x", "y" * 1000)])) for i in range(5)))
    md = markdown_summary(report)
    assert md.count("- **failed**") == 2 and "- … and 3 more" in md
    assert "y" * 299 + "…" in md and "y" * 301 not in md


def test_write_markdown(tmp_path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "summary.md"
    write_markdown(sample(), target)
    assert target.read_text(encoding="utf-8") == markdown_summary(sample())


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_text_is_one_line_with_no_live_markup(value: str) -> None:
    shown = text(value)
    assert "\n" not in shown and "\r" not in shown
    assert "<" not in shown and ">" not in shown
    assert not re.search(r"(?<!\\)[|`*_\[\]~]", shown.replace("\\\\", ""))


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_code_span_fence_is_longer_than_any_backtick_run(value: str) -> None:
    span = code(value)
    fence = re.match(r"`+", span).group()  # type: ignore[union-attr]
    inner = span[len(fence):-len(fence)]
    assert span.endswith(fence) and "\n" not in span
    assert all(len(run_) < len(fence) for run_ in re.findall(r"`+", inner))


def test_fast_latencies_keep_their_digits() -> None:
    md = markdown_summary(record(case("quick", run(latency=0.0004)), case("slow", run(latency=2.5))))
    assert "| 0.40ms / 2.50s |" in md
