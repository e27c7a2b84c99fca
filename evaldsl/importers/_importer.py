"""`import_text` / `import_file`: a suite in another format becomes a formatted `.evl` suite.

The formats are those of the reference designs evaldsl replaces: the JSON
single-turn and multi-turn eval files, and eval-core's RON suites. The text
is built, formatted with `evaldsl.format` and compiled with
`evaldsl.compile` before it is returned, so an import that succeeds is a
suite that `check` accepts. Nothing is dropped silently: a source form with
no `.evl` equivalent, and a source field no statement holds, stay in the
case as comments and are reported as warnings positioned in the source file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .. import Diagnostic, EvlError, Span  # the public API only, as for the language server
from . import _emit, _json_formats, _ron_format
from ._model import CaseOut, Problem
from ._ron import RonError, read_ron

Format = Literal["json", "ron"]
NAME_WIDTH = 60


@dataclass
class ImportResult:
    """One converted file."""

    source: str
    """The file it came from."""
    format: str
    """``json`` or ``ron``."""
    text: str
    """The `.evl` suite, formatted."""
    cases: int = 0
    expectations: int = 0
    warnings: list[Diagnostic] = field(default_factory=list)
    """What was kept as a comment or renamed, positioned in the source file."""
    source_text: str = ""


def import_file(path: str | Path, *, format: Format | None = None) -> ImportResult:
    """Convert one file; raises `EvlError` (positioned in that file) when it cannot be read or used."""
    filename = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        problem = Diagnostic("E002", "error", f"cannot read {filename}: {reason}", Span(file=filename))
        raise EvlError([problem]) from None
    return import_text(text, filename, format=format)


def import_text(text: str, filename: str = "<string>", *, format: Format | None = None) -> ImportResult:
    """Convert the text of a JSON or RON suite; ``format`` defaults to the file's suffix, else a sniff."""
    kind = format or _detect(text, filename)
    try:
        cases = _read(text, kind)
    except (Problem, RonError) as exc:
        code = "E501" if isinstance(exc, RonError) else exc.code
        diag = Diagnostic(code, "error", str(exc), _span(text, filename, exc.offset))
        raise EvlError([diag], sources={filename: text}) from None
    warnings = _dedupe_names(cases, text, filename)
    for case in cases:
        for note, at in case.comments:
            warnings.append(Diagnostic("W501", "warning", f"kept as a comment: {note}", _span(text, filename, at)))
        for note in case.unknown:
            message = f"kept as a comment: the field {note} has no .evl statement"
            warnings.append(Diagnostic("W502", "warning", message, _span(text, filename, case.offset)))
    suite_text = _suite_text(Path(filename).stem or "imported", filename, kind, cases)
    return ImportResult(
        source=filename, format=kind, text=_verified(suite_text, filename), cases=len(cases),
        expectations=sum(len(c.expects) for c in cases), warnings=warnings, source_text=text,
    )


def _detect(text: str, filename: str) -> Format:
    suffix = Path(filename).suffix.lower()
    if suffix in (".json", ".ron"):
        return "json" if suffix == ".json" else "ron"
    head = text.lstrip("\ufeff \t\r\n")
    return "json" if head[:1] in ("[", "{") and '"input"' in text else "ron"


def _read(text: str, kind: Format) -> list[CaseOut]:
    if kind == "json":
        return [_json_formats.convert_item(item, at) for at, item in _json_formats.read_items(text)]
    return [_ron_format.convert_case(node, at) for node, at in _ron_format.cases_of(read_ron(text))]


def _dedupe_names(cases: list[CaseOut], text: str, filename: str) -> list[Diagnostic]:
    seen: dict[str, int] = {}
    notes: list[Diagnostic] = []
    for case in cases:
        base = case.name if case.name else _name_from(case.prompt)
        name, n = base, seen.get(base, 0)
        while name in seen:
            n += 1
            name = f"{base} ({n + 1})"
        seen[base] = n
        seen[name] = 0
        if case.name and name != case.name:
            message = f"the case name {_emit.string(case.name)} is taken: renamed {_emit.string(name)}"
            notes.append(Diagnostic("W503", "warning", message, _span(text, filename, case.offset)))
        case.name = name
    return notes


def _name_from(prompt: str) -> str:
    words = " ".join(prompt.split()) or "case"
    return words if len(words) <= NAME_WIDTH else words[: NAME_WIDTH - 3].rstrip() + "..."


def _suite_text(stem: str, filename: str, kind: str, cases: list[CaseOut]) -> str:
    what = {"json": "JSON eval file", "ron": "eval-core RON suite"}[kind]
    lines = [_emit.comment(f"Imported by `evaldsl import` from {Path(filename).name} ({what})."),
             f"suite {_emit.string(stem)}", ""]
    for case in cases:
        lines.append(f"case {_emit.string(case.name or '')}")
        lines.extend("  " + _emit.comment(f"not imported: {note}") for note, _ in case.comments)
        lines.extend("  " + _emit.comment(f"source field with no .evl statement: {note}") for note in case.unknown)
        lines.append(f"  prompt {_emit.string(case.prompt)}")
        if case.tags:
            lines.append("  tags " + ", ".join(_emit.name(t) for t in case.tags))
        if case.setup is not None:
            lines.append(f"  setup {case.setup}")
        lines.extend(f"  expect {body}" for body in case.expects)
        if not case.expects:
            lines.append("  expect no error  # the source case had no expectation evaldsl can check")
        lines.append("")
    return "\n".join(lines)


def _verified(text: str, filename: str) -> str:
    """Format, then compile: an import that returns is a suite `check` accepts."""
    from .. import compile as compile_evl
    from .. import format as format_evl

    target = str(Path(filename).with_suffix(".evl"))
    formatted = format_evl(text, target)
    compile_evl(formatted, target)
    return formatted


def _span(text: str, filename: str, offset: int) -> Span:
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Span(file=filename, line=line, column=column, end_line=line, end_column=column + 1)
