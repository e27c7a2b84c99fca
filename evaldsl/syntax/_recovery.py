"""Lark's way of parsing a file, for one with a syntax error: every error reported, the rest parsed.

This module (with `_syntax_errors.py`) is the one boundary where Lark's
exceptions become evaldsl's diagnostics (DESIGN rule 4). To report every
syntax error in a file, not only the first, Lark's error handler reports
the error, skips the failed statement and lets the same parse go on, up to
`MAX_ERRORS` errors: one parse of the file, however many errors it holds.
A file without a syntax error never comes here (`_fastparse`).
"""

from __future__ import annotations

from typing import Any

from lark import Lark
from lark.exceptions import UnexpectedInput

from ._building import Built
from ._diagnostics import Diagnostic
from ._grammar import get_parser
from ._hints import with_hint
from ._joiner import LineJoiner
from ._syntax_errors import diagnose
from ._tokens import Tree, is_token
from ._transform import ToAst

MAX_ERRORS = 20


def lark_parse(text: str, builder: ToAst, add: Any) -> tuple[list[Diagnostic], list, bool]:
    """Parse ``text`` with Lark, each whole statement built by ``builder`` and given to ``add``; the caller
    holds the parser's lock and has made ``builder`` current. Returns the syntax diagnostics, the comments'
    tokens, and whether the parse gave up (`MAX_ERRORS` reached)."""
    parser, joiner = get_parser()
    recovery = _Recovery(text, parser, joiner, builder)
    outer = joiner.save()  # a parse started inside another one's `emit`
    joiner.reset(text)
    try:
        built = parser.parse(text, on_error=recovery.on_error)
        for stmt in built.value if isinstance(built, Built) else ():  # (all of them went to the sink)
            add(stmt)
        return recovery.diagnostics, joiner.comments, False
    except UnexpectedInput:
        return recovery.diagnostics, joiner.comments, True
    finally:
        joiner.load(outer)


class _Recovery:
    """Lark's error handler: report the error, skip its statement, parse on.

    The parser's stacks are cut back to the end of the last whole statement
    and the lexer moved past the failed one, so the parse goes on where it
    stopped: every error of a file costs one parse of the file, not one each.
    """

    def __init__(self, text: str, parser: Lark, joiner: LineJoiner, builder: ToAst) -> None:
        self.text, self.parser, self.joiner, self.builder = text, parser, joiner, builder
        self.diagnostics: list[Diagnostic] = []

    def on_error(self, exc: UnexpectedInput) -> bool:
        diag, resume = diagnose(exc, self.text, self.builder.filename, self.parser, self.joiner)
        self.diagnostics.append(with_hint(diag, self.text))
        if len(self.diagnostics) >= MAX_ERRORS:
            return False
        state = exc.interactive_parser
        dropped = _cut_to_statement(state.parser_state)
        _forget_diagnostics(self.builder, dropped)
        _move_lexer(state.lexer_thread.state.line_ctr, self.text, resume)  # type: ignore[union-attr]
        self.joiner.restart()
        return True


def _cut_to_statement(state: Any) -> list:
    """Cut the parser's stacks back to just after the last whole statement.

    A statement ends with its `_NL` token; statements before it are already
    reduced into the `start` list at the bottom of the stack.
    """
    values = state.value_stack
    keep = 0
    for i in range(len(values) - 1, -1, -1):
        value = values[i]
        if (is_token(value) and value.type == "_NL") or (
            isinstance(value, Tree) and str(value.data).startswith("__start")
        ):
            keep = i + 1
            break
    dropped = values[keep:]
    del values[keep:]
    del state.state_stack[keep + 1:]
    return dropped


def _forget_diagnostics(builder: ToAst, dropped: list) -> None:
    """Take back what building the dropped part of a failed statement reported (a bad escape, ...).

    Its rules were built as they were reduced; the statement is skipped, so
    only its syntax error is reported, as if it had never been read.
    """
    start = next((_position(v) for v in dropped if _position(v) is not None), None)
    if start is None:
        return
    builder.diagnostics[:] = [
        d for d in builder.diagnostics if d.span is None or (d.span.line or 0, d.span.column or 0) < start
    ]


def _position(value: Any) -> tuple[int, int] | None:
    if is_token(value) and value.line is not None:
        return value.line, value.column or 0
    if isinstance(value, Tree) and not value.meta.empty:
        return value.meta.line, value.meta.column
    return None


def _move_lexer(counter: Any, text: str, pos: int) -> None:
    """Point Lark's line counter at `pos`, counting lines from where it stands."""
    here = counter.char_pos
    if pos >= here:
        line = counter.line + text.count("\n", here, pos)
    else:
        line = counter.line - text.count("\n", pos, here)
    line_start = text.rfind("\n", 0, pos) + 1
    counter.char_pos, counter.line, counter.line_start_pos = pos, line, line_start
    counter.column = pos - line_start + 1
