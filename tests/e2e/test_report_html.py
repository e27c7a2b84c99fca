"""The HTML dashboard in a real headless browser (Debian's chromium, driven by Playwright).

The records are made by real runs of a scripted agent over .evl text, so
the page is tested on what `evaldsl run` writes. The browser is started
once per module; each test opens the page from file://, as a user does by
double-clicking it. Skipped only when chromium is not installed (`.ci/run`
installs it, so CI runs them).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from evaldsl import RunArtifacts, ScriptedAgent, ToolCall, compile, run_suite
from evaldsl.report._html import render_html, write_html
from evaldsl.report._html_compare import comparison_for

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")

XSS_SCRIPT = "<script>alert(1)</script>"
XSS_IMG = '"><img src=x onerror=alert(1)>'

SUITE = r'''suite "Maths"
tags maths

case "adds"
  prompt "add 2 and 2"
  expect called calculator with <op: add>
  expect final number is 4
  expect judge "shows the sum" at least 0.5

case "subtracts"
  prompt "subtract 1 from 3"
  expect final number is 2

case "flaky sum"
  prompt "flaky"
  repeat 3
  pass rate at least 0.5
  expect final number is 7

case "crashes"
  prompt "crash"
  expect final text contains "x"

case "<script>alert(1)</script>"
  tags xss
  prompt "xss"
  expect final text contains "never there"
'''

SUITE2 = r'''suite "Words"
tags words

case "\"><img src=x onerror=alert(1)>"
  prompt "greet"
  expect final text contains "hello"
'''


def _flaky() -> Any:
    count = {"n": 0}

    def reply(prompt: str) -> RunArtifacts:
        count["n"] += 1
        return RunArtifacts(final_text="7" if count["n"] % 2 else "8")
    return reply


def _crash(prompt: str) -> RunArtifacts:
    raise RuntimeError("the agent fell over")


def _agent(name: str, good: bool) -> ScriptedAgent:
    add = RunArtifacts(
        tool_calls=[ToolCall(name="calculator", args={"op": "add", "note": XSS_IMG}, result="4")],
        final_text="2 + 2 = 4",
        transcript=[
            {"role": "user", "content": "add 2 and 2"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
                "name": "calculator", "arguments": '{"op": "add", "note": "\\"><img src=x onerror=alert(1)>"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "4"},
            {"role": "assistant", "content": "2 + 2 = 4 " + XSS_SCRIPT},
        ],
        tokens=42,
    )
    return ScriptedAgent({
        "add 2 and 2": add,
        "subtract 1 from 3": "3 - 1 = 2" if good else "it is 5",
        "flaky": _flaky(),
        "crash": _crash,
        "xss": RunArtifacts(final_text="final " + XSS_SCRIPT + " " + XSS_IMG),
        "greet": "hello" if good else "bye",
    }, name=name)


JUDGE_REASONING = "It states 2 + 2 = 4 <b>plainly</b>"


def _judge(*, rubric: str, prompt: str, artifacts: RunArtifacts) -> Any:
    return 0.9, JUDGE_REASONING  # (score, reasoning), as a judge function may answer


def _record(name: str, good: bool) -> Any:
    suites = [compile(SUITE, "maths.evl"), compile(SUITE2, "words.evl")]
    return run_suite(_agent(name, good), [c for s in suites for c in s.cases], judge=_judge)


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    records = [("good.json", _record("agent-good", True)), ("weak.json", _record("agent-weak", False))]
    html = render_html(records, comparison=comparison_for(records))
    path = tmp_path_factory.mktemp("report") / "report.html"
    write_html(path, html)
    return path


@pytest.fixture(scope="module")
def browser() -> Any:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Page:
    """An opened dashboard, with the console errors and dialogs it produced."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", self._dialog)
        self.page.goto(path.as_uri())

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def texts(self, selector: str) -> list[str]:
        return [t.strip() for t in self.page.locator(selector).all_inner_texts()]

    def wait_rows(self, count: int) -> None:
        """Wait for the (debounced) search to leave ``count`` case rows."""
        from playwright.sync_api import expect

        expect(self.page.locator("#cases tbody tr[data-case]")).to_have_count(count)

    def case_names(self) -> list[str]:
        return self.texts("#cases tbody tr[data-case] button.case")


@pytest.fixture
def page(browser: Any, page_file: Path) -> Any:
    opened = Page(browser, page_file)
    yield opened
    opened.page.close()


def test_loads_from_file_with_no_console_error(page: Page) -> None:
    assert page.texts("#leaderboard tbody tr td:first-child") == ["agent-good", "agent-weak"]
    assert len(page.case_names()) == 6
    assert page.errors == []
    assert page.dialogs == []


