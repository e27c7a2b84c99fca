"""What the language server knows of a document: its AST (even half-typed), tools, cases, columns.

Built only from the public API (`evaldsl.parse`, the AST it returns, the
`EvlError` it raises). A file being typed rarely parses, so the outline
parses what it can: each line an error points at is blanked (line numbers
kept, so positions stay true) and the text parsed again, a few times. Tools
reached through `use` are read the same way, from the editor's open buffer
of that file when there is one (``sources``), else from disk; cycles cut. Nothing
here raises: a document that cannot be read at all has an empty outline.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import evaldsl
from evaldsl import EvlError, Span
from evaldsl.compile._session import inside_root

MAX_BLANKING_ROUNDS = 8


@dataclass(frozen=True)
class ToolInfo:
    name: str
    file: str
    span: Span
    """Where the tool's name stands (go to definition)."""
    declaration: str
    """The `tool` line and its body, as written."""
    params: tuple[tuple[str, str], ...]
    """(name, one-line description: type, optional, text)."""


@dataclass(frozen=True)
class CaseInfo:
    name: str
    span: Span
    columns: tuple[str, ...]
    turns: tuple[tuple[str, Span], ...] = ()
    """A conversation's `user` lines (v2): (message, span), in order; the outline shows them under the case."""
    end_line: int = 0
    """The last line of the case's block (0: its `case` line only)."""
    simulated: tuple[str, Span] | None = None
    """Its `simulated user` line (v2): (instructions, span)."""


@dataclass
class Outline:
    file: str
    suite_name: str
    suite_span: Span | None = None
    cases: list[CaseInfo] = field(default_factory=list)
    tools: dict[str, ToolInfo] = field(default_factory=dict)
    """Declared here or reached through `use`; the first declaration of a name wins."""
    local_tools: list[ToolInfo] = field(default_factory=list)

    def case_at(self, line: int) -> CaseInfo | None:
        """The case whose block holds 1-based ``line``."""
        found = None
        for case in self.cases:
            if case.span.line <= line:
                found = case
        return found


def tolerant_parse(text: str, filename: str) -> Any:
    """The AST of ``text``, with lines that do not parse blanked; None when nothing parses."""
    lines = text.split("\n")
    for _ in range(MAX_BLANKING_ROUNDS):
        try:
            return evaldsl.parse("\n".join(lines), filename)
        except EvlError as exc:
            bad = {d.span.line for d in exc.errors if d.span is not None and d.span.file == filename}
            bad = {n for n in bad if 0 < n <= len(lines) and lines[n - 1].strip()}
            if not bad:
                return None
            for n in bad:
                lines[n - 1] = ""
        except Exception:  # a parser bug must not take the editor down
            return None
    return None


def build_outline(text: str, filename: str, *, typing_at: int | None = None,
                  sources: Mapping[str, str] | None = None, root: Path | None = None) -> Outline:
    """The outline of ``text``; ``typing_at`` (0-based) is the line being typed, left out of the
    parse since it is the likeliest not to parse yet (an open `<` there would swallow the rest).
    With a ``root`` (`evaldsl lsp --root`), no `use` or examples file outside it is read."""
    lines = text.split("\n")
    if typing_at is not None and 0 <= typing_at < len(lines):
        text = "\n".join(lines[:typing_at] + [""] + lines[typing_at + 1:])
    suite = tolerant_parse(text, filename)
    outline = Outline(file=filename, suite_name=Path(filename).stem)
    if suite is None:
        return outline
    lines = text.split("\n")
    for item in suite.items:
        if item.kind == "suite_stmt" and item.name.kind == "string":
            outline.suite_name, outline.suite_span = item.name.value, item.span
        elif item.kind == "case" and item.span is not None:
            outline.cases.append(CaseInfo(_text(item.name), item.span, _columns(item, filename, root),
                                          _turns(item), _end_line(item), _simulated(item)))
    outline.local_tools = [t for t in (_tool_info(tool, lines, filename) for tool in suite.tools) if t]
    for tool in outline.local_tools:
        outline.tools.setdefault(tool.name, tool)
    for tool in _used_tools(suite, filename, {str(Path(filename).resolve())}, sources or {}, root):
        outline.tools.setdefault(tool.name, tool)
    return outline


