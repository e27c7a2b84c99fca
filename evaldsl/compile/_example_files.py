"""Examples files (`examples from "rows.csv"`): read them into rows, and say exactly what is wrong.

A problem inside the file (a JSON syntax error, a CSV row of the wrong
length) is positioned in the file itself, so the long form shows the data
line under a caret; the message names the `examples from` line that read
it. A bad path or an unreadable file is an error at that line. Rows from a
file are `FileRow`s that know their place (`rows.csv:3`), so a cell of the
wrong kind can be named when a placeholder is filled.
"""

from __future__ import annotations

import io
import json
import math
import re
import stat
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..syntax import _ast as a
from ._errors import CompileProblem
from ._positions import ByPosition
from ._reads import note_read

Row = dict[str, Any]  # column name -> value node
MAX_NESTING = 64  # arrays and objects in an examples file, as in a suite (docs/language.md 9.2)
MAX_NAME, MAX_PATH = 255, 4096  # bytes: the usual limits of a file name and a path


def shown_path(value: str, limit: int = 60) -> str:
    """A path for a message: printable, and cut when long."""
    text = value.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\0")
    return "`" + (text if len(text) <= limit else text[: limit - 3] + "...") + "`"


def cells(n: int) -> str:
    return f"{n} cell" if n == 1 else f"{n} cells"


class FileRow(dict):  # type: ignore[type-arg]
    """A row read from an examples file; `where` is its place, `file.csv:ROW`, for messages."""

    where: str = ""


