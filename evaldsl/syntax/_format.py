"""The `.evl` formatter: one canonical layout for every suite, comments kept.

`format_text(text)` parses and prints the suite back; the output parses to
the same AST (spans aside), and formatting it again changes nothing.

Layout: suite head statements at column 0; a blank line before every
`case` and `tool` block; block bodies indented two spaces and examples rows
four, with their columns padded to one width; one blank line where the
source had one or more between two statements (or comments); long strings
as `\"\"\"` blocks whose lines stand two spaces inside their line. Within a
statement (`_layout.py`): lines no wider than `line_width` where breaking
can help, continuation lines (`then`, `and`, `or`, `else`) kept where the
source had them, long brackets one entry per line.

Comments live outside the AST (`Suite.comments`, with spans), so they are
placed by line number. Each statement is a unit covering its source lines:
a comment on a line of its own goes before the next unit, indented like it;
one within a unit's lines is placed by `_layout.Statement` (at the end of
its line, inside its bracket, or above the statement); comments after the
last unit stay at the end of the file.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from . import _ast as a
from ._layout import BODY_INDENT, Source, Statement, segments
from ._unparse import render

LINE_WIDTH = 100
"""Columns a line may take before the formatter breaks it (`line_width=` to change)."""

Pos = tuple[int, int]


@dataclass
class _Unit:
    """One statement (or examples row), and where it stood in the source."""

    node: Any  # the statement to lay out; None for an examples row, laid out in `lines`
    start: int  # -1 until known (a node built by hand has no span)
    end: int
    indent: int
    header: bool = False
    lines: list[str] = field(default_factory=list)
    leading: list[tuple[int, str]] = field(default_factory=list)
    comments: list[tuple[Pos, str]] = field(default_factory=list)


def format_text(text: str, filename: str = "<string>", *, line_width: int = LINE_WIDTH) -> str:
    """Parse .evl source and return it in canonical layout.

    Args:
        text: the file's contents.
        filename: used in the error raised for text that does not parse.
        line_width: columns a line may take before it is broken (where it can be).

    Raises:
        EvlError: when `text` has a syntax or placement error.
    """
    from ._parser import parse

    return format_suite(parse(text, filename), text, line_width=line_width)


def format_suite(suite: a.Suite, source: str, *, line_width: int = LINE_WIDTH) -> str:
    """Print a parsed suite in canonical layout, with its comments.

    Args:
        suite: the suite, as `parse` returned it (spans and `comments` set);
            nodes without spans are laid out with no blank lines kept.
        source: the text it was parsed from, read to find blank lines, line
            breaks and trailing commas.
        line_width: as in `format_text`.
    """
    src = Source(source)
    units = _units(suite)
    tail = _place_comments(units, suite.comments)
    lines = _emit(units, tail, src, line_width)
    return "\n".join(lines) + "\n" if lines else ""


# ------------------------------------------------------------ units --


def _units(suite: a.Suite) -> list[_Unit]:
    units: list[_Unit] = []
    for item in suite.items:
        if isinstance(item, (a.Case, a.Tool)):
            units.append(_unit(item, 0, header=True))
            in_turn = False  # below a `user` line (v2), a turn's expectations stand 2 spaces further in
            for stmt in item.body:
                if isinstance(stmt, (a.UserStmt, a.SimulatedUserStmt)):
                    in_turn = isinstance(stmt, a.UserStmt)
                turn = in_turn and isinstance(stmt, a.ExpectStmt)
                units.extend(_statement(stmt, BODY_INDENT * (2 if turn else 1)))
        else:
            units.extend(_statement(item, 0))
    previous = 0
    for unit in units:  # a node built by hand has no span: keep it in place
        if unit.start < 0:
            unit.start = unit.end = previous
        previous = unit.end
    return units


def _unit(node: Any, indent: int, header: bool = False, lines: list[str] | None = None) -> _Unit:
    span = node.span
    start, end = (-1, -1) if span is None else (span.line, span.end_line)
    return _Unit(None if lines else node, start, end, indent, header, lines or [])


def _statement(stmt: Any, indent: int) -> list[_Unit]:
    head = _unit(stmt, indent)
    if isinstance(stmt, a.ExamplesStmt) and stmt.rows:
        return [head, *_table(stmt.rows, indent + BODY_INDENT)]
    return [head]


def _table(rows: tuple[a.TableRow, ...], indent: int) -> list[_Unit]:
    """Examples rows with every column padded to its widest cell."""
    cells = [[render(cell, long_indent=indent) for cell in row.cells] for row in rows]
    widths: dict[int, int] = {}
    for row in cells:
        for j, text in enumerate(row):
            widths[j] = max(widths.get(j, 0), _last_width(text))
    units = []
    for node, texts in zip(rows, cells):
        padded = [t + " " * (widths[j] - _last_width(t)) for j, t in enumerate(texts)]
        line = " " * indent + "| " + " | ".join(padded) + " |"
        units.append(_unit(node, indent, lines=line.split("\n")))
    return units


def _last_width(text: str) -> int:
    """Width of a cell's last line (a long string cell spans several)."""
    return len(text) - text.rfind("\n") - 1


