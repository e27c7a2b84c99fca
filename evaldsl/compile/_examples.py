"""Parametrized cases: read an examples table, then fill `$name` and `{{ name }}`.

Filling is an AST rewrite done before anything is compiled, so every later
stage sees concrete nodes. A `$name` becomes the cell's value shaped for its
position (a tool name, an argument pattern, a number, a text or any value),
decided from the AST field's declared type. `{{ name }}` is rendered in every
string of the case; `{{ "{{" }}` writes a literal `{{`.
"""

from __future__ import annotations

import csv
import io
import json
import re
import stat
import typing
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..syntax import _ast as a
from ..syntax._unparse import KEYWORDS
from ._errors import CompileProblem

Row = dict[str, Any]  # column name -> value node
_TEMPLATE = re.compile(r"\{\{\s*(.*?)\s*\}\}")


# ---------------------------------------------------------------- tables --


def _cell_name(cell: Any) -> str:
    if isinstance(cell, (a.Word, a.String)):
        return cell.value
    raise CompileProblem("a column name must be a word or a string", cell, code="E214")


def table_rows(stmt: a.ExamplesStmt, base_dir: Path) -> list[tuple[Row, Any]]:
    """The rows of an examples table (inline or from a file), each with the node to blame."""
    if stmt.source is not None:
        return [(row, stmt) for row in _file_rows(stmt.source, base_dir)]
    if not stmt.rows:
        raise CompileProblem("`examples` has no table rows", stmt, code="E214",
                             help="add a header row and data rows: | a | b |")
    header = [_cell_name(c) for c in stmt.rows[0].cells]
    if len(set(header)) != len(header):
        raise CompileProblem("duplicate column name in the examples header", stmt.rows[0], code="E214")
    rows = []
    for row in stmt.rows[1:]:
        if len(row.cells) != len(header):
            raise CompileProblem(
                f"this row has {_cells(len(row.cells))}, the header has {_cells(len(header))}", row, code="E214")
        rows.append((dict(zip(header, row.cells)), row))
    if not rows:
        raise CompileProblem("the examples table has a header but no rows", stmt, code="E214")
    return rows


def _cells(n: int) -> str:
    return f"{n} cell" if n == 1 else f"{n} cells"


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _file_rows(source: a.String, base_dir: Path) -> list[Row]:
    path = base_dir / source.value
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO or a device would block the read forever
            raise CompileProblem(f"examples file {source.value} is not a regular file", source, code="E215",
                                 help="name a .csv, .jsonl or .json file (not a FIFO, device or folder)")
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CompileProblem(f"cannot read examples file {source.value}: {exc}", source, code="E215") from None
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            return _csv_rows(text, source)
        if suffix == ".jsonl":
            records: Any = [json.loads(line, parse_constant=_no_constants)
                            for line in text.splitlines() if line.strip()]
        elif suffix == ".json":
            records = json.loads(text, parse_constant=_no_constants)
        else:
            raise CompileProblem(f"examples file must be .csv, .jsonl or .json, not {suffix or 'no suffix'}",
                                 source, code="E215")
    except (ValueError, csv.Error) as exc:
        raise CompileProblem(f"cannot parse examples file {source.value}: {exc}", source, code="E215") from None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records) or not records:
        raise CompileProblem(f"examples file {source.value} must hold one or more objects", source, code="E215")
    return [{k: from_python(v, source.span) for k, v in rec.items()} for rec in records]


def _csv_rows(text: str, source: a.String) -> list[Row]:
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if not header:
        raise CompileProblem(f"examples file {source.value} has no header row", source, code="E215")
    rows = []
    for number, record in enumerate(reader, start=2):
        if not record:
            continue
        if len(record) != len(header):
            raise CompileProblem(
                f"{source.value} line {number} has {_cells(len(record))}, the header has {_cells(len(header))}",
                source, code="E215")
        rows.append({k: _csv_cell(v, source.span) for k, v in zip(header, record)})
    if not rows:
        raise CompileProblem(f"examples file {source.value} has no rows", source, code="E215")
    return rows


