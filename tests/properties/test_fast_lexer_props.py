"""`FastBasicLexer.next_token` gives the tokens (and the errors) of Lark's `BasicLexer.next_token` (hypothesis).

Every distinct per-state lexer of the contextual lexer lexes the same text
both ways, token after token, from the same start: each token's type, text
and eight positions, the line counter after it, and the error (its type and
place) where the text stops matching. The fast lexer's tokens are evaldsl's
own `Token` (Lark's lexer makes Lark's), which `test_fast_tokens_are_evaldsl_s`
checks apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lark.lexer import BasicLexer, LexerState
from lark.utils import TextSlice

from evaldsl.syntax._grammar import get_parser
from evaldsl.syntax._lexing import FastBasicLexer
from evaldsl.syntax._tokens import Token

ROOT = Path(__file__).resolve().parents[2]
_LEXERS = list({id(lx): lx for lx in get_parser()[0].parser.lexer.lexer.lexers.values()}.values())
_SAMPLES = [p.read_text(encoding="utf-8")[:3000] for p in sorted(ROOT.glob("suites/**/*.evl"))[:12]]
_PIECES = ['"', '"""', "\\", "\n", " ", "\t", "#", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", "$",
           "expect", "called", "with", "contains", "ignoring case", "and", "or", "not", "then", "1.5", "-3",
           "30s", "'", "é", "\u2028", "\r", "~", "@", "x_y", "prompt", "case", "suite", '"a\\nb"']
texts = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join) | st.sampled_from(_SAMPLES).flatmap(
    lambda s: st.integers(0, len(s)).map(lambda i: s[i:]))


def _lex(method: Any, lexer: Any, text: str) -> list[Any]:
    """Every token `method` gives from the start of `text`, then how it stopped, with the counter's state."""
    state = LexerState(TextSlice.cast_from(text))
    out: list[Any] = []
    for _ in range(200):
        try:
            t = method(lexer, state)
        except EOFError:
            out.append("EOF")
            break
        except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
            out.append((type(exc).__name__, getattr(exc, "pos_in_stream", None), getattr(exc, "line", None),
                        getattr(exc, "column", None), str(exc)))
            break
        counter = state.line_ctr
        ours_or_lark_s = type(t) is Token or type(t).__module__ == "lark.lexer"
        out.append((ours_or_lark_s, t.type, str(t), t.value, t.start_pos, t.line, t.column, t.end_line, t.end_column,
                    t.end_pos, counter.char_pos, counter.line, counter.column, counter.line_start_pos,
                    state.last_token is t))
    return out


@settings(max_examples=150, deadline=None)
@given(texts, st.integers(0, len(_LEXERS) - 1))
def test_fast_lexer_gives_lark_s_tokens(text: str, which: int) -> None:
    lexer = _LEXERS[which]
    assert _lex(FastBasicLexer.next_token, lexer, text) == _lex(BasicLexer.next_token, lexer, text)


def test_every_state_lexer_is_fast() -> None:
    assert all(type(lexer) is FastBasicLexer for lexer in _LEXERS)


def test_fast_tokens_are_evaldsl_s() -> None:
    state = LexerState(TextSlice.cast_from('case "c"\n'))
    lexer = next(lx for lx in _LEXERS if "CASE" in {t.name for t in lx.terminals})
    assert type(FastBasicLexer.next_token(lexer, state)) is Token
