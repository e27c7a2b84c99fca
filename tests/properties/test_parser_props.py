"""Hypothesis: the parser raises only EvlError on any text; carets sit under the token."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaldsl import EvlError, compile, parse
from evaldsl.syntax._ast import Span
from evaldsl.syntax._diagnostics import error
from evaldsl.syntax._render import render_long

WORDS = ["case", "prompt", "expect", "called", "then", "with", "final", "text", "number", "is",
         "not", "and", "or", "else", "for", "tool", "param", "when", "returns", "examples", "suite",
         "any", "absent", "contains", "within", "times", "once", "between", "at", "least", "json",
         "judge", "setup", "tags", "repeat", "use", "matches", "one", "of", "$x", "{{x}}"]
WORDS += ["user", "simulated", "turns", "given", "fails", "otherwise", "world"]  # v2
PIECES = WORDS + ['"s"', '"""\n a\n """', "<", ">", "[", "]", "{", "}", "(", ")", ",", ":", "|",
                  "\n", "\n  ", "  ", "\t", "#c\n", "1", "-2.5", "30s", "/a+/i", "?", "\\", '"', "\r\n"]

fragments = st.lists(st.sampled_from(PIECES), max_size=40).map(" ".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(fragments, st.text(max_size=200)))
def test_parse_and_compile_raise_only_evl_errors(text: str) -> None:
    try:
        compile(text, "t.evl")
    except EvlError as exc:
        assert exc.errors, "an EvlError always carries at least one error"
        for diag in exc.errors:
            assert diag.span is None or diag.span.line >= 1
        exc.render()  # rendering never fails either


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=" \tabc", max_size=20),
    st.text(alphabet="xyz", min_size=1, max_size=8),
    st.text(alphabet=" abc", max_size=10),
)
def test_caret_lines_up_under_the_token(prefix: str, token: str, suffix: str) -> None:
    line = prefix + token + suffix
    column = len(prefix) + 1
    span = Span(file="f.evl", line=1, column=column, end_line=1, end_column=column + len(token))
    rendered = render_long(error("E100", "m", span), line + "\n").splitlines()
    source_row = next(r for r in rendered if r.startswith("1 | "))[4:]
    caret_row = rendered[rendered.index("1 | " + line) + 1][4:]
    assert source_row == line
    start = caret_row.index("^")
    assert caret_row[:start] == "".join("\t" if ch == "\t" else " " for ch in prefix)
    assert caret_row[start:] == "^" * len(token)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["", "  ", "# note", "\t"]), max_size=5))
def test_blank_lines_and_comments_never_change_meaning(fillers: list[str]) -> None:
    base = 'case "c"\n  prompt "p"\n  expect called a with <x: 1>\n'
    noisy = "\n".join(fillers) + "\n" + base.replace("\n  expect", "\n" + "\n".join(fillers) + "\n  expect")
    assert parse(noisy) == parse(base)
