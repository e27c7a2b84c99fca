"""The `.evl` formatter: one canonical layout for every suite, comments kept.

`format_text(text)` parses and prints the suite back; the output parses to
the same AST (spans aside), and formatting it again changes nothing.

Layout: suite head statements at column 0; a blank line before every
`case` and `tool` block; block bodies indented two spaces and examples rows
four, with their columns padded to one width; one blank line where the
source had one or more between two statements (or comments); long strings
as `\"\"\"` blocks whose lines stand two spaces inside their statement; an
`expect` longer than `MAX_WIDTH` whose expression is a `then` chain or has
`else` fallbacks broken before each `then` / `else`.

Comments live outside the AST (`Suite.comments`, with spans), so they are
placed by line number. Each statement is a unit covering its source lines:
a comment on a unit's last line stays at the end of that line; one on
another line of a multi-line unit moves to its own line just before it; a
comment on a line of its own goes before the next unit, indented like it;
comments after the last unit stay at the end of the file.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from . import _ast as a
from ._unparse import expectation_parts, render

MAX_WIDTH = 88
"""Columns an `expect` line may take before a `then` / `else` chain is broken."""

BODY_INDENT = 2


@dataclass
class _Unit:
    """One statement's output lines, and where it stood in the source."""

    lines: list[str]
    start: int  # -1 until known (a node built by hand has no span)
    end: int
    indent: int
    header: bool = False
    leading: list[tuple[int, str]] = field(default_factory=list)
    inner: list[str] = field(default_factory=list)
    trailing: str | None = None


def format_text(text: str, filename: str = "<string>") -> str:
    """Parse .evl source and return it in canonical layout.

    Args:
        text: the file's contents.
        filename: used in the error raised for text that does not parse.

    Raises:
        EvlError: when `text` has a syntax or placement error.
    """
    from ._parser import parse

    return format_suite(parse(text, filename), text)


def format_suite(suite: a.Suite, source: str) -> str:
    """Print a parsed suite in canonical layout, with its comments.

    Args:
        suite: the suite, as `parse` returned it (spans and `comments` set);
            nodes without spans are laid out with no blank lines kept.
        source: the text it was parsed from, read only to find blank lines.
    """
    units = _units(suite)
    tail = _place_comments(units, suite.comments)
    lines = _emit(units, tail, source.split("\n"))
    return "\n".join(lines) + "\n" if lines else ""


# ------------------------------------------------------------ units --


def _units(suite: a.Suite) -> list[_Unit]:
    units: list[_Unit] = []
    for item in suite.items:
        if isinstance(item, (a.Case, a.Tool)):
            units.append(_unit(item, 0, [render(item, long_indent=0)], header=True))
            for stmt in item.body:
                units.extend(_statement(stmt, BODY_INDENT))
        else:
            units.extend(_statement(item, 0))
    previous = 0
    for unit in units:  # a node built by hand has no span: keep it in place
        if unit.start < 0:
            unit.start = unit.end = previous
        previous = unit.end
    return units


def _unit(node: Any, indent: int, lines: list[str], header: bool = False) -> _Unit:
    span = node.span
    start, end = (-1, -1) if span is None else (span.line, span.end_line)
    pad = " " * indent
    return _Unit([pad + lines[0], *lines[1:]], start, end, indent, header)


def _statement(stmt: Any, indent: int) -> list[_Unit]:
    if isinstance(stmt, a.ExpectStmt):
        return [_unit(stmt, indent, _expect_lines(stmt, indent))]
    head = _unit(stmt, indent, render(stmt, long_indent=indent).split("\n"))
    if isinstance(stmt, a.ExamplesStmt) and stmt.rows:
        return [head, *_table(stmt.rows, indent + BODY_INDENT)]
    return [head]


def _expect_lines(stmt: a.ExpectStmt, indent: int) -> list[str]:
    """`expect ...` on one line, or broken before each `then` / `else` when too wide."""
    parts = expectation_parts(stmt.expectation, long_indent=indent)
    text = "expect " + " ".join(parts)
    if len(parts) > 1 and _too_wide(" " * indent + text):
        text = "expect " + ("\n" + " " * (indent + BODY_INDENT)).join(parts)
    return text.split("\n")


def _too_wide(text: str) -> bool:
    return any(len(line) > MAX_WIDTH for line in text.split("\n"))


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
        units.append(_unit(node, indent, ("| " + " | ".join(padded) + " |").split("\n")))
    return units


def _last_width(text: str) -> int:
    """Width of a cell's last line (a long string cell spans several)."""
    return len(text) - text.rfind("\n") - 1


# --------------------------------------------------------- comments --


def _place_comments(
    units: list[_Unit], comments: tuple[a.Comment, ...]
) -> list[tuple[int, int, str]]:
    """Attach each comment to a unit; return those after the last unit (line, column, text)."""
    owner: dict[int, _Unit] = {}
    for each in units:
        for line in range(each.start, each.end + 1):
            owner.setdefault(line, each)
    starts = [each.start for each in units]
    tail: list[tuple[int, int, str]] = []
    placed = sorted((c.span.line, c.span.column, c.text.rstrip()) for c in comments if c.span)
    for line, column, text in placed:
        unit = owner.get(line)
        if unit is not None and line == unit.end and unit.trailing is None:
            unit.trailing = text
        elif unit is not None:
            unit.inner.append(text)
        elif (i := bisect.bisect_right(starts, line)) < len(units):
            units[i].leading.append((line, text))
        else:
            tail.append((line, column, text))
    last = tail[-1][0] if tail else 0
    tail += [(last, 1, c.text.rstrip()) for c in comments if c.span is None]
    return tail


# ------------------------------------------------------------- emit --


def _emit(units: list[_Unit], tail: list[tuple[int, int, str]], source: list[str]) -> list[str]:
    out: list[str] = []
    previous: int | None = None

    def blank_before(line: int) -> bool:
        return previous is not None and any(
            not source[i].strip() for i in range(previous, min(line - 1, len(source)))
        )

    for unit in units:
        pad = " " * unit.indent
        body = [pad + text for text in unit.inner] + unit.lines
        if unit.trailing:
            body[-1] += "  " + unit.trailing
        chunks = [(line, line, [pad + text]) for line, text in unit.leading]
        chunks.append((unit.start, unit.end, body))
        for i, (start, end, lines) in enumerate(chunks):
            if blank_before(start) or (unit.header and i == 0 and previous is not None):
                out.append("")
            out.extend(lines)
            previous = end
    last_indent = units[-1].indent if units else 0
    for line, column, text in tail:
        if blank_before(line):
            out.append("")
        out.append(" " * (last_indent if column > 1 else 0) + text)
        previous = line
    return out
