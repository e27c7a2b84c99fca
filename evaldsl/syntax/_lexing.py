"""A leaner `next_token` for the contextual lexer's per-state lexers: the same tokens, with less work.

It makes evaldsl's own tokens (`_tokens.Token`: the same text, type and
positions as Lark's), as the parse without Lark does. Lark's
`BasicLexer.next_token` spends most of a token's time outside the regular
expression: a property and two method calls to reach the pattern,
`Token.__new__` (which checks for a deprecated keyword, then calls a
classmethod), and `LineCounter.feed`. Lexing was a fifth of `check`'s
time; `FastBasicLexer.next_token` does the same steps inline. Whatever it
does not handle the same way (no terminal matches: an error) it leaves to
Lark's own `next_token`, called from the same state, so errors are raised
exactly as Lark raises them.
"""

from __future__ import annotations

from typing import Any

from lark.exceptions import LexError
from lark.lexer import BasicLexer

from ._tokens import Token, is_token

_new_str = str.__new__


class FastBasicLexer(BasicLexer):
    """`BasicLexer` with `next_token` inlined (see the module's docstring); no state of its own."""

    def next_token(self, lex_state: Any, parser_state: Any = None) -> Token:
        scanner = self._scanner  # (the property builds the scanner and `callback` on first use)
        mres = (self.scanner if scanner is None else scanner)._mres
        ignore, callbacks, newlines = self.ignore_types, self.callback, self.newline_types
        counter = lex_state.line_ctr
        source, end = lex_state.text.text, lex_state.text.end
        nl = counter.newline_char
        while counter.char_pos < end:
            pos = counter.char_pos
            for mre in mres:
                m = mre.match(source, pos, end)
                if m:
                    break
            else:  # nothing matches: Lark's own method raises its error from this same state
                return BasicLexer.next_token(self, lex_state, parser_state)
            value, kind = m.group(0), m.lastgroup
            ignored = kind in ignore
            t = None
            if not ignored or kind in callbacks:
                t = _new_str(Token, value)  # what `Token(kind, value, pos, line, column)` makes
                t.type, t.value, t.start_pos = kind, value, pos
                t.line, t.column = counter.line, counter.column
            if kind in newlines:  # `LineCounter.feed(value, test_newline)`, inline: once a token
                count = value.count(nl)
                if count:
                    counter.line += count
                    counter.line_start_pos = pos + value.rindex(nl) + 1
            counter.char_pos = pos = pos + len(value)
            counter.column = pos - counter.line_start_pos + 1
            if t is not None:
                t.end_line, t.end_column, t.end_pos = counter.line, counter.column, counter.char_pos
                if kind in callbacks:
                    t = callbacks[kind](t)
                if not ignored:
                    if not is_token(t):
                        raise LexError("Callbacks must return a token (returned %r)" % t)
                    lex_state.last_token = t
                    return t
        raise EOFError(self)


def install_fast_lexer(parser: Any) -> None:
    """Make the per-state lexers of ``parser``'s contextual lexer `FastBasicLexer`s.

    Only those whose class is exactly Lark's `BasicLexer` (the root lexer,
    used only to word an error, is left as it is); nothing is changed if
    Lark's internals differ from what this expects.
    """
    contextual = getattr(getattr(getattr(parser, "parser", None), "lexer", None), "lexer", None)
    lexers = getattr(contextual, "lexers", None)
    if not isinstance(lexers, dict):  # pragma: no cover - another Lark version: its own lexer still works
        return
    for lexer in lexers.values():
        if type(lexer) is BasicLexer:
            lexer.__class__ = FastBasicLexer
