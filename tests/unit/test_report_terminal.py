"""The terminal report: progress lines and bar, the summary, failures spelled out."""

from __future__ import annotations

import io
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.artifacts import RunArtifacts
from evaldsl.compile._model import CaseSettings, CompiledCase, CompiledExpectation, Outcome
from evaldsl.report._progress import Progress, use_colour
from evaldsl.report._terminal import format_report
from evaldsl.run._api import run_suite
from evaldsl.run._record import CaseResult, ErrorInfo, EvalReport, ExpectationResult, RunResult
from evaldsl.run._scripted import ScriptedAgent


def number_is(n: int, line: int) -> CompiledExpectation:
    def check(ctx):  # type: ignore[no-untyped-def]
        ok = ctx.artifacts.final_text == str(n)
        return Outcome(1.0 if ok else 0.0,
                       None if ok else f"expected the last number to be {n}, got {ctx.artifacts.final_text}")

    return CompiledExpectation(label=f"final number is {n}", file="suites/math.evl", line=line, check=check)


def case(name: str, prompt: str, *exps: CompiledExpectation, suite: str = "Math", file: str = "suites/math.evl",
         **settings: object) -> CompiledCase:
    return CompiledCase(suite=suite, name=name, file=file, line=10, prompt=prompt,
                        settings=CaseSettings(**settings), expectations=exps)  # type: ignore[arg-type]


def report() -> EvalReport:
    flaky = iter(["4", "5", "5"])
    agent = ScriptedAgent({
        "two": "4", "bad": "5", "boom": lambda p: (_ for _ in ()).throw(ConnectionError("refused")),
        "flaky": lambda p: next(flaky), "hi": RunArtifacts(final_text="4", tokens=12),
    })
    return run_suite(agent, [
        case("adds", "two", number_is(4, 12)),
        case("wrong sum", "bad", number_is(4, 21), number_is(5, 22)),
        case("crashes", "boom", number_is(4, 30)),
        case("flaky", "flaky", number_is(4, 40), repeat=3, pass_rate=0.6),
        case("skipped", "two", number_is(4, 50), skip="later"),
        case("greets", "hi", number_is(4, 3), suite="Chat", file="suites/chat.evl", xfail=""),
    ], concurrency=1)


def test_summary_spells_out_failures_with_detail_and_location() -> None:
    text = format_report(report(), elapsed_s=1.5)
    assert "FAILED suites/math.evl:10 Math::wrong sum" in text
    assert "x expect final number is 4  (suites/math.evl:21)" in text
    assert "expected the last number to be 4, got 5" in text
    assert "final number is 5" not in text  # the expectation that held is not listed
    assert "ERROR suites/math.evl:10 Math::crashes" in text
    assert "error: ConnectionError: refused" in text
    assert "FAILED suites/math.evl:10 Math::flaky  (1/3 runs passed, needed 60%)" in text
    assert "x expect final number is 4  (suites/math.evl:40) [failed in 2 of 3 runs]" in text
    assert "Math::adds" not in text and "skipped" in text
    last = text.rstrip().splitlines()[-1]
    assert re.search(r"=+ 2 failed, 1 passed, 1 skipped, 1 xpassed, 1 error in 1\.50s =+", last)


def test_control_characters_in_an_agents_error_are_shown_escaped_and_kept_in_the_record() -> None:
    """A NUL or an escape sequence (one that would clear the screen) in an agent's error reaches the terminal
    as a visible ``\\xNN``; the record keeps the message as it was."""
    agent = ScriptedAgent({"boom": lambda p: (_ for _ in ()).throw(RuntimeError("bad\x00 \x1b[2J\ttab\nline"))})
    rec = run_suite(agent, [case("crashes", "boom", number_is(4, 30))], concurrency=1)
    text = format_report(rec, elapsed_s=0.1)
    assert "error: RuntimeError: bad\\x00 \\x1b[2J\ttab\n    line" in text
    assert "\x00" not in text and "\x1b" not in text
    assert rec.cases[0].runs[0].error.message == "bad\x00 \x1b[2J\ttab\nline"


