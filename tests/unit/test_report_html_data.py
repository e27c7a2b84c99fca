"""The data the dashboard's template receives, and the rendered shell, without a browser."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaldsl import CaseResult, EvalReport, ExpectationResult, RunArtifacts, RunMeta, RunResult, Summary, ToolCall
from evaldsl.report._html import render_html, render_page, script_json
from evaldsl.report._html_data import build_page_data

XSS = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "</script><!-- x", "a & b"]


def _run(index: int, passed: bool, *, error: bool = False, text: str = "ok") -> RunResult:
    from evaldsl.run._record import ErrorInfo

    return RunResult(
        index=index, passed=passed and not error, score=1.0 if passed and not error else 0.0, latency_s=0.01,
        error=ErrorInfo(type="RuntimeError", message="boom", kind="agent_raised") if error else None,
        expectations=[] if error else [ExpectationResult(
            label='final text contains "ok"', passed=passed, credit=1.0 if passed else 0.0,
            detail=None if passed else "judge: the answer is off topic", file="s.evl", line=5)],
        artifacts=None if error else RunArtifacts(
            final_text=text, tool_calls=[ToolCall(name="search", args={"q": XSS[1]}, result=XSS[0])],
            transcript=[{"role": "user", "content": XSS[0]}]),
    )


def _case(name: str, status: str, runs: list[RunResult], *, suite: str = "S", file: str = "s.evl",
          tags: list[str] | None = None) -> CaseResult:
    passed = sum(r.passed for r in runs)
    return CaseResult(suite=suite, name=name, file=file, line=3, prompt=f"prompt of {name}", status=status,  # type: ignore[arg-type]
                      score=passed / len(runs) if runs else None, pass_rate=passed / len(runs) if runs else None,
                      repeat=max(1, len(runs)), tags=tags or [], runs=runs)


def _record(agent: str, cases: list[CaseResult], accuracy: float = 0.5) -> EvalReport:
    return EvalReport(meta=RunMeta(agent=agent, complete=True, command="evaldsl run --agent x SECRET_ARG"),
                      summary=Summary(total=len(cases), accuracy=accuracy, average_score=accuracy), cases=cases)


def _two_records() -> list[tuple[str, EvalReport]]:
    a = _record("A", [
        _case("one", "passed", [_run(0, True)], tags=["t1"]),
        _case("flaky", "passed", [_run(0, True), _run(1, False), _run(2, True)]),
        _case("crash", "error", [_run(0, False, error=True)]),
        _case(XSS[0], "failed", [_run(0, False, text=XSS[1])], suite="Other", file="o.evl"),
    ])
    b = _record("B", [
        _case("one", "failed", [_run(0, False)], file="./s.evl", tags=["t2"]),
        _case("only in b", "passed", [_run(0, True)]),
    ], accuracy=0.9)
    return [("runs/a.json", a), ("runs/b.json", b)]


def test_runs_become_leaderboard_rows_with_only_what_a_reader_needs() -> None:
    page = build_page_data(_two_records())
    runs = page.summary["runs"]
    assert [r["label"] for r in runs] == ["A", "B"]
    assert [r["source"] for r in runs] == ["a.json", "b.json"]
    assert runs[1]["accuracy"] == 0.9
    assert "command" not in runs[0]
    assert "SECRET_ARG" not in json.dumps(page.summary) + json.dumps(page.details)


def test_cases_line_up_by_suite_and_name_across_records() -> None:
    page = build_page_data(_two_records())
    names = [c["name"] for c in page.summary["cases"]]
    assert names == ["one", "flaky", "crash", XSS[0], "only in b"]
    one = page.summary["cases"][0]
    assert [c["status"] for c in one["cells"]] == ["passed", "failed"]  # the same file, written differently
    assert one["tags"] == ["t1", "t2"]
    assert page.summary["cases"][4]["cells"][0] is None  # not in record A
    assert page.details[4][0] is None and page.details[4][1]["prompt"] == "prompt of only in b"
    assert page.summary["suites"] == ["Other", "S"]


def test_a_case_whose_file_moved_is_two_rows_as_compare_sees_it() -> None:
    a = _record("A", [_case("x", "passed", [_run(0, True)], file="old/s.evl")])
    b = _record("B", [_case("x", "failed", [_run(0, False)], file="new/s.evl")])
    cases = build_page_data([("a.json", a), ("b.json", b)]).summary["cases"]
    assert [[c is not None for c in case["cells"]] for case in cases] == [[True, False], [False, True]]


def test_a_repeated_case_in_one_record_is_kept() -> None:
    record = _record("A", [_case("x", "passed", [_run(0, True)]), _case("x", "failed", [_run(0, False)])])
    cases = build_page_data([("r.json", record)]).summary["cases"]
    assert [c["cells"][0]["status"] for c in cases] == ["passed", "failed"]


def test_same_suite_name_in_two_files_keeps_both_cases() -> None:
    record = _record("A", [_case("x", "passed", [_run(0, True)], file="a.evl"),
                           _case("x", "failed", [_run(0, False)], file="b.evl")])
    cases = build_page_data([("r.json", record)]).summary["cases"]
    assert [(c["file"], c["cells"][0]["status"]) for c in cases] == [("a.evl", "passed"), ("b.evl", "failed")]


def test_cells_mark_flaky_cases_and_errored_runs() -> None:
    cells = {c["name"]: c["cells"][0] for c in build_page_data(_two_records()).summary["cases"]}
    assert cells["flaky"]["flaky"] is True and (cells["flaky"]["passed"], cells["flaky"]["runs"]) == (2, 3)
    assert cells["one"]["flaky"] is False
    assert cells["crash"]["errors"] == 1 and cells["crash"]["status"] == "error"
    assert cells["crash"]["error_kinds"] == ["agent_raised"] and cells["one"]["error_kinds"] == []


def test_an_error_without_a_kind_from_a_version_1_record_is_unknown() -> None:
    from evaldsl.run._record import ErrorInfo

    run_ = _run(0, False, error=True).model_copy(update={"error": ErrorInfo(type="RuntimeError", message="boom")})
    record = _record("a", [_case("old", "error", [run_])])
    assert build_page_data([("r.json", record)]).summary["cases"][0]["cells"][0]["error_kinds"] == ["unknown"]


def test_details_hold_transcript_tool_calls_expectations_and_source() -> None:
    detail = build_page_data(_two_records()).details[3][0]
    assert detail is not None
    assert (detail["file"], detail["line"], detail["prompt"]) == ("o.evl", 3, f"prompt of {XSS[0]}")
    run = detail["runs"][0]
    assert run["artifacts"]["transcript"] == [{"role": "user", "content": XSS[0]}]
    assert run["artifacts"]["tool_calls"][0] == {"name": "search", "args": {"q": XSS[1]}, "result": XSS[0]}
    assert run["expectations"][0]["detail"] == "judge: the answer is off topic"


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=20))
def test_script_json_has_no_markup_characters_and_round_trips(value: Any) -> None:
    text = script_json(value)
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == value


@pytest.mark.parametrize("payload", XSS)
def test_script_json_escapes_breakout_strings(payload: str) -> None:
    text = script_json({"s": payload})
    assert "</" not in text and "<!--" not in text
    assert json.loads(text) == {"s": payload}


def test_script_json_keeps_non_finite_numbers_as_strings() -> None:
    assert json.loads(script_json({"x": float("nan"), "y": [float("inf")]})) == {"x": "NaN", "y": ["Infinity"]}


class _Scripts(HTMLParser):
    """Collects every element and the text of each <script> as a browser's tokenizer would split it."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in = dict(attrs)
            self.scripts.append((self._in, ""))

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in = None