# --------------------------------------------------------- comments --


def _place_comments(
    units: list[_Unit], comments: tuple[a.Comment, ...]
) -> list[tuple[int, int, str]]:
    """Give each comment to a unit; return those after the last unit (line, column, text)."""
    owner: dict[int, _Unit] = {}
    for each in units:
        for line in range(each.start, each.end + 1):
            owner.setdefault(line, each)
    starts = [each.start for each in units]
    tail: list[tuple[int, int, str]] = []
    placed = sorted((c.span.line, c.span.column, c.text.rstrip()) for c in comments if c.span)
    for line, column, text in placed:
        unit = owner.get(line)
        if unit is not None:
            unit.comments.append(((line, column), text))
        elif (i := bisect.bisect_right(starts, line)) < len(units):
            units[i].leading.append((line, text))
        else:
            tail.append((line, column, text))
    last = tail[-1][0] if tail else 0
    tail += [(last, 1, c.text.rstrip()) for c in comments if c.span is None]
    return tail


def _lay_out(unit: _Unit, source: Source, width: int) -> tuple[list[str], list[str]]:
    """A unit's lines, and the comments that move to their own lines above it."""
    if unit.node is not None:
        return Statement(segments(unit.node), unit.indent, width, source).lay_out(unit.comments)
    lines, moved = list(unit.lines), []
    for (line, _), text in unit.comments:  # an examples row: at its end, or above it
        if line == unit.end:  # one comment at most: it runs to the end of the line
            lines[-1] += "  " + text
        else:
            moved.append(text)
    return lines, moved


# ------------------------------------------------------------- emit --


def _emit(units: list[_Unit], tail: list[tuple[int, int, str]], src: Source, width: int) -> list[str]:
    out: list[str] = []
    previous: int | None = None
    source = src.lines

    def blank_before(line: int) -> bool:
        return previous is not None and any(
            not source[i].strip() for i in range(previous, min(line - 1, len(source)))
        )

    for unit in units:
        pad = " " * unit.indent
        lines, moved = _lay_out(unit, src, width)
        body = [pad + text for text in moved] + lines
        chunks = [(line, line, [pad + text]) for line, text in unit.leading]
        chunks.append((unit.start, unit.end, body))
        for i, (start, end, chunk) in enumerate(chunks):
            if blank_before(start) or (unit.header and i == 0 and previous is not None):
                out.append("")
            out.extend(chunk)
            previous = end
    last_indent = units[-1].indent if units else 0
    for line, column, text in tail:
        if blank_before(line):
            out.append("")
        out.append(" " * (last_indent if column > 1 else 0) + text)
        previous = line
    return out