def _turns(case: Any) -> tuple[tuple[str, Span], ...]:
    return tuple((_text(s.text), s.span) for s in case.body if s.kind == "user_stmt" and s.span is not None)


def _simulated(case: Any) -> tuple[str, Span] | None:
    found = [s for s in case.body if s.kind == "simulated_user_stmt" and s.span is not None]
    return (_text(found[0].text), found[0].span) if found else None


def _end_line(case: Any) -> int:
    return max((s.span.end_line for s in case.body if s.span is not None), default=0)


def _text(node: Any) -> str:
    return node.value if node.kind == "string" else f"${node.name}"


def _tool_info(tool: Any, lines: list[str], filename: str) -> ToolInfo | None:
    if tool.span is None or tool.name.kind == "placeholder" or tool.name.span is None:
        return None
    last = tool.span.line
    for stmt in tool.body:
        if stmt.span is not None:
            last = max(last, stmt.span.end_line)
    declaration = "\n".join(line.rstrip() for line in lines[tool.span.line - 1: last])
    params = tuple((p.name, _param_text(p)) for p in tool.body if p.kind == "param_stmt")
    return ToolInfo(tool.name.name, filename, tool.name.span, declaration, params)


def _param_text(param: Any) -> str:
    kind = _type_text(param.type)
    optional = ", optional" if param.optional else ""
    described = f": {param.description.value}" if param.description is not None and hasattr(
        param.description, "value") else ""
    return f"{kind}{optional}{described}"


def _type_text(node: Any) -> str:
    if node.kind == "simple_type":
        return str(node.name)
    if node.kind == "array_type":
        return "array" + (f" of {_type_text(node.of)}" if node.of is not None else "")
    return "one of [...]"


def _used_tools(suite: Any, filename: str, seen: set[str], sources: Mapping[str, str],
                root: Path | None = None) -> list[ToolInfo]:
    out: list[ToolInfo] = []
    for item in suite.items:
        if item.kind != "use_stmt":
            continue
        path = (Path(filename).parent / item.path.value).resolve()
        if str(path) in seen or not inside_root(path, root) or (str(path) not in sources and not path.is_file()):
            continue
        seen.add(str(path))
        try:
            text = sources[str(path)] if str(path) in sources else path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        used = tolerant_parse(text, str(path))
        if used is None:
            continue
        lines = text.split("\n")
        out.extend(t for t in (_tool_info(tool, lines, str(path)) for tool in used.tools) if t)
        out.extend(_used_tools(used, str(path), seen, sources, root))
    return out


def _columns(case: Any, filename: str, root: Path | None = None) -> tuple[str, ...]:
    for stmt in case.body:
        if stmt.kind != "examples_stmt":
            continue
        if stmt.rows:
            return tuple(_cell_name(cell) for cell in stmt.rows[0].cells)
        if stmt.source is not None:
            path = (Path(filename).parent / stmt.source.value).resolve()
            return _file_columns(path) if inside_root(path, root) else ()
    return ()


def _cell_name(cell: Any) -> str:
    return str(getattr(cell, "value", getattr(cell, "name", "")))


def _file_columns(path: Path) -> tuple[str, ...]:
    """The column names of an examples file: a CSV header, the keys of the first JSON(L) object."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            if path.suffix == ".csv":
                return tuple(next(csv.reader(handle), []))
            if path.suffix == ".jsonl":
                first = next((line for line in handle if line.strip()), "{}")
                row = json.loads(first)
            else:
                data = json.loads(handle.read(1_000_000))
                row = data[0] if isinstance(data, list) and data else {}
    except (OSError, UnicodeDecodeError, ValueError, StopIteration):
        return ()
    return tuple(row) if isinstance(row, dict) else ()