def test_table_has_a_row_per_suite_and_totals() -> None:
    lines = format_report(report()).splitlines()
    header = lines[0].split()
    assert header[:3] == ["suite", "file", "cases"] and "accuracy" in header
    rows = {line.split()[0]: line.split() for line in lines[1:4]}
    assert rows["Math"][1:8] == ["suites/math.evl", "5", "1", "2", "1", "1", "0"]
    assert rows["Chat"][2:10] == ["1", "0", "0", "0", "0", "0", "1", "100.0%"]
    assert rows["total"][1] == "6"
    text = "\n".join(lines)
    assert "accuracy 40.0% (2/5 cases that ran)" in text
    assert "tokens 12 total, 12.0 mean" in text


def test_all_green_and_notes() -> None:
    ok = run_suite(ScriptedAgent({"two": "4"}), [case("adds", "two", number_is(4, 1))])
    text = format_report(ok, note="stopped after the first failure (-x)")
    assert "short summary" not in text and "stopped after the first failure (-x)" in text
    assert text.rstrip().endswith("=")
    assert "1 passed" in text and "tokens" not in text
    coloured = format_report(ok, colour=True)
    assert "\x1b[32m" in coloured and "\x1b[" not in text


def test_plain_progress_prints_one_line_per_case() -> None:
    stream = io.StringIO()
    progress = Progress(6, stream=stream)
    for result in report().cases:
        progress.update(result)
    progress.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 6 and "\r" not in stream.getvalue()
    assert lines[0].startswith("PASSED  suites/math.evl::adds (")
    assert lines[2].startswith("ERROR   suites/math.evl::crashes")
    assert lines[4] == "SKIPPED suites/math.evl::skipped"
    assert lines[5].startswith("XPASS   suites/chat.evl::greets")


def test_live_progress_redraws_one_line_with_counts() -> None:
    stream = io.StringIO()
    progress = Progress(6, stream=stream, live=True)
    for result in report().cases[:3]:
        progress.update(result)
    progress.tick()
    out = stream.getvalue()
    assert out.count("\r") == 4 and "\n" not in out
    last = out.split("\r")[-1]
    assert re.match(r"\[#{5,}-+\] 3/6  1 failed  1 passed  1 error  \d+\.\ds\x1b\[K$", last)
    progress.close()
    assert stream.getvalue().endswith("\r\x1b[K")


