"""The post-lexer: which line breaks end a statement, the brackets of the statement, the comments.

The grammar reads one statement a line; a line break inside brackets, or
before a line that starts with `then`, `and`, `or` or `else`, is no end.
`LineJoiner.take` decides token by token; both ways of parsing use it: the
one without Lark (`_fastparse`) calls it in its loop, Lark calls `process`
(the post-lexer interface of ``Lark(postlex=...)``). No Lark here.
"""

from __future__ import annotations

import re
from typing import Any

from ._tokens import Token

OPENERS = frozenset({"_LANGLE", "_LSQB", "_LBRACE", "_LPAR"})
CLOSERS = frozenset({"_RANGLE", "_RSQB", "_RBRACE", "_RPAR"})
MAX_DEPTH = 64
"""Brackets (and `not`s in a row) nested deeper than this are refused: no
real suite needs it, and it keeps every later stage's recursion bounded."""

_BLANK_LINES = re.compile(r"(?:[ \t\f\r]*(?:#[^\n]*)?\n)*")
_CONT_WORD = re.compile(r"[ \t\f\r]*(?:then|and|or|else)(?![A-Za-z0-9_.\-])")
_GAP = r"(?:\s|#[^\n]*(?![^\n]))*"  # white space and comments (a comment runs to its line's end, one way)
_OBJECT_NEXT = re.compile(rf"(?:{_GAP}(?:not(?![A-Za-z0-9_.\-])|\())*{_GAP}(?:[<{{]|only{_GAP}[<{{(])")
"""What follows an `or` / `and` of object patterns (v2): `<`, `{` or `only <`, past any `not` and `(`
(and white space and comments: inside brackets a line may break there). No predicate starts so, so
such an `or` joins patterns (after `with`), never predicates."""
_PATTERN_OPS = {"OR": "_POR", "AND": "_PAND"}
WATCHED = frozenset({"COMMENT", "_NL", "NOT", *OPENERS, *CLOSERS, *_PATTERN_OPS})
"""The kinds of token `LineJoiner.take` looks at; any other it passes on, noting only ``last = kind`` and
``nots = 0`` (which `_fastparse`'s loop does inline: most tokens are names, strings and keywords)."""


class TooDeep(Exception):
    """Brackets or `not`s nested past `MAX_DEPTH` at `token` (Lark's way raises `_grammar.NestingTooDeep`)."""

    def __init__(self, token: Any) -> None:
        super().__init__("nesting too deep")
        self.token = token


class Continuations:
    """Answers "does the line after this line break continue the statement?".

    It does when the next line that is not blank or a comment starts with
    `then`, `and`, `or` or `else`. Every line break of a run of blank lines
    has the same answer, so the answer is kept for the whole run: each part
    of the text is scanned once, however many blank lines follow a statement.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.since, self.until = 0, -1  # the answer below holds for line breaks ending in this range
        self.answer = False

    def after(self, pos: int | None) -> bool:
        """Whether the line break that ends at `pos` is followed by a continuation line."""
        if pos is None:
            return False
        if not self.since <= pos <= self.until:  # (error recovery may move back)
            match = _BLANK_LINES.match(self.text, pos)
            end = match.end() if match else pos
            self.since, self.until = pos, end
            self.answer = _CONT_WORD.match(self.text, end) is not None
        return self.answer


class LineJoiner:
    """Drops line breaks inside brackets or before a continuation line, blank lines and comments.

    Comments are collected into `comments` for the formatter. `depth` and
    `open` describe the brackets of the current statement, for error
    messages. One instance serves one parse at a time; `reset(text)` starts
    a parse, `restart()` resumes one after an error.
    """

    always_accept = ("_NL", "COMMENT")

    def __init__(self) -> None:
        self.open: list[Any] = []  # the brackets not closed yet, innermost last
        self.reset("")

    def reset(self, text: str) -> None:
        self.comments: list[Any] = []
        self.continuations = Continuations(text)
        self.restart()
        self.begin()

    def save(self) -> tuple:
        """The state of the parse in progress, for `load` after another parse ran inside it."""
        return self.comments, self.continuations, self.depth, self.open, self.last, self.nots

    def load(self, state: tuple) -> None:
        self.comments, self.continuations, self.depth, self.open, self.last, self.nots = state

    def restart(self) -> None:
        """Forget the statement in progress: the next token starts a new one."""
        self.depth = 0
        self.open = []

    def begin(self) -> None:
        """Start a run of tokens (Lark starts one at the top of the file and again after each error)."""
        self.last: str | None = None  # the type of the last token passed on
        self.nots = 0  # `not`s in a row

    def take(self, tok: Any) -> bool:
        """Whether ``tok`` goes on to the parser (a comment is kept aside); may retype an `or` / `and`.

        Raises:
            TooDeep: past `MAX_DEPTH` brackets or `not`s.
        """
        kind = tok.type
        if kind == "COMMENT":
            self.comments.append(tok)
            return False
        if kind == "_NL":
            if self.depth > 0 or self.last is None or self.last == "_NL" or self.continuations.after(tok.end_pos):
                return False
        elif kind in OPENERS:
            self.depth += 1
            self.open.append(tok)
            if self.depth > MAX_DEPTH:
                raise TooDeep(tok)
        elif kind in CLOSERS:
            self.depth = max(0, self.depth - 1)
            if self.open:
                self.open.pop()
        elif kind in _PATTERN_OPS and _OBJECT_NEXT.match(self.continuations.text, tok.end_pos):
            tok.type = _PATTERN_OPS[kind]  # an `or` of object patterns (see the grammar's v2 block)
        self.nots = self.nots + 1 if kind == "NOT" else 0
        if self.nots > MAX_DEPTH:
            raise TooDeep(tok)
        self.last = kind
        return True

    def end(self) -> Token | None:
        """The line break that ends the last statement when the text does not end with one."""
        if self.last is not None and self.last != "_NL":
            return Token("_NL", "", end_pos=None)
        return None

    def process(self, stream):  # type: ignore[no-untyped-def]
        """Lark's post-lexer interface: `take` over Lark's token stream."""
        from ._grammar import NestingTooDeep

        self.begin()
        take = self.take
        for tok in stream:
            try:
                kept = take(tok)
            except TooDeep as exc:
                raise NestingTooDeep(exc.token) from None
            if kept:
                yield tok
        last = self.end()
        if last is not None:
            yield last
