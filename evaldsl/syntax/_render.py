"""Render diagnostics: the long framed form (rustc / Hurl style) and a short one-line form.

Long form::

    error[E100]: unexpected word `caled`
     --> suite.evl:3:10
      |
    3 |   expect caled search
      |          ^^^^^ expected a predicate
      |
      = help: did you mean `called`?

The lower of the two modules: it reads diagnostics and never imports `_diagnostics` at run time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # this module stands alone: `_diagnostics` calls it, it only reads diagnostics
    from ._diagnostics import Diagnostic


def render_short(diag: Diagnostic) -> str:
    """``file:line:col: error[E100]: message (did you mean `x`?)``."""
    where = diag.file
    if diag.span is not None:
        where = f"{diag.span.file}:{diag.span.line}:{diag.span.column}"
    text = f"{where}: {diag.severity}[{diag.code}]: {diag.message}"
    if diag.label:
        text += f": {diag.label}"
    if diag.suggestion:
        text += f" (did you mean `{diag.suggestion}`?)"
    return text


def _caret_line(source_line: str, column: int, width: int) -> str:
    # Keep tabs so the caret lines up under the same characters in a terminal.
    prefix = "".join("\t" if ch == "\t" else " " for ch in source_line[: column - 1])
    return prefix + "^" * max(1, width)


MAX_SHOWN = 160
"""A source line longer than this is shown cut around the caret, with `...` where it was cut."""


def _window(text: str, column: int, width: int) -> tuple[str, int, int]:
    """Cut a long source line around the span; return the shown text, column and caret width."""
    if len(text) <= MAX_SHOWN:
        return text, column, width
    start = max(0, column - 1 - 40)
    width = min(max(1, width), MAX_SHOWN - 80)
    end = min(len(text), column - 1 + width + 40)
    shown = ("..." if start else "") + text[start:end] + ("..." if end < len(text) else "")
    return shown, column - start + (3 if start else 0), width


def render_long(diag: Diagnostic, source: str | None) -> str:
    """The framed form with the source line and a caret as wide as the token."""
    head = f"{diag.severity}[{diag.code}]: {diag.message}"
    span = diag.span
    if span is None:
        lines = [head, f" --> {diag.file}"]
    else:
        gutter = len(str(span.line))
        pad = " " * gutter
        lines = [head, f"{pad}--> {span.file}:{span.line}:{span.column}"]
        src_lines = source.splitlines() if source is not None else []
        if 0 < span.line <= len(src_lines):
            text = src_lines[span.line - 1].rstrip("\r")
            if span.end_line == span.line:
                width = span.end_column - span.column
            else:
                width = len(text) - span.column + 1
            text, column, width = _window(text, span.column, width)
            caret = _caret_line(text, column, width)
            if diag.label:
                caret += " " + diag.label
            lines += [f"{pad} |", f"{span.line} | {text}", f"{pad} | {caret}"]
        elif diag.label:
            lines.append(f"{pad} = note: {diag.label}")
        if diag.help or diag.suggestion:
            lines.append(f"{pad} |")
    pad = " " * (len(str(span.line)) if span else 0)
    if diag.suggestion:
        lines.append(f"{pad} = help: did you mean `{diag.suggestion}`?")
    if diag.help:
        lines.append(f"{pad} = help: {diag.help}")
    return "\n".join(lines)


def render_all(
    diagnostics: Iterable[Diagnostic],
    sources: Mapping[str, str],
    *,
    style: Literal["long", "short"] = "long",
) -> str:
    """Render every diagnostic, sorted by file and position."""
    ordered = sorted(diagnostics, key=lambda diag: diag.sort_key())
    if style == "short":
        return "\n".join(render_short(d) for d in ordered)
    return "\n\n".join(render_long(d, sources.get(d.file)) for d in ordered)