def test_colour_only_on_a_terminal_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_colour(Tty()) and not use_colour(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_colour(Tty())


@pytest.mark.parametrize(("block", "backwards"), [(1, True), (1, False), (64, True), (64, False), (1 << 16, True)])
def test_listed_texts_survive_the_spool_going_to_disk_and_keep_record_order(
        monkeypatch: pytest.MonkeyPatch, block: int, backwards: bool) -> None:
    """The digest keeps listed cases' texts in a spool, not in memory: past its size they are on disk,
    and the summary is the same, in record order, whatever order the cases finished in (the spool is
    read back a block at a time: texts cut out of a block, or across blocks, read the same)."""
    from evaldsl.report._terminal import Digest

    whole = report()
    expected = format_report(whole, elapsed_s=1.0)
    monkeypatch.setattr(Digest, "SPOOL_BYTES", 16)  # rolls over to a temporary file at the first text
    monkeypatch.setattr(Digest, "BLOCK", block)  # 1: each text goes to the spool as it comes
    digest = Digest()
    order = list(enumerate(whole.cases))
    for position, case in reversed(order) if backwards else order:  # finished in reverse order, or in order
        digest.add(case, position)
    assert digest._spool._rolled or block > 64  # type: ignore[attr-defined] (a large block: still in memory)
    assert digest.render(whole.summary, elapsed_s=1.0) == expected
    assert expected.index("Math::wrong sum") < expected.index("Math::crashes") < expected.index("Math::flaky")


def test_the_summary_reaches_an_unbuffered_stream_in_blocks() -> None:
    """Under PYTHONUNBUFFERED every write to stdout is a system call: the listing of thousands of failures
    goes out in a few large writes, and reads the same."""
    from evaldsl.report._terminal import Digest

    whole = report()
    failing = [c for c in whole.cases if c.status in ("failed", "error")]
    digest = Digest()
    for position in range(3000):
        digest.add(failing[position % len(failing)], position)

    class Counting(io.StringIO):
        writes = 0

        def write(self, text: str) -> int:
            Counting.writes += 1
            return super().write(text)

    out = Counting()
    digest.write(out, elapsed_s=1.0)
    assert out.getvalue() == digest.render(elapsed_s=1.0)
    assert out.getvalue().count("\nFAILED ") + out.getvalue().count("\nERROR ") >= 3000
    assert Counting.writes < 30  # a write a listing would be over 3,000


_STATS = st.tuples(
    st.sampled_from(["passed", "failed", "error", "skipped", "xfailed", "xpassed"]),
    st.one_of(st.none(), st.floats(min_value=-1.0, max_value=2.0)),
    st.lists(st.floats(min_value=0.0, max_value=1e6, allow_nan=False), max_size=3).map(tuple),
    st.lists(st.integers(min_value=0, max_value=2**70), max_size=3).map(tuple),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a.evl", "b.evl", "c.evl"]), _STATS), max_size=40))
def test_the_digest_summary_is_summarize_stats_of_the_same_cases(cases: list) -> None:  # type: ignore[type-arg]
    """The digest keeps each case's numbers in arrays, a group a file: its summaries (the whole run's, in
    the order groups were first seen, and each table row's) are `summarize_stats` of the same `CaseStats`,
    number for number, tokens past 2**63 included."""
    from evaldsl.report._terminal import _Group, _summary
    from evaldsl.run._stats import summarize_stats

    groups: dict[str, _Group] = {}
    for file, stats in cases:
        groups.setdefault(file, _Group(0)).add(stats)
    assert _summary(list(groups.values())) == summarize_stats([s for f in groups for g, s in cases if g == f])
    for file, group in groups.items():
        assert _summary([group]) == summarize_stats([s for g, s in cases if g == file])


def _general_digest() -> object:
    """A `Digest` that takes the general path for every case (what the fast path must match)."""
    from evaldsl.report._terminal import Digest

    class General(Digest):
        def _add_plain(self, case, run, group, position):  # type: ignore[no-untyped-def]
            self._add_general(case, group, position)

    return General()


_TEXT = st.one_of(st.sampled_from(["", "a", "line\nnext", "é ü", "\ud800 lone", "x" * 50]), st.text(max_size=8))
_FILES = st.sampled_from(["suites/a.evl", "b.evl", os.path.join(os.getcwd(), "in.evl"), "/elsewhere/out.evl"])
_EXPECTATION = st.builds(
    lambda label, passed, credit, detail, file, line: ExpectationResult(
        label=label, passed=passed, credit=credit, detail=detail, file=file, line=line),
    st.sampled_from(["final number is 4", "calls are calculator", "no error"]), st.booleans(),
    st.sampled_from([0.0, 0.5, 1.0]), st.one_of(st.none(), _TEXT), _FILES, st.integers(1, 4))
_RUN = st.builds(
    lambda passed, expectations, error, warnings, tokens, latency: RunResult(
        index=0, passed=passed, score=0.5, latency_s=latency, expectations=expectations,
        error=ErrorInfo(type="TimeoutError", message=error) if error is not None else None, warnings=warnings,
        artifacts=RunArtifacts(tokens=tokens) if tokens != -1 else None),
    st.booleans(), st.lists(_EXPECTATION, max_size=5),
    st.one_of(st.none(), st.none(), _TEXT), st.one_of(st.just([]), st.just([]), st.lists(_TEXT, max_size=4)),
    st.one_of(st.just(-1), st.none(), st.integers(0, 2**70)), st.floats(0.0, 10.0))
_CASE = st.builds(
    lambda status, runs, suite, file, name, score, rate: CaseResult(
        status=status, suite=suite, file=file, line=3, name=name, prompt="p", score=score,
        required_pass_rate=rate, repeat=max(1, len(runs)), runs=runs),
    st.sampled_from(["passed", "failed", "error", "skipped", "xfailed", "xpassed"]),
    st.one_of(st.lists(_RUN, min_size=1, max_size=1), st.lists(_RUN, max_size=3)),
    st.sampled_from(["Math", "Chat"]), _FILES, _TEXT, st.one_of(st.none(), st.floats(0.0, 1.0)),
    st.sampled_from([1.0, 0.6]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_CASE, max_size=12), st.randoms(use_true_random=False), st.booleans())
def test_the_fast_path_renders_what_the_general_path_does(cases: list, random, colour: bool) -> None:  # type: ignore[type-arg,no-untyped-def]
    """`Digest.add` takes a fast path for a case of one run without an error or a warning: whatever the
    cases (repeats, errors, warnings, partial credit, xfail/xpass, skipped, several suites and files,
    paths inside and outside the current directory, a failing line twice) and the order they finish
    in, the summary is the general path's, character for character."""
    from evaldsl.report._terminal import Digest

    order = list(enumerate(cases))
    random.shuffle(order)
    fast, general = Digest(), _general_digest()
    for position, case in order:
        fast.add(case, position)
        general.add(case, position)  # type: ignore[attr-defined]
    assert fast.summary() == general.summary()  # type: ignore[attr-defined]
    assert fast.render(colour=colour, elapsed_s=1.0) == general.render(colour=colour, elapsed_s=1.0)  # type: ignore[attr-defined]


@settings(max_examples=300, deadline=None)
@given(_CASE)
def test_a_plain_failure_body_is_the_general_one(case: CaseResult) -> None:
    """The fast path's text of a failing case of one run is `_failure_body`'s (the head, each failing
    expectation once with its first detail)."""
    from evaldsl.report._terminal import Digest, _failure_body

    for run in case.runs:
        if run.error is None:
            assert Digest()._plain_failure_body(case.model_copy(update={"runs": [run]}), run) == \
                _failure_body(case.model_copy(update={"runs": [run]}))


def test_an_expectation_failing_twice_in_a_run_is_listed_once() -> None:
    from evaldsl.report._terminal import Digest

    twice = ExpectationResult(label="no error", passed=False, credit=0.0, detail="first", file="a.evl", line=4)
    again = twice.model_copy(update={"detail": "second"})
    other = twice.model_copy(update={"label": "calls are calculator", "detail": None})
    run = RunResult(index=0, passed=False, score=0.0, latency_s=0.1, expectations=[twice, other, again])
    case = CaseResult(status="failed", suite="S", name="c", file="a.evl", line=3, prompt="p", runs=[run])
    assert Digest()._plain_failure_body(case, run) == (
        "a.evl:3 S::c\n  x expect no error  (a.evl:4)\n      first\n  x expect calls are calculator  (a.evl:4)")


@settings(max_examples=200, deadline=None)
@given(_CASE)
def test_case_stats_of_one_run_is_the_general_one(case: CaseResult) -> None:
    """`case_stats` reads a case of one run without generators: the same stats as over any runs."""
    from evaldsl.run._stats import case_stats

    runs = case.runs
    assert case_stats(case) == (
        case.status, case.score, tuple(r.latency_s for r in runs),
        tuple(r.artifacts.tokens for r in runs if r.artifacts is not None and r.artifacts.tokens is not None))