def test_sorting_a_leaderboard_column_reorders_rows_and_toggles(page: Page) -> None:
    header = page.page.locator("#leaderboard th", has_text="Accuracy")
    header.click()  # numbers sort high first
    assert page.texts("#leaderboard tbody tr td:first-child") == ["agent-good", "agent-weak"]
    assert header.get_attribute("aria-sort") == "descending"
    header.click()
    assert page.texts("#leaderboard tbody tr td:first-child") == ["agent-weak", "agent-good"]
    assert header.get_attribute("aria-sort") == "ascending"
    header.focus()
    page.page.keyboard.press("Enter")  # the headers work from the keyboard too
    assert page.texts("#leaderboard tbody tr td:first-child") == ["agent-good", "agent-weak"]


BOARD_COLUMNS = ["Run", "Record", "Accuracy", "Avg score", "Passed", "Failed", "Errors", "Latency p50",
                 "Latency p95", "Tokens", "Date"]


@pytest.fixture(scope="module")
def board_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three records whose leaderboard figures are all different, each column ordering them otherwise."""
    from datetime import datetime, timezone

    base = _record("base", True)
    figures = [  # name, accuracy, score, passed, failed, errors, p50, p95, tokens, day
        ("bravo", 0.5, 0.7, 3, 2, 1, 0.030, 0.9, 10, 3),
        ("alpha", 0.9, 0.2, 1, 4, 3, 0.010, 0.5, 500, 1),
        ("charlie", 0.1, 0.9, 5, 1, 2, 0.020, 0.7, None, 2),
    ]
    records = []
    for i, (name, acc, score, passed, failed, errors, p50, p95, tokens, day) in enumerate(figures):
        summary = base.summary.model_copy(update={
            "accuracy": acc, "average_score": score, "passed": passed, "failed": failed, "errors": errors,
            "latency_p50_s": p50, "latency_p95_s": p95, "tokens_total": tokens})
        meta = base.meta.model_copy(update={"agent": name,
                                            "started_at": datetime(2026, 3, day, 12, tzinfo=timezone.utc)})
        records.append((f"{'zyx'[i]}.json", base.model_copy(update={"summary": summary, "meta": meta})))
    path = tmp_path_factory.mktemp("board") / "board.html"
    write_html(path, render_html(records))
    return path


# the expected order of the runs (by name) after one click on each header: names A to Z, numbers highest
# first, dates newest first, a missing value (charlie's tokens) last
FIRST_CLICK = {
    "Run": ["alpha", "bravo", "charlie"], "Record": ["charlie", "alpha", "bravo"],
    "Accuracy": ["alpha", "bravo", "charlie"], "Avg score": ["charlie", "bravo", "alpha"],
    "Passed": ["charlie", "bravo", "alpha"], "Failed": ["alpha", "bravo", "charlie"],
    "Errors": ["alpha", "charlie", "bravo"], "Latency p50": ["bravo", "charlie", "alpha"],
    "Latency p95": ["bravo", "charlie", "alpha"], "Tokens": ["alpha", "bravo", "charlie"],
    "Date": ["bravo", "charlie", "alpha"],
}


@pytest.mark.parametrize("column", BOARD_COLUMNS)
def test_every_leaderboard_column_sorts_and_reverses(browser: Any, board_file: Path, column: str) -> None:
    opened = Page(browser, board_file)
    try:
        runs = lambda: opened.texts("#leaderboard tbody tr td:first-child")  # noqa: E731
        assert runs() == ["bravo", "alpha", "charlie"]  # the order given
        assert opened.texts("#leaderboard thead th") == BOARD_COLUMNS
        header = opened.page.locator("#leaderboard thead th", has_text=column).first
        header.click()
        assert runs() == FIRST_CLICK[column]
        header.click()
        expected = FIRST_CLICK[column][::-1]
        if column == "Tokens":  # a run without token counts stays last either way
            expected = ["bravo", "alpha", "charlie"]
        assert runs() == expected
        assert opened.errors == []
    finally:
        opened.page.close()


def test_sorting_the_case_table_by_name(page: Page) -> None:
    page.page.locator("#cases th", has_text="Case").click()
    names = page.case_names()
    assert names == sorted(names, key=str.lower) or names == sorted(names)
    assert names != ["adds", "subtracts", "flaky sum", "crashes", XSS_SCRIPT, XSS_IMG]
    page.page.locator("#cases th", has_text="Case").click()
    assert page.case_names() == names[::-1]


def test_status_suite_and_tag_filters_hide_rows(page: Page) -> None:
    page.page.select_option("#f-status", "error")
    assert page.case_names() == ["crashes"]
    page.page.select_option("#f-status", "flaky")
    assert page.case_names() == ["flaky sum"]
    page.page.select_option("#f-status", "changed")  # passes for one agent, fails for the other
    assert set(page.case_names()) == {"subtracts", XSS_IMG}
    page.page.select_option("#f-status", "")
    page.page.select_option("#f-suite", "Words")
    assert page.case_names() == [XSS_IMG]
    page.page.select_option("#f-suite", "")
    page.page.select_option("#f-tag", "xss")
    assert page.case_names() == [XSS_SCRIPT]
    assert "1 of 6 cases" in page.page.inner_text("#f-count")


def test_text_search_over_case_names(page: Page) -> None:
    page.page.fill("#f-search", "SUB")
    page.wait_rows(1)
    assert page.case_names() == ["subtracts"]
    page.page.fill("#f-search", "no such case")
    page.wait_rows(0)
    assert "no case matches" in page.page.inner_text("#p-info")


def test_heatmap_marks_flaky_cases_and_errors_with_symbols(page: Page) -> None:
    flaky = page.texts('#cases tbody tr[data-case="2"] td.cell')
    assert flaky == ["~ 2/3", "~ 2/3"]
    assert page.texts('#cases tbody tr[data-case="3"] td.cell') == ["! error", "! error"]
    assert page.texts('#cases tbody tr[data-case="1"] td.cell') == ["\u2713", "\u2717"]

    def rgb(row: int, column: int) -> tuple[int, ...]:
        colour = page.page.locator(f'#cases tbody tr[data-case="{row}"] td.cell >> nth={column}').evaluate(
            "td => getComputedStyle(td).backgroundColor")
        return tuple(int(x) for x in colour[colour.index("(") + 1:colour.index(")")].split(",")[:3])

    passed, failed, flaky = rgb(1, 0), rgb(1, 1), rgb(2, 0)  # pass rates 1, 0 and 2/3
    assert passed[1] > passed[0] and failed[0] > failed[1]  # green for 100%, red for 0%
    assert passed[0] < flaky[0] < failed[0]  # 2/3 lies between them, nearer green


def test_expander_opens_with_transcript_expectations_and_source(page: Page) -> None:
    page.page.locator("button.case", has_text="adds").click()
    detail = page.page.locator('tr.detail[data-detail="0"]')
    text = detail.inner_text()
    assert "add 2 and 2" in text  # the prompt
    assert "call calculator (call_1)" in text  # a tool call from the transcript, with its arguments
    assert '"op": "add"' in text
    assert "RESULT OF CALL_1" in text.upper()
    assert "2 + 2 = 4" in text  # final answer
    assert "called calculator with <op: add>" in text and "final number is 4" in text
    assert "maths.evl:4" in text  # the case's file and line
    assert "judge \"shows the sum\" at least 0.5" in text and JUDGE_REASONING in text  # the judge's reasoning
    assert "maths.evl:8" in text  # the line the judge expectation is written on
    assert page.page.locator("button.case", has_text="adds").get_attribute("aria-expanded") == "true"
    page.page.locator("button.case", has_text="adds").click()
    assert page.page.locator("tr.detail").count() == 0


def test_expander_shows_failure_details_and_errors(page: Page) -> None:
    page.page.locator("button.case", has_text="subtracts").click()
    text = page.page.locator('tr.detail[data-detail="1"]').inner_text()
    assert "it is 5" in text and "failed" in text
    page.page.locator("button.case", has_text="crashes").click()
    text = page.page.locator('tr.detail[data-detail="3"]').inner_text()
    assert "RuntimeError: the agent fell over" in text


def test_xss_strings_show_as_text_and_run_nothing(page: Page) -> None:
    for name in (XSS_SCRIPT, XSS_IMG):
        page.page.locator("button.case", has_text=name).click()
    page.page.locator("button.case", has_text="adds").click()
    body = page.page.inner_text("body")
    assert XSS_SCRIPT in page.case_names() and XSS_IMG in page.case_names()  # case names, as text
    assert "final " + XSS_SCRIPT + " " + XSS_IMG in body  # final text
    assert "2 + 2 = 4 " + XSS_SCRIPT in body  # transcript content
    assert '"note": "\\"><img src=x onerror=alert(1)>"' in body  # tool arguments
    assert page.page.locator("img").count() == 0  # nothing parsed as markup
    assert page.page.locator("script:not([type])").count() == 1  # only the page's own script
    assert page.dialogs == []
    assert page.errors == []


def test_two_records_show_their_comparison(page: Page) -> None:
    section = page.page.locator("#comparison")
    assert section.is_visible()
    text = section.inner_text()
    assert "A: agent-good \u00b7 good.json" in text and "B: agent-weak \u00b7 weak.json" in text
    assert "no significant difference between A and B" in text
    assert "Regressed (passed in A, not in B) (2)" in text
    assert "maths.evl:10 Maths::subtracts passed -> failed" in text
    assert "Words::" + XSS_IMG in text  # a case name in the comparison, as text


def test_screenshot_is_kept(page: Page, request: pytest.FixtureRequest) -> None:
    """The shot outlives the test run: .pytest_cache/d/dashboard/dashboard.png, for CI to keep or a person to see."""
    page.page.locator("button.case", has_text="adds").click()
    shot = request.config.cache.mkdir("dashboard") / "dashboard.png"
    shot.unlink(missing_ok=True)
    page.page.screenshot(path=str(shot), full_page=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000


def test_many_cases_are_shown_a_page_at_a_time(browser: Any, tmp_path: Path) -> None:
    lines = ['suite "Big"']
    for i in range(250):
        lines += [f'case "case {i:03d}"', f'  prompt "p{i}"', '  expect final text contains "ok"']
    suite = compile("\n".join(lines) + "\n", "big.evl")
    record = run_suite(ScriptedAgent(default="ok", name="big"), suite)
    path = tmp_path / "big.html"
    write_html(path, render_html([("big.json", record)]))
    opened = Page(browser, path)
    try:
        assert len(opened.case_names()) == 100
        assert opened.case_names()[0] == "case 000"
        opened.page.click("#p-next")
        assert opened.case_names()[0] == "case 100"
        opened.page.fill("#f-search", "case 24")
        opened.wait_rows(10)
        assert opened.case_names()[0] == "case 240"
        assert opened.errors == []
    finally:
        opened.page.close()


def test_odd_transcripts_skips_and_empty_answers_draw_without_errors(browser: Any, tmp_path: Path) -> None:
    odd = RunArtifacts(final_text=None, tokens=None, transcript=[
        None, 3, "plain text", ["a", {"b": 1}], {"no_role": True},
        {"role": "user", "content": [{"type": "text", "text": "parts"}]},
        {"role": "assistant", "content": "", "tool_calls": "not a list"},
        {"role": "assistant", "tool_calls": [None, {"function": {"name": "f", "arguments": "{not json"}},
                                             {"name": "g", "args": {"x": [1, 2]}}]},
        {"role": {"nested": 1}, "content": {"k": "v"}, "name": 5},
    ], tool_calls=[ToolCall(name="raw", args="{broken", result=None)])
    suite = compile('suite "Odd"\n\ncase "odd"\n  prompt "odd"\n  expect final text contains "x"\n\n'
                    'case "skipped"\n  skip "not today"\n  prompt "s"\n  expect no error\n', "odd.evl")
    record = run_suite(ScriptedAgent({"odd": odd}, name="odd"), suite)
    path = tmp_path / "odd.html"
    write_html(path, render_html([("odd.json", record)]))
    opened = Page(browser, path)
    try:
        for name in ("odd", "skipped"):
            opened.page.locator("button.case", has_text=name).first.click()
        text = opened.page.inner_text("tr.detail >> nth=0")
        assert "(no final answer)" in text and "plain text" in text and "{not json" in text and "{broken" in text
        assert "skipped: not today" in opened.page.inner_text("tr.detail >> nth=1")
        assert opened.texts('#cases tbody tr[data-case="1"] td.cell') == ["\u2013 skip"]
        assert opened.errors == []
    finally:
        opened.page.close()


def test_a_conversation_shows_as_turns_each_with_its_calls_reply_state_and_expectations(
        browser: Any, tmp_path: Path) -> None:
    suite = compile('suite "Talk"\n\ncase "two turns"\n  expect final text contains "bye"\n'
                    '  user "hello"\n    expect called greet\n'
                    '  user "and <b>now</b>?"\n    expect final text contains "never"\n', "talk.evl")

    def agent(message: str, ctx: Any) -> RunArtifacts:
        if ctx.turn == 1:
            return RunArtifacts(tool_calls=[ToolCall(name="greet", args={"who": "you"}, result="hi")],
                                final_text="hi there")
        return RunArtifacts(final_text="bye " + XSS_SCRIPT)

    record = run_suite(agent, suite)
    path = tmp_path / "talk.html"
    write_html(path, render_html([("talk.json", record)]))
    opened = Page(browser, path)
    try:
        opened.page.locator("button.case", has_text="two turns").click()
        text = opened.page.inner_text("tr.detail >> nth=0")
        assert "Conversation: 2 turn(s); every scripted message was answered" in text
        first, second = text.upper().index("TURN 1"), text.upper().index("TURN 2")  # role lines are upper-cased
        assert first < text.index("hello", first) < text.index("greet", first) < text.index("hi there", first) < second
        assert second < text.index("and <b>now</b>?") < text.index("bye " + XSS_SCRIPT)
        assert "Expectations of turn 2" in text and 'final text contains "never"' in text
        assert text.index("Expectations of the whole conversation") > second
        assert opened.errors == [] and opened.dialogs == []
    finally:
        opened.page.close()
