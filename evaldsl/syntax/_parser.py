"""`parse(text)`: .evl text -> `Suite`, or an `EvlError` listing every problem.

A file is parsed first without Lark (`_fastparse`, with the tables of the
parser cache); at its first syntax error, if it has one, it is parsed again
with Lark (`_recovery`), whose error recovery reports every error of the
file. The statements the first way already handed on are not handed on
again, so a caller that compiles each case as it is read (``emit``) sees each
one once, whichever way read it.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from . import _ast as a
from . import _fastparse, _tables
from ._building import BUILDER, LOCK, Built
from ._diagnostics import Diagnostic, EvlError
from ._group import Grouper, grouped
from ._joiner import LineJoiner
from ._transform import ToAst, token_span


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
    grouper = Grouper(emit)
    with LOCK:
        outer = BUILDER.current  # a parse started inside another one's `emit`
        try:
            syntax, comments, gave_up = _parse_into(text, filename, grouper)
            if gave_up:
                return _empty(filename), syntax  # MAX_ERRORS reached
            grouper.flush()
        finally:
            BUILDER.current = outer
    suite, placement = grouped(grouper, filename)
    suite = suite.model_copy(update={"comments": tuple(
        a.Comment.model_construct(text=str(t).rstrip("\r"), span=token_span(t, filename)) for t in comments
    )})
    return suite, syntax + placement


def _parse_into(text: str, filename: str, grouper: Grouper) -> tuple[list[Diagnostic], list, bool]:
    """Hand each whole statement of ``text`` to ``grouper``: the syntax and building diagnostics, the
    comments' tokens, and whether the parse gave up. Without Lark when the file has no syntax error."""
    tables = _tables.fast_tables()
    handed = 0
    if tables is not None:
        builder = ToAst(filename)

        def hand_on(stmt: Any) -> None:
            nonlocal handed
            handed += 1
            grouper.add(stmt)

        builder.sink = hand_on
        BUILDER.current = builder
        joiner = LineJoiner()
        joiner.reset(text)
        try:
            built = _fastparse.run(tables, text, joiner)
        except _fastparse.NeedLark:
            pass
        else:
            for stmt in built.value if isinstance(built, Built) else ():  # (all of them went to the sink)
                grouper.add(stmt)
            return builder.diagnostics, joiner.comments, False
    return _with_lark(text, filename, grouper, skip=handed)


def _with_lark(text: str, filename: str, grouper: Grouper, *, skip: int) -> tuple[list[Diagnostic], list, bool]:
    """Lark's parse of ``text`` (`_recovery`), the first ``skip`` statements left out: they were handed on
    before the first syntax error, and read again they are the same."""
    from ._recovery import lark_parse

    builder = ToAst(filename)
    left = skip

    def hand_on(stmt: Any) -> None:
        nonlocal left
        if left:
            left -= 1
        else:
            grouper.add(stmt)

    builder.sink = hand_on
    BUILDER.current = builder
    syntax, comments, gave_up = lark_parse(text, builder, hand_on)
    return (syntax if gave_up else syntax + builder.diagnostics), comments, gave_up


def _empty(filename: str) -> a.Suite:
    return a.Suite.model_construct(span=a.Span(file=filename), items=(), comments=())
