"""Error recovery: every syntax error of a file in one parse, each at its place, no knock-on errors."""

from __future__ import annotations

from typing import Any

import pytest

from evaldsl import EvlError, parse
from evaldsl.syntax import _joiner
from evaldsl.syntax._grammar import Continuations, get_parser


def errors_of(text: str) -> EvlError:
    with pytest.raises(EvlError) as info:
        parse(text, "t.evl")
    return info.value


def where(err: EvlError) -> list[tuple[str, int, int]]:
    return [(d.code, d.span.line, d.span.column) for d in err.errors if d.span is not None]


UNCLOSED = (
    'case "a"\n'
    '  prompt "p"\n'
    '  expect called search with <q: "x"\n'
    "  expect caled foo\n"
    "\n"
    'case "b"\n'
    '  prompt "q"\n'
    '  expect final text iss "x"\n'
)


@pytest.mark.parametrize("opener,closer,line", [
    ("<", ">", 'called search with <q: "x"'),
    ("{", "}", 'called search with {q: "x"'),
    ("[", "]", 'called search with <q: ["x", "y"'),
    ("(", ")", 'no error and my_check(a: 1'),
])
def test_an_unclosed_bracket_is_reported_at_the_bracket_and_later_errors_still_show(
    opener: str, closer: str, line: str,
) -> None:
    err = errors_of(UNCLOSED.replace('called search with <q: "x"', line))
    codes = where(err)
    assert codes[0][0] == "E106" and codes[0][1] == 3
    assert ("E101", 4, 10) in codes  # the line after the open bracket is parsed on its own
    assert any(line == 8 for _, line, _ in codes)  # and so is the next case
    short = err.render(style="short")
    assert f"`{opener}` is never closed" in short and f"no `{closer}` before line 4" in short
    assert f"`{opener}` is never closed" in err.render(style="long")


def test_an_unclosed_bracket_at_the_end_of_the_file() -> None:
    err = errors_of('case "a"\n  prompt "p"\n  expect called x with <a: 1,\n    b: 2\n')
    assert where(err) == [("E106", 3, 24)]
    assert "no `>` before the end of the file" in err.render(style="short")


def test_a_key_named_like_a_statement_word_does_not_end_the_pattern() -> None:
    text = 'case "a"\n  prompt "p"\n  expect called x with <\n    case: 1 2,\n    b: 3>\n  expect no error\n'
    err = errors_of(text)
    assert [c for c, _, _ in where(err)] == ["E100"]  # no E106, no knock-on error from `b: 3>`
    assert "never closed" not in err.render()


def test_an_unclosed_long_string_is_reported_where_it_opens_without_knock_on_errors() -> None:
    err = errors_of('suite "x"\ncase "a"\n  prompt """\n    hello\n  expect no error\n\ncase "b"\n  prompt "q"\n')
    assert where(err) == [("E102", 3, 10)]
    diag = err.errors[0]
    assert diag.message == "unterminated long string" and "never closed" in (diag.label or "")
    assert diag.span is not None and diag.span.end_column == 13  # the three quotes
    assert "use \"\"\"" not in err.render()  # the advice for a one-line string does not apply


def test_a_failed_statement_takes_its_continuation_lines_with_it() -> None:
    text = 'case "a"\n  prompt "p"\n  expect called x wiht <a: 1>\n\n    # note\n    and called y\n  expect caled\n'
    assert [line for _, line, _ in where(errors_of(text))] == [3, 7]


def test_too_deep_nesting_does_not_hide_later_errors() -> None:
    deep = "<a: " * 70 + "1" + ">" * 70
    err = errors_of(f'case "a"\n  prompt "p"\n  expect called x with {deep}\n  expect caled x\n')
    assert [c for c, _, _ in where(err)] == ["E104", "E101"]


def test_statements_around_errors_are_kept() -> None:
    from evaldsl.syntax._parser import parse_with_diagnostics

    suite, diags = parse_with_diagnostics(
        'case "a"\n  prompt "p"\n  expect nope\n  expect no error\ncase "b"\n  prompt ]\n  expect no error\n'
    )
    assert [d.span.line for d in diags if d.span] == [3, 6]
    assert [c.name.value for c in suite.cases] == ["a", "b"]
    assert len(suite.cases[0].body) == 2 and len(suite.cases[1].body) == 1


def test_errors_cost_one_parse_of_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    parser, _ = get_parser()
    calls: list[int] = []
    real = type(parser).parse

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(parser), "parse", counting)
    text = "".join(f'case "c{i}"\n  prompt "p"\n  expect caled x\n' for i in range(10))
    assert len(errors_of(text).errors) == 10
    assert len(calls) == 1


def test_blank_lines_after_a_statement_are_scanned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    scans: list[int] = []
    real = _joiner._BLANK_LINES

    class Counting:
        def match(self, text: str, pos: int) -> Any:
            found = real.match(text, pos)
            scans.append(found.end() - pos if found else 0)
            return found

    monkeypatch.setattr(_joiner, "_BLANK_LINES", Counting())
    text = 'case "a"\n  prompt "p"\n  expect no error\n' + "\n  # c\n" * 2000 + "  and no tool calls\n"
    suite = parse(text)
    assert sum(scans) <= len(text)  # each character looked at once, not once per line break
    expr = suite.cases[0].body[1].expectation.expr  # type: ignore[attr-defined]
    assert type(expr).__name__ == "AndExpr"


def test_continuations_answer_for_a_whole_run_of_blank_lines() -> None:
    text = "a\n\n\n  # x\n  then b\nc\n\nd\n"
    cont = Continuations(text)
    assert [cont.after(i + 1) for i, ch in enumerate(text) if ch == "\n"] == [
        True, True, True, True, False, False, False, False]


def test_a_statement_word_as_a_value_in_a_list_does_not_claim_the_bracket_is_unclosed() -> None:
    text = 'case "a"\n  prompt "p"\n  setup <modes: [\n    skip, 1 2,\n    repeat]>\n  expect no error\n'
    err = errors_of(text)
    assert [c for c, _, _ in where(err)] == ["E100"]
    assert "never closed" not in err.render()


def test_a_bracket_closed_nowhere_resumes_at_the_next_statement_line() -> None:
    text = ('case "a"\n  prompt "p"\n  expect called x with <a: 1\n    foo\n\n'
            'case "b"\n  prompt "q"\n  expect final number is\n')
    err = errors_of(text)
    assert where(err) == [("E106", 3, 24), ("E100", 8, 25)]
    assert "no `>` before line 6" in err.render(style="short")


def test_a_misspelt_predicate_alone_on_its_line_is_named() -> None:
    err = errors_of('case "a"\n  prompt "p"\n  expect caled\n')
    assert where(err) == [("E101", 3, 10)] and err.errors[0].suggestion == "called"


@pytest.mark.parametrize("pattern", ["<xs: [1, 2>", "<o: {k: 1>", "<o: {k: [1>", "<o: {k: [1, <a: 2>>"])
def test_an_inner_bracket_closed_by_the_outer_closer_does_not_hide_later_errors(pattern: str) -> None:
    # `>` closes the `[` (or `{`): `<` stays open, and nothing after the error closes it.
    text = (f'case "a"\n  prompt "p"\n  expect called t with {pattern}\n  expect called t with <xs: [1]>\n\n'
            'case "b"\n  promt "x"\n\ncase "c"\n  prompt "q"\n  expect caled\n')
    assert [(c, line) for c, line, _ in where(errors_of(text))] == [("E100", 3), ("E100", 7), ("E101", 11)]