_JSON_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _json_error(exc: ValueError, text: str) -> tuple[int, int, str]:
    """(line, column, what) of a JSON error in `text`; NaN and Infinity are found outside strings."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.lineno, exc.colno, exc.msg
    for match in _JSON_CONSTANT.finditer(text):
        if match.group(1):
            line = text.count("\n", 0, match.start()) + 1
            col = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
            return line, col, f"{match.group(1)} is not a JSON number"
    return 1, 1, str(exc)


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in a JSON value (iteratively: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _json_records(text: str, suffix: str, data: _DataFile, source: a.String) -> list[Any]:
    """The records of a .json file (parsed), or the lines of a .jsonl file (each checked to parse).

    The lines of a .jsonl file are kept as text (`_Lines`) and parsed again when their
    row is wanted: a line's text takes a fraction of the memory of its values.
    """
    if suffix == ".json":
        try:
            records = json.loads(text, parse_constant=_no_constants)
        except ValueError as exc:
            line, col, what = _json_error(exc, text)
            raise data.problem(f"examples file does not parse: {what}", line, col) from None
        except RecursionError:
            raise _too_deep(source) from None
        if _depth(records) > MAX_NESTING + 1:  # + 1: the list of records itself
            raise _too_deep(source)
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records) or not records:
            raise _not_objects(source)
        return records
    lines, too_deep, not_objects = _Lines(), False, False
    for number, line_text in enumerate(text.split("\n"), start=1):
        if not line_text.strip():
            continue
        try:
            record = json.loads(line_text, parse_constant=_no_constants)
        except ValueError as exc:
            _, col, what = _json_error(exc, line_text)
            raise data.problem(f"examples file does not parse: {what}", number, col) from None
        except RecursionError:
            raise _too_deep(source) from None
        too_deep = too_deep or _depth(record) > MAX_NESTING
        not_objects = not_objects or not isinstance(record, dict)
        lines.append(line_text)
    if too_deep:
        raise _too_deep(source)
    if not_objects or not lines:
        raise _not_objects(source)
    return lines  # type: ignore[return-value]


class _Lines(ByPosition[bytes]):
    """The lines of a .jsonl file, UTF-8 in one buffer with where each ends: about 8 bytes a line
    beside its text, where a list of strings took about 60."""

    what = "line"

    def __init__(self) -> None:
        self._text = bytearray()
        self._ends = array("q")

    def append(self, line: str) -> None:
        self._text += line.encode("utf-8")  # read as UTF-8: it encodes back
        self._ends.append(len(self._text))

    def __len__(self) -> int:
        return len(self._ends)

    def _at(self, i: int) -> bytes:
        ends = self._ends
        return bytes(self._text[ends[i - 1] if i else 0:ends[i]])

    def __iter__(self) -> Iterator[bytes]:
        text, start = self._text, 0
        for end in self._ends:
            yield bytes(text[start:end])
            start = end


def _too_deep(source: a.String) -> CompileProblem:
    return CompileProblem(f"examples file {source.value} nests arrays or objects deeper than {MAX_NESTING} levels",
                          source, code="E215")


def _not_objects(source: a.String) -> CompileProblem:
    return CompileProblem(f"examples file {source.value} must hold one or more objects", source, code="E215")


class FileRows(ByPosition[Row]):
    """The rows of an examples file, read and checked once; each row's values are made when it is wanted.

    What is kept per row is its text (a .jsonl line), its cells (.csv) or its
    parsed record (.json), so a file of 100,000 rows costs little until its
    rows are used, one at a time.
    """

    what = "row"

    def __init__(self, records: list[Any], make: Callable[[int, Any], Row]) -> None:
        self._records, self._make = records, make

    def __len__(self) -> int:
        return len(self._records)

    def _at(self, i: int) -> Row:
        return self._make(i, self._records[i])

    def __iter__(self) -> Iterator[Row]:
        make = self._make
        for i, record in enumerate(self._records):
            yield make(i, record)


class _At:
    """Stands in for an AST node: what a `CompileProblem` needs is a span."""

    def __init__(self, span: a.Span) -> None:
        self.span = span


class _DataFile:
    """An examples file being read: makes problems positioned in it, its text riding along."""

    def __init__(self, source: a.String, shown: str, text: str) -> None:
        self.source, self.shown, self.text = source, shown, text

    def problem(self, message: str, line: int, column: int, width: int = 1) -> CompileProblem:
        span = a.Span.model_construct(file=self.shown, line=line, column=column,
                                      end_line=line, end_column=column + max(1, width))
        where = self.source.span
        read_at = f" (read at {where.file}:{where.line})" if where is not None else ""
        problem = CompileProblem(message + read_at, _At(span), code="E215")
        problem.source_text = (self.shown, self.text)  # type: ignore[attr-defined]
        return problem


def bad_path(value: str) -> str | None:
    """Why a path written in a suite cannot name a file, or None.

    Checked before the file system sees it, so a NUL, a lone surrogate or an
    over-long name is a positioned error rather than a traceback from `open`.
    """
    if "\x00" in value:
        return "it holds a NUL character"
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        return "it holds a lone surrogate (\\ud800 to \\udfff), which no file name can hold"
    parts = value.replace("\\", "/").split("/")
    if len(value.encode("utf-8")) > MAX_PATH or any(len(p.encode("utf-8")) > MAX_NAME for p in parts):
        return f"it is too long (at most {MAX_NAME} bytes a name, {MAX_PATH} in all)"
    return None


def file_rows(source: a.String, base_dir: Path) -> FileRows:
    """The rows of an `examples from` file; every problem of the file itself is a `CompileProblem`."""
    why = bad_path(source.value)
    if why is not None:
        raise CompileProblem(f"cannot read examples file {shown_path(source.value)}: {why}", source, code="E215")
    path = base_dir / source.value
    note_read(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO or a device would block the read forever
            raise CompileProblem(f"examples file {source.value} is not a regular file", source, code="E215",
                                 help="name a .csv, .jsonl or .json file (not a FIFO, device or folder)")
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CompileProblem(f"cannot read examples file {source.value}: {exc}", source, code="E215") from None
    suffix = path.suffix.lower()
    data = _DataFile(source, str(path), text)
    if suffix == ".csv":
        import csv  # here: a suite without a CSV examples file does not import it

        try:
            return _csv_rows(text, source, data)
        except csv.Error as exc:
            raise CompileProblem(f"cannot parse examples file {source.value}: {exc}", source, code="E215") from None
    if suffix not in (".json", ".jsonl"):
        raise CompileProblem(f"examples file must be .csv, .jsonl or .json, not {suffix or 'no suffix'}",
                             source, code="E215")
    records = _json_records(text, suffix, data, source)
    span = source.span

    def make(i: int, record: Any) -> Row:
        if isinstance(record, bytes):  # a .jsonl line, checked when the file was read
            record = json.loads(record.decode("utf-8"), parse_constant=_no_constants)
        row = FileRow((k, from_python(v, span)) for k, v in record.items())
        row.where = f"{source.value} record {i + 1}"
        return row

    return FileRows(records, make)


def _csv_rows(text: str, source: a.String, data: _DataFile) -> FileRows:
    import csv

    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if not header:
        raise CompileProblem(f"examples file {source.value} has no header row", source, code="E215")
    records: list[tuple[int, list[str]]] = []
    start = reader.line_num + 1
    for record in reader:
        first, start = start, reader.line_num + 1  # a quoted cell may span lines: the record's first line
        if not record:
            continue
        if len(record) != len(header):
            width = len(text.split("\n", first)[first - 1]) if first <= text.count("\n") + 1 else 1
            raise data.problem(f"this row has {cells(len(record))}, the header has {cells(len(header))}",
                               first, 1, width)
        records.append((first, record))
    if not records:
        raise CompileProblem(f"examples file {source.value} has no rows", source, code="E215")
    span = source.span

    def make(i: int, item: tuple[int, list[str]]) -> Row:
        first, record = item
        row = FileRow((k, _csv_cell(v, span)) for k, v in zip(header, record))
        row.where = f"{source.value}:{first}"
        return row

    return FileRows(records, make)


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
        return a.Number.model_construct(span=span, value=value, raw=_json_number(value))
    if isinstance(value, str):
        return a.String.model_construct(span=span, value=value, long=False)
    if isinstance(value, list):
        return a.ArrayValue.model_construct(span=span, items=tuple(from_python(v, span) for v in value))
    entries = tuple(
        a.Entry.model_construct(span=span, key=str(k), value=from_python(v, span)) for k, v in value.items()
    )
    return a.ObjectValue.model_construct(span=span, entries=entries)


def _json_number(value: int | float) -> str:
    """``json.dumps(value)`` of a number, without building an encoder each time (a row's numbers are
    made at every read of it): json writes an int and a finite float as their repr."""
    if type(value) is int:
        return int.__repr__(value)
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    return json.dumps(value)
