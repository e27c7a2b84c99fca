"""The fast parses give what the plain one gives: the same AST, spans included, and the same diagnostics (hypothesis).

Three ways parse the same text through `parse_with_diagnostics`:
- the plain parser (`build_parser(fast=False)`) runs Lark's own LALR loop
  (`ParserState.feed_token`) and lexer, and `_building`'s general way of
  placing every rule with Lark's own child filters;
- Lark's fast one, `get_parser()`, runs `_reducing`'s loop, Lark's
  lexer and the rules' lean callbacks (`_building.callback_for`);
- the default, `_fastparse` with the parser cache's tables and no Lark at
  all, and Lark's fast one from the first syntax error on.
Error recovery is included, and everything is compared exactly: each node's
class, its fields in their order (a span is a field, left out of `==`), its
fields-set, and every diagnostic, or the exception.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from evaldsl.syntax import _parser, _recovery, _tables
from evaldsl.syntax._grammar import build_parser, get_parser

ROOT = Path(__file__).resolve().parents[2]
_PLAIN = build_parser(fast=False)
_SAMPLES = [p.read_text(encoding="utf-8") for p in sorted(ROOT.glob("suites/**/*.evl"))]
_SAMPLES += [p.read_text(encoding="utf-8") for p in sorted(ROOT.glob("tests/golden/**/*.evl"))[:20]]
_SAMPLES += [p.read_text(encoding="utf-8") for p in sorted(ROOT.glob("tests/golden/**/precise.evl"))]  # v2
_PIECES = ['case "c"\n', '  prompt "p"\n', "  expect ", "called", "search", "then", "with", "final", "text", "json",
           "number", "is", "not", "and", "or", "else", "for", "(", ")", "<", ">", "[", "]", "{", "}", ",", ":",
           "contains", "any", "absent", "1", "-2.5", '"s"', "$x", "ignoring case", "once", "times", "\n", " ",
           "tool t", "param", "examples", "|", "suite", "tags", "\\", '"', "#c\n", "/a+/i", "30s", "True",
           "no error", "at least", "between", "one of", "matches", "within", "starts with", "\t",
           # v2: precise matching
           "only", "loosely", "in any order", "in", "order", "valid arguments", "valid", "arguments", "tools",
           "absent or", "or <a: 1>", "and not <b: 2>", "only <k: 1>", "[t, u]", "(<a: 1>)"]

texts = st.one_of(
    st.lists(st.sampled_from(_PIECES), max_size=40).map(" ".join),
    st.lists(st.sampled_from(_PIECES), max_size=40).map("".join),
    st.sampled_from(_SAMPLES),
    st.tuples(st.sampled_from(_SAMPLES), st.integers(0, 10**6), st.integers(0, 10**6),
              st.lists(st.sampled_from(_PIECES), max_size=4).map(" ".join)).map(
        lambda t: t[0][: t[1] % (len(t[0]) + 1)] + t[3] + t[0][t[2] % (len(t[0]) + 1):]),
)


def _full(value: Any) -> Any:
    """Everything about a value that `==` on AST nodes leaves out (spans, field order, fields-set)."""
    if isinstance(value, BaseModel):
        return (type(value).__name__, tuple((k, _full(v)) for k, v in value.__dict__.items()),
                sorted(value.__pydantic_fields_set__))
    if isinstance(value, (tuple, list)):
        return type(value).__name__, tuple(_full(v) for v in value)
    if isinstance(value, dict):
        return "dict", tuple((k, _full(v)) for k, v in value.items())
    return type(value).__name__, repr(value)


@contextmanager
def _using(pair: Any) -> Iterator[None]:
    """Parse with ``pair`` (a Lark parser and its joiner) alone, or None: the default way (tables first)."""
    saved = _recovery.get_parser, _tables.fast_tables
    if pair is not None:
        _recovery.get_parser = lambda: pair  # type: ignore[assignment]
        _tables.fast_tables = lambda: None  # type: ignore[assignment]
    try:
        yield
    finally:
        _recovery.get_parser, _tables.fast_tables = saved  # type: ignore[assignment]


def _parse(pair: Any, text: str) -> Any:
    with _using(pair):
        try:
            suite, diagnostics = _parser.parse_with_diagnostics(text, "t.evl")
        except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
            return "raised", type(exc).__name__, str(exc)
    return _full(suite), [_full(d) if isinstance(d, BaseModel) else repr(d) for d in diagnostics]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_fast_parse_gives_the_plain_parse(text: str) -> None:
    plain = _parse(_PLAIN, text)
    assert _parse(get_parser(), text) == plain
    assert _parse(None, text) == plain


def test_every_shipped_suite_parses_the_same_every_way() -> None:
    for sample in _SAMPLES:
        plain = _parse(_PLAIN, sample)
        assert _parse(get_parser(), sample) == plain
        assert _parse(None, sample) == plain


def test_the_fast_paths_are_installed() -> None:
    parser = get_parser()[0]
    assert "parse" in vars(parser.parser.parser.parser)  # `_reducing`'s loop
    assert "parse" not in vars(_PLAIN[0].parser.parser.parser)  # Lark's own
    inner = parser.parser.parser.parser
    state = inner.parse(None, "start", start_interactive=True).parser_state
    assert any(callback is None for _, _, callback in state.parse_conf.rules)  # `?rule`s passing their child on
