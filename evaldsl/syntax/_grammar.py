"""Find grammar/evl.lark and build the one Lark parser, once.

The grammar file is the single source of truth. It is found next to the
package in an installed wheel (force-included as `evaldsl/grammar/evl.lark`)
or at the repository root in a source checkout or editable install.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from pathlib import Path

from lark import Lark, Token
from lark.exceptions import UnexpectedInput

from ._building import install
from ._lexing import install_fast_lexer
from ._reducing import install_fast_state

OPENERS = frozenset({"_LANGLE", "_LSQB", "_LBRACE", "_LPAR"})
CLOSERS = frozenset({"_RANGLE", "_RSQB", "_RBRACE", "_RPAR"})
MAX_DEPTH = 64
"""Brackets (and `not`s in a row) nested deeper than this are refused: no
real suite needs it, and it keeps every later stage's recursion bounded."""


def grammar_path() -> Path:
    """The grammar file, from an installed wheel or a source checkout."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "grammar" / "evl.lark", package.parent / "grammar" / "evl.lark"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"evl.lark not found next to {package}")


class NestingTooDeep(UnexpectedInput):
    """Raised by the postlexer; the parser turns it into a diagnostic.

    A Lark `UnexpectedInput`, so that Lark hands it to the parser's error
    handler with the parser's state, and recovery goes on after it.
    """

    def __init__(self, token: Token) -> None:
        super().__init__("nesting too deep")
        self.token = token
        self.pos_in_stream = token.start_pos  # type: ignore[assignment]
        self.line, self.column = token.line or 0, token.column or 0


_BLANK_LINES = re.compile(r"(?:[ \t\f\r]*(?:#[^\n]*)?\n)*")
_CONT_WORD = re.compile(r"[ \t\f\r]*(?:then|and|or|else)(?![A-Za-z0-9_.\-])")
_GAP = r"(?:\s|#[^\n]*(?![^\n]))*"  # white space and comments (a comment runs to its line's end, one way)
_OBJECT_NEXT = re.compile(rf"(?:{_GAP}(?:not(?![A-Za-z0-9_.\-])|\())*{_GAP}(?:[<{{]|only{_GAP}[<{{(])")
"""What follows an `or` / `and` of object patterns (v2): `<`, `{` or `only <`, past any `not` and `(`
(and white space and comments: inside brackets a line may break there). No predicate starts so, so
such an `or` joins patterns (after `with`), never predicates."""
_PATTERN_OPS = {"OR": "_POR", "AND": "_PAND"}


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
    """Postlexer: drops line breaks inside brackets or before a continuation line, blank lines and comments.

    Comments are collected into `comments` for the formatter. `depth` and
    `open` describe the brackets of the current statement, for error
    messages. One instance serves one parse at a time (the parser locks);
    `reset(text)` starts a parse, `restart()` resumes one after an error.
    """

    always_accept = ("_NL", "COMMENT")

    def __init__(self) -> None:
        self.open: list[Token] = []  # the brackets not closed yet, innermost last
        self.reset("")

    def reset(self, text: str) -> None:
        self.comments: list[Token] = []
        self.continuations = Continuations(text)
        self.restart()

    def save(self) -> tuple:
        """The state of the parse in progress, for `load` after another parse ran inside it."""
        return self.comments, self.continuations, self.depth, self.open

    def load(self, state: tuple) -> None:
        self.comments, self.continuations, self.depth, self.open = state

    def restart(self) -> None:
        """Forget the statement in progress: the next token starts a new one."""
        self.depth = 0
        self.open = []

    def process(self, stream):  # type: ignore[no-untyped-def]
        last = None
        nots = 0
        for tok in stream:
            kind = tok.type
            if kind == "COMMENT":
                self.comments.append(tok)
                continue
            if kind == "_NL":
                if self.depth > 0 or last is None or last == "_NL" or self.continuations.after(tok.end_pos):
                    continue
            elif kind in OPENERS:
                self.depth += 1
                self.open.append(tok)
                if self.depth > MAX_DEPTH:
                    raise NestingTooDeep(tok)
            elif kind in CLOSERS:
                self.depth = max(0, self.depth - 1)
                if self.open:
                    self.open.pop()
            elif kind in _PATTERN_OPS and _OBJECT_NEXT.match(self.continuations.text, tok.end_pos):
                tok.type = _PATTERN_OPS[kind]  # an `or` of object patterns (see the grammar's v2 block)
            nots = nots + 1 if kind == "NOT" else 0
            if nots > MAX_DEPTH:
                raise NestingTooDeep(tok)
            last = kind
            yield tok
        if last is not None and last != "_NL":
            yield Token("_NL", "", end_pos=None)


LOCK = threading.RLock()
"""Held by a parse; re-entrant: a parse may start another one inside its `emit` (a `use` file)."""


@lru_cache(maxsize=1)
def get_parser() -> tuple[Lark, LineJoiner]:
    """The Lark instance (LALR, contextual lexer, strict), built once a process: loaded whole from the
    parser cache (`_parser_cache`) when it holds this grammar's, else built and kept there."""
    from ._parser_cache import load_parser, save_parser

    grammar = grammar_path().read_bytes()
    found = load_parser(grammar, relink)
    if found is not None:
        return found
    parser, joiner = build_parser(grammar=grammar.decode("utf-8"))
    save_parser(grammar, parser, joiner)
    return parser, joiner


def relink(parser: Lark) -> None:
    """Give a parser loaded from the parser cache the rule callbacks and loop `build_parser` installed."""
    install(parser)
    install_fast_state(parser)


def build_parser(*, fast: bool = True, grammar: str | None = None) -> tuple[Lark, LineJoiner]:
    """A new Lark instance and its postlexer; ``fast=False`` leaves out the leaner paths
    (`_lexing`, `_reducing`, `_building`'s one-symbol rules), for tests that compare the two."""
    joiner = LineJoiner()
    parser = Lark(
        grammar if grammar is not None else grammar_path().read_text(encoding="utf-8"),
        parser="lalr",
        lexer="contextual",
        strict=True,
        propagate_positions=False,  # `_building` places each rule itself
        maybe_placeholders=True,
        cache=True,
        postlex=joiner,
    )
    install(parser, lean=fast)
    if fast:
        install_fast_state(parser)
        install_fast_lexer(parser)
    return parser, joiner


@lru_cache(maxsize=4)
def keyword_terminals(parser: Lark) -> dict[str, str]:
    """Terminal name -> keyword text, for every keyword of the language."""
    result = {}
    for term in parser.terminals:
        pattern = term.pattern
        if pattern.type == "str" and pattern.value.isalpha():
            result[term.name] = pattern.value
    return result