def _parse(html: str) -> _Scripts:
    parser = _Scripts()
    parser.feed(html)
    return parser


def test_rendered_page_carries_the_data_in_json_blocks_that_parse_back() -> None:
    records = _two_records()
    page = build_page_data(records)
    parsed = _parse(render_page(page))
    blocks = {a.get("id"): text for a, text in parsed.scripts if a.get("type") == "application/json"}
    summary = json.loads(blocks["evaldsl-data"])
    assert [c["name"] for c in summary["cases"]] == [c["name"] for c in page.summary["cases"]]
    assert json.loads(blocks["evaldsl-case-3"]) == page.details[3]
    code = [text for a, text in parsed.scripts if "type" not in a]
    assert len(code) == 1  # one script that runs: the page's own
    assert sum(1 for tag, _ in parsed.tags if tag == "img") == 0  # no XSS payload became an element


def test_rendered_page_is_self_contained_and_its_policy_names_its_script() -> None:
    import base64
    import hashlib

    html = render_html(_two_records(), title='<b>"title"</b>')
    parsed = _parse(html)
    for tag, attrs in parsed.tags:
        assert "src" not in attrs and not (tag == "link" and "href" in attrs), (tag, attrs)
    assert not re.search(r"https?://", html.split("<script>")[-1])  # the script fetches nothing
    policy = next(a["content"] for t, a in parsed.tags if a.get("http-equiv") == "Content-Security-Policy")
    assert policy is not None and "default-src 'none'" in policy
    code = next(text for a, text in parsed.scripts if "type" not in a)
    digest = base64.b64encode(hashlib.sha256(code.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy
    assert "<title>&lt;b&gt;&#34;title&#34;&lt;/b&gt;</title>" in html


def test_no_environment_variable_reaches_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALDSL_UPLOAD_TOKEN", "tok-d41d8cd98f00")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-7f3a9c")
    html = render_html(_two_records())
    assert "tok-d41d8cd98f00" not in html and "sk-test-7f3a9c" not in html


def test_default_title_names_the_agents() -> None:
    assert build_page_data(_two_records()).title == "evaldsl report: A, B"


def test_two_records_get_the_comparison_of_b_against_a_as_text() -> None:
    from evaldsl.report._html_compare import comparison_for

    records = _two_records()
    view = comparison_for(records)
    assert view is not None
    assert view["a"] == "A \u00b7 a.json" and view["b"] == "B \u00b7 b.json"
    assert view["verdict"].startswith("no significant difference between A and B")
    titles = {entry["title"].split(" (")[0]: entry["items"] for entry in view["lists"]}
    assert [item.split("  ")[0] for item in titles["Regressed"]] == ["s.evl:3 S::one"]
    assert len(titles["Only in A"]) == 3 and len(titles["Only in B"]) == 1
    assert view["metrics"][0] == {"name": "accuracy (paired cases)", "a": "100.0%", "b": "0.0%", "delta": "-100.0 pts"}
    assert any("exact McNemar p = 1" in s for s in view["statements"])
    assert all(isinstance(v, str) for entry in view["lists"] for v in entry["items"])
    assert comparison_for(records[:1]) is None and comparison_for(records + records[:1]) is None


def test_the_comparison_reaches_the_page_data() -> None:
    from evaldsl.report._html_compare import comparison_for

    records = _two_records()
    page = build_page_data(records, comparison=comparison_for(records))
    assert page.summary["comparison"]["verdict"].startswith("no significant difference")
    assert build_page_data(records).summary["comparison"] is None