def _csv_cell(text: str, span: a.Span | None) -> Any:
    """A CSV cell: a JSON number, true, false or null when it reads as one (kept as written), else text."""
    try:
        value = json.loads(text, parse_constant=_no_constants)
    except ValueError:
        return a.String.model_construct(span=span, value=text, long=False)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return a.Number.model_construct(span=span, value=value, raw=text.strip())
    if isinstance(value, bool) or value is None:
        return a.Constant.model_construct(span=span, value=value)
    return a.String.model_construct(span=span, value=text, long=False)


def from_python(value: Any, span: a.Span | None = None) -> Any:
    """A JSON value -> the equivalent value node."""
    if isinstance(value, bool) or value is None:
        return a.Constant.model_construct(span=span, value=value)
    if isinstance(value, (int, float)):
        return a.Number.model_construct(span=span, value=value, raw=json.dumps(value))
    if isinstance(value, str):
        return a.String.model_construct(span=span, value=value, long=False)
    if isinstance(value, list):
        return a.ArrayValue.model_construct(span=span, items=tuple(from_python(v, span) for v in value))
    entries = tuple(
        a.Entry.model_construct(span=span, key=str(k), value=from_python(v, span)) for k, v in value.items()
    )
    return a.ObjectValue.model_construct(span=span, entries=entries)


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


def substitute(node: Any, row: Row | None) -> Any:
    """Return `node` with placeholders and templates filled from `row`."""
    if isinstance(node, tuple):
        new = tuple(substitute(x, row) for x in node)
        return node if all(x is y for x, y in zip(new, node)) else new
    if isinstance(node, a.String):
        value = render(node.value, row, node)
        return node if value == node.value else node.model_copy(update={"value": value})
    if not isinstance(node, a.Node):
        return node
    if isinstance(node, a.EqualsPattern) and isinstance(node.value, a.Placeholder) and not node.ignore_case:
        filled = _fill(node.value, row, _field_kinds(a.EqualsPattern, "value"))
        if isinstance(filled, (a.ObjectValue, a.ArrayValue)):
            return as_pattern(filled)  # an object cell in a pattern matches by the subset rule
        return node.model_copy(update={"value": filled})
    changes = {}
    for field in type(node).model_fields:
        if field in ("span", "kind"):
            continue
        child = getattr(node, field)
        if isinstance(child, a.Placeholder):
            new = _fill(child, row, _field_kinds(type(node), field))
        elif isinstance(child, tuple) and any(isinstance(x, a.Placeholder) for x in child):
            kinds = _field_kinds(type(node), field)
            new = tuple(_fill(x, row, kinds) if isinstance(x, a.Placeholder) else substitute(x, row)
                        for x in child)
        else:
            new = substitute(child, row)
        if new is not child:
            changes[field] = new
    return node.model_copy(update=changes) if changes else node





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
            raise CompileProblem(f"`${ph.name}` names a tool, but its cell is not a name", ph, code="E201")
        return a.ToolName.model_construct(span=span, name=cell.value)
    if "object_pattern" in kinds and "equals_pattern" not in kinds:
        if not isinstance(cell, a.ObjectValue):
            raise CompileProblem(f"`${ph.name}` stands for arguments, but its cell is not an object", ph,
                                 code="E201")
        return as_pattern(cell)
    if "number" in kinds and "string" not in kinds:
        if not isinstance(cell, a.Number):
            raise CompileProblem(f"`${ph.name}` must be a number here", ph, code="E201")
        return cell.model_copy(update={"span": span})
    if "string" in kinds and "word" not in kinds and not isinstance(cell, a.String):
        return a.String.model_construct(span=span, value=cell_text(cell), long=False)
    if isinstance(cell, a.Word) and cell.value in KEYWORDS:
        # a word cell `any` is the string "any"; as a word it would read as the any-pattern in labels
        return a.String.model_construct(span=span, value=cell.value, long=False)
    return cell.model_copy(update={"span": span})


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
