"""A parse without Lark: the contextual lexer, the post-lexer and the LALR loop in one loop over the text.

Lark is what builds the parser, and what parses a file that has a syntax
error (its error recovery and `_syntax_errors` word every diagnostic). A file
without one, which is nearly every file `check` or `run` reads, needs none of
that: `run` walks the same tables (`_tables`, taken from Lark's parser) with
the same rule callbacks (`_building`) and gives the same value, without
importing Lark (a fifth of `evaldsl check`'s start-up) and without the
generators that hand each token from Lark's lexer through the post-lexer to
its parser.

It does what Lark's contextual lexer, the post-lexer
(`_joiner.LineJoiner.take`) and Lark's LALR loop (`_reducing`'s leaner
step, which is `feed` below) do, in the same order; at the first thing only Lark reports (no
terminal matches, a token the state does not expect, brackets nested too
deep) it stops with `NeedLark`, and the caller parses the text again with
Lark. The property tests compare the two ways on generated text
(tests/properties/test_fast_parse_props.py).
"""

from __future__ import annotations

from typing import Any

from ._joiner import WATCHED, LineJoiner, TooDeep
from ._tables import Tables
from ._tokens import Token


class NeedLark(Exception):
    """The text has a syntax error: only Lark's parser can say which, and recover from it."""


_new_str = str.__new__


def run(tables: Tables, text: str, joiner: LineJoiner) -> Any:
    """The value of the file's start rule (`_building.Built`), parsing ``text`` with ``tables``.

    ``joiner`` has been `reset` to ``text``; it collects the comments.

    Raises:
        NeedLark: at the first syntax error.
    """
    rows, rules, lexer_at, end_state = tables.rows, tables.rules, tables.lexer_at, tables.end
    state_stack = [tables.start]
    value_stack: list[Any] = []
    take, watched = joiner.take, WATCHED
    pos, line, line_start, end = 0, 1, 0, len(text)
    last: list[Token] = []  # the tokens after the text: the joiner's last line break, then `$END`
    finished = False
    while True:
        if pos < end:
            lexer = lexer_at[state_stack[-1]]
            mres = lexer.mres
            if mres is None:
                mres = lexer.compile()
            for mre in mres:
                m = mre.match(text, pos)
                if m:
                    break
            else:
                raise NeedLark
            value, kind = m.group(0), m.lastgroup
            start, column = pos, pos - line_start + 1
            token_line = line
            if kind in lexer.newlines:
                count = value.count("\n")
                if count:
                    line += count
                    line_start = pos + value.rindex("\n") + 1
            pos += len(value)
            if kind in lexer.ignore:
                continue
            tok = _new_str(Token, value)  # `Token(kind, value, start, ...)`, without the call
            tok.type, tok.value, tok.start_pos, tok.line, tok.column = kind, value, start, token_line, column
            tok.end_line, tok.end_column, tok.end_pos = line, pos - line_start + 1, pos
            words = lexer.unless.get(kind)
            if words is not None:
                kind = words.get(value, kind)  # a keyword matched whole by a name's pattern is the keyword
                tok.type = kind
            if kind in watched:
                try:
                    if not take(tok):
                        continue
                except TooDeep:
                    raise NeedLark from None
                kind = tok.type  # (the joiner may make an `or` of patterns `_POR`)
            else:  # what `take` does with any other token
                joiner.last, joiner.nots = kind, 0
        elif last:
            tok = last.pop()
            kind = tok.type
        elif finished:  # pragma: no cover - `$END` returns or raises below
            raise NeedLark
        else:
            finished = True
            last.append(Token("$END", ""))
            closing = joiner.end()
            if closing is not None:
                last.append(closing)
            continue
        done = feed(rows, rules, end_state, state_stack, value_stack, tok, kind)
        if done is not None:
            if done is NO_ACTION:
                raise NeedLark
            return done


NO_ACTION = object()
"""What `feed` gives when the parser's state has no action for the token: a syntax error."""


def feed(rows: dict, rules: list, end_state: int, state_stack: list, value_stack: list, tok: Any, kind: str) -> Any:
    """One token through the LALR table: every reduction it calls for, then its shift. Gives None after the
    shift, the start rule's value once ``kind`` is `$END` and the file is whole, or `NO_ACTION`.

    ``rows[state][symbol]`` is the next state when >= 0 (a shift, or a goto after a reduction), else
    ``~r`` for a reduction by ``rules[r] = (size, left-hand side, callback)``; a callback of None is a
    `?rule` of one symbol, whose child is its value: left on the stack as it is, only the state changes
    (a third of all reductions). Both ways of parsing step with it: the loop without Lark (`run`) and
    Lark's parser state (`_reducing.FastState`).
    """
    while True:
        act = rows[state_stack[-1]].get(kind)
        if act is None:
            return NO_ACTION
        if act >= 0:
            state_stack.append(act)
            value_stack.append(tok)
            return None
        size, origin, callback = rules[~act]
        if callback is None:
            state_stack[-1] = new_state = rows[state_stack[-2]][origin]
            if new_state == end_state and kind == "$END":  # pragma: no cover - the start rule is no `?rule`
                return value_stack[-1]
            continue
        if size == 1:
            children = [value_stack.pop()]
            del state_stack[-1]
        elif size:
            children = value_stack[-size:]
            del state_stack[-size:]
            del value_stack[-size:]
        else:
            children = []
        built = callback(children)
        new_state = rows[state_stack[-1]][origin]
        state_stack.append(new_state)
        value_stack.append(built)
        if new_state == end_state and kind == "$END":
            return built
