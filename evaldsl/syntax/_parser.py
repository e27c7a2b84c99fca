"""`parse(text)`: .evl text -> `Suite`, or an `EvlError` listing every problem.

This module (with `_syntax_errors.py`) is the one boundary where Lark's
exceptions become evaldsl's diagnostics (DESIGN rule 4). To report every
syntax error in a file, not only the first, Lark's error handler reports
the error, skips the failed statement and lets the same parse go on, up to
`MAX_ERRORS` errors: one parse of the file, however many errors it holds.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from . import _ast as a
from ._building import BUILDER, Built
from ._diagnostics import Diagnostic, EvlError
from ._grammar import LOCK, LineJoiner, get_parser
from ._group import Grouper, grouped
from ._hints import with_hint
from ._syntax_errors import diagnose, token_span
from ._transform import ToAst

MAX_ERRORS = 20


def parse(text: str, filename: str = "<string>") -> a.Suite:
    """Parse .evl source into a `Suite`.

    Args:
        text: the file's contents.
        filename: shown in diagnostics and recorded in every span.

    Raises:
        EvlError: with every syntax and placement error found in the text.
    """
    suite, diagnostics = parse_with_diagnostics(text, filename)
    if any(d.severity == "error" for d in diagnostics):
        raise EvlError(diagnostics, {filename: text})
    return suite


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building a large tree.

    A parse makes hundreds of thousands of small acyclic objects; left on,
    the collector walks them all again and again and triples the time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_with_diagnostics(text: str, filename: str = "<string>") -> tuple[a.Suite, list[Diagnostic]]:
    """Parse, returning the (possibly partial) suite and all diagnostics, warnings included."""
    with gc_paused():
        return parse_items(text, filename)


def parse_items(text: str, filename: str, emit: Callable[[Any], None] | None = None
                ) -> tuple[a.Suite, list[Diagnostic]]:
    """Parse; with ``emit``, each item of the file (a head statement, a `Case`, a `Tool`) is given
    to it as soon as it is whole, and the returned suite holds none of them (only the comments).

    ``emit`` may itself parse another file (a `use` line compiled as the file is read):
    the parse in progress is put aside and resumed.
    """
    if text.startswith("\ufeff"):
        text = text[1:]  # a BOM: columns then count as an editor shows them
    if "\r" in text:
        text = text.replace("\r\n", "\n")  # CRLF: lines and columns stay the same
    parser, joiner = get_parser()
    builder = ToAst(filename)
    grouper = Grouper(emit)
    builder.sink = grouper.add
    recovery = _Recovery(text, filename, parser, joiner, builder)
    with LOCK:
        outer, outer_joiner = BUILDER.current, joiner.save()  # a parse started inside another one's `emit`
        joiner.reset(text)
        BUILDER.current = builder
        try:
            built = parser.parse(text, on_error=recovery.on_error)
            for stmt in built.value if isinstance(built, Built) else ():  # (all of them went to the sink)
                grouper.add(stmt)
            grouper.flush()
        except UnexpectedInput:
            return _empty(filename), recovery.diagnostics  # MAX_ERRORS reached
        finally:
            BUILDER.current = outer
            comments = [
                a.Comment.model_construct(text=str(t).rstrip("\r"), span=token_span(t, filename))
                for t in joiner.comments
            ]
            joiner.load(outer_joiner)
    suite, placement = grouped(grouper, filename)
    suite = suite.model_copy(update={"comments": tuple(comments)})
    return suite, recovery.diagnostics + builder.diagnostics + placement


class _Recovery:
    """Lark's error handler: report the error, skip its statement, parse on.

    The parser's stacks are cut back to the end of the last whole statement
    and the lexer moved past the failed one, so the parse goes on where it
    stopped: every error of a file costs one parse of the file, not one each.
    """

    def __init__(self, text: str, filename: str, parser: Lark, joiner: LineJoiner, builder: ToAst) -> None:
        self.text, self.filename, self.parser, self.joiner = text, filename, parser, joiner
        self.builder = builder
        self.diagnostics: list[Diagnostic] = []

    def on_error(self, exc: UnexpectedInput) -> bool:
        diag, resume = diagnose(exc, self.text, self.filename, self.parser, self.joiner)
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
        if (isinstance(value, Token) and value.type == "_NL") or (
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
    if isinstance(value, Token) and value.line is not None:
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


def _empty(filename: str) -> a.Suite:
    return a.Suite.model_construct(span=a.Span(file=filename), items=(), comments=())


