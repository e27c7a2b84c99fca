"""Parametrized cases: read an examples table, then fill `$name` and `{{ name }}`.

Filling is an AST rewrite done before anything is compiled, so every later
stage sees concrete nodes. A `$name` becomes the cell's value shaped for its
position (a tool name, an argument pattern, a number, a text or any value),
decided from the AST field's declared type. `{{ name }}` is rendered in every
string of the case; `{{ "{{" }}` writes a literal `{{`.
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..syntax import _ast as a
from ..syntax._unparse import QUOTED_WORDS
from ._errors import CompileProblem
from ._example_files import FileRow, Row, cells, file_rows
from ._example_files import from_python as from_python  # re-exported: tests build values with it

_TEMPLATE = re.compile(r"\{\{\s*(.*?)\s*\}\}")


# ---------------------------------------------------------------- tables --


def _cell_name(cell: Any) -> str:
    if isinstance(cell, (a.Word, a.String)):
        return cell.value
    raise CompileProblem("a column name must be a word or a string", cell, code="E214")


def table_rows(stmt: a.ExamplesStmt, base_dir: Path,
               report: Callable[[CompileProblem], None] | None = None) -> list[tuple[Row, Any]]:
    """The rows of an examples table (inline or from a file), each with the node to blame.

    A row with the wrong number of cells is given to `report` (when given)
    and left out, so the other rows are still checked.
    """
    if stmt.source is not None:
        return [(row, stmt) for row in file_rows(stmt.source, base_dir)]
    if not stmt.rows:
        raise CompileProblem("`examples` has no table rows", stmt, code="E214",
                             help="add a header row and data rows: | a | b |")
    header = [_cell_name(c) for c in stmt.rows[0].cells]
    if len(set(header)) != len(header):
        raise CompileProblem("duplicate column name in the examples header", stmt.rows[0], code="E214")
    rows = []
    for row in stmt.rows[1:]:
        if len(row.cells) != len(header):
            problem = CompileProblem(
                f"this row has {cells(len(row.cells))}, the header has {cells(len(header))}", row, code="E214")
            if report is None:
                raise problem
            report(problem)
            continue
        rows.append((dict(zip(header, row.cells)), row))
    if not rows and len(stmt.rows) > 1:
        return []  # every row was reported
    if not rows:
        raise CompileProblem("the examples table has a header but no rows", stmt, code="E214")
    return rows


def unknown_columns(case: a.Case, stmt: a.ExamplesStmt) -> list[CompileProblem]:
    """The `$name` placeholders and `{{ name }}` templates of ``case`` that its inline table's header lacks.

    Used when no row of the table could be used (every one had the wrong number
    of cells): the placeholders are then checked against the header alone, so a
    short row does not hide them until it is fixed.
    """
    if stmt.source is not None or not stmt.rows:
        return []
    header: Row = {_cell_name(c): c for c in stmt.rows[0].cells}
    problems = []
    for node in a.walk(tuple(s for s in case.body if s is not stmt) + (case.name,)):
        if isinstance(node, a.Placeholder) and node.name not in header:
            problems.append(_unknown(node.name, header, node))
        elif isinstance(node, a.String) and "{{" in node.value:
            for inner in _TEMPLATE.findall(node.value):
                if not inner.startswith('"') and inner not in header:
                    problems.append(_unknown(inner, header, node))
    return problems


ROW_SETTINGS = ("tags", "skip", "xfail")
"""Columns that set the row's own setting: used by being there."""


def unused_columns(case: a.Case, stmt: a.ExamplesStmt) -> list[Any]:
    """The header cells of ``case``'s inline table that nothing in the case uses: no `$name`, no
    `{{ name }}`, and not a row setting (a column written and then forgotten, or misspelt)."""
    if stmt.source is not None or not stmt.rows:
        return []
    used: set[str] = set()
    for node in a.walk(tuple(s for s in case.body if s is not stmt) + (case.name,)):
        if isinstance(node, a.Placeholder):
            used.add(node.name)
        elif isinstance(node, a.String) and "{{" in node.value:
            used.update(inner for inner in _TEMPLATE.findall(node.value) if not inner.startswith('"'))
    out = []
    for cell in stmt.rows[0].cells:
        try:
            name = _cell_name(cell)
        except CompileProblem:
            continue  # reported as an error of its own
        if name not in used and name not in ROW_SETTINGS:
            out.append(cell)
    return out


def cell_text(cell: Any) -> str:
    """A cell as written in the table: strings without quotes, numbers as spelled."""
    if isinstance(cell, (a.String, a.Word)):
        return cell.value
    if isinstance(cell, a.Number):
        return cell.raw
    if isinstance(cell, a.Constant):
        return json.dumps(cell.value)
    from ._values import to_python

    return json.dumps(to_python(cell), ensure_ascii=False)


# ------------------------------------------------------------- templates --


def render(text: str, row: Row | None, node: Any) -> str:
    """Fill `{{ name }}` in a string; without a row (no examples), text is left as is."""
    if row is None or "{{" not in text:
        return text

    def fill(m: re.Match[str]) -> str:
        inner = m.group(1)
        if inner.startswith('"') and inner.endswith('"') and len(inner) >= 2:
            try:
                literal = json.loads(inner)
            except ValueError:
                literal = None
            if not isinstance(literal, str):
                raise CompileProblem(f"`{{{{ {inner} }}}}` is neither a column name nor one string",
                                     node, code="E201", help='write a literal `{{` as {{ "{{" }}')
            return literal
        if inner not in row:
            raise _unknown(inner, row, node)
        return cell_text(row[inner])

    return _TEMPLATE.sub(fill, text)


def _unknown(name: str, row: Row, node: Any) -> CompileProblem:
    import difflib

    close = difflib.get_close_matches(name, list(row), n=1)
    return CompileProblem(
        f"unknown example column `{name}`", node, code="E201",
        suggestion=close[0] if close else None,
        help=f"the columns are: {', '.join(row) or '(none)'}",
    )


# ------------------------------------------------------------ substitution --


@lru_cache(maxsize=None)
def _field_kinds(cls: type, field: str) -> frozenset[str]:
    """Every node `kind` that a field of an AST class may hold."""
    kinds: set[str] = set()

    def walk(tp: Any) -> None:
        for arg in typing.get_args(tp):
            walk(arg)
        if isinstance(tp, type) and issubclass(tp, a.Node):
            kinds.add(tp.model_fields["kind"].default)

    walk(cls.model_fields[field].annotation)  # type: ignore[attr-defined]
    return frozenset(kinds)


def holes(node: Any) -> set[int]:
    """The ids of the nodes (and tuples) of ``node`` that hold a `$name` or a `{{ }}` at or below them.

    `substitute` given this set returns every other part as it is without
    looking inside: a case compiled for each of many rows walks only the
    parts that rows fill. The ids stay valid while ``node`` lives.
    """
    found: set[int] = set()

    def visit(item: Any) -> bool:
        if isinstance(item, tuple):
            inner = [visit(x) for x in item]
            hit = any(inner)
        elif isinstance(item, a.Placeholder):
            hit = True
        elif isinstance(item, a.String):
            hit = "{{" in item.value
        elif isinstance(item, a.Node):
            inner = [visit(getattr(item, f)) for f in type(item).model_fields if f not in ("span", "kind")]
            hit = any(inner)
        else:
            return False
        if hit:
            found.add(id(item))
        return hit

    visit(node)
    return found


def substitute(node: Any, row: Row | None, holes: set[int] | None = None) -> Any:
    """Return `node` with placeholders and templates filled from `row`.

    ``holes`` (from `holes` of a node that holds this one) lets the parts without any be skipped.
    """
    if holes is not None and id(node) not in holes:
        return node
    if isinstance(node, tuple):
        new = tuple(substitute(x, row, holes) for x in node)
        return node if all(x is y for x, y in zip(new, node)) else new
    if isinstance(node, a.String):
        value = render(node.value, row, node)
        return node if value == node.value else a.replaced(node, value=value)
    if not isinstance(node, a.Node):
        return node
    if isinstance(node, a.EqualsPattern) and isinstance(node.value, a.Placeholder) and not node.ignore_case:
        filled = _fill(node.value, row, _field_kinds(a.EqualsPattern, "value"))
        if isinstance(filled, (a.ObjectValue, a.ArrayValue)):
            return as_pattern(filled)  # an object cell in a pattern matches by the subset rule
        return a.replaced(node, value=filled)
    changes = {}
    for field in type(node).model_fields:
        if field in ("span", "kind"):
            continue
        child = getattr(node, field)
        if isinstance(child, a.Placeholder):
            new = _fill(child, row, _field_kinds(type(node), field))
        elif isinstance(child, tuple) and any(isinstance(x, a.Placeholder) for x in child):
            kinds = _field_kinds(type(node), field)
            new = tuple(_fill(x, row, kinds) if isinstance(x, a.Placeholder) else substitute(x, row, holes)
                        for x in child)
        else:
            new = substitute(child, row, holes)
        if new is not child:
            changes[field] = new
    return a.replaced(node, **changes) if changes else node





def _fill(ph: a.Placeholder, row: Row | None, kinds: frozenset[str]) -> Any:
    if row is None:
        raise CompileProblem(f"`${ph.name}` needs an examples table", ph, code="E201",
                             help="placeholders are filled from the case's `examples` rows")
    if ph.name not in row:
        raise _unknown(ph.name, row, ph)
    cell = row[ph.name]
    span = ph.span
    if "tool_name" in kinds:
        if not isinstance(cell, (a.Word, a.String)):
            raise CompileProblem(f"`${ph.name}` names a tool, but its cell is not a name{_origin(row, ph.name)}",
                                 ph, code="E201")
        return a.ToolName.model_construct(span=span, name=cell.value)
    if "object_pattern" in kinds and "placeholder" in kinds:  # a call's ARGS: `with $args`
        if not isinstance(cell, a.ObjectValue):
            raise CompileProblem(
                f"`${ph.name}` stands for arguments, but its cell is not an object{_origin(row, ph.name)}", ph,
                code="E201")
        return as_pattern(cell)
    if "number" in kinds and "string" not in kinds:
        if not isinstance(cell, a.Number):
            raise CompileProblem(f"`${ph.name}` must be a number here{_origin(row, ph.name)}", ph, code="E201")
        return a.replaced(cell, span=span)
    if "string" in kinds and "word" not in kinds and not isinstance(cell, a.String):
        return a.String.model_construct(span=span, value=cell_text(cell), long=False)
    if isinstance(cell, a.Word) and cell.value in QUOTED_WORDS:
        # a word cell `any` is the string "any"; as a word it would read as the any-pattern in labels
        return a.String.model_construct(span=span, value=cell.value, long=False)
    return a.replaced(cell, span=span)


def _origin(row: Row, name: str) -> str:
    """For a row read from a file: where the bad cell is, and what it holds."""
    if not isinstance(row, FileRow):
        return ""
    shown = cell_text(row[name])
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return f"; {row.where}, column `{name}`, holds `{shown}`"


def as_pattern(value: Any) -> Any:
    """An object (or array) value used as a pattern: objects match by the subset rule, all the way down."""
    if isinstance(value, a.ObjectValue):
        entries = tuple(
            a.KeyPattern.model_construct(span=e.span, key=e.key, pattern=as_pattern(e.value))
            for e in value.entries
        )
        return a.ObjectPattern.model_construct(span=value.span, entries=entries)
    if isinstance(value, a.ArrayValue):
        items = tuple(as_pattern(v) for v in value.items)
        return a.ArrayPattern.model_construct(span=value.span, items=items)
    return a.EqualsPattern.model_construct(span=value.span, value=value, ignore_case=False)
