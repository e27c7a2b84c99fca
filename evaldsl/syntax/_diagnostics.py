"""Diagnostics: structured errors and warnings, and the one exception type.

Inner code raises or collects `Diagnostic`s without the source text; the
boundary (`parse`, `compile`, `load`, the CLI) attaches sources and renders.
Rendering lives in `_render.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ._ast import Span

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in a source file.

    Attributes:
        code: a stable code such as ``E100`` (errors) or ``W301`` (warnings).
        severity: ``"error"`` or ``"warning"``.
        message: one sentence saying what is wrong.
        span: where; None for whole-file problems (unreadable file).
        label: a short note printed under the caret (what was expected).
        help: a longer hint printed as ``= help: ...``.
        suggestion: a did-you-mean replacement, when a close name exists.
    """

    code: str
    severity: Severity
    message: str
    span: Span | None = None
    label: str | None = None
    help: str | None = None
    suggestion: str | None = None

    @property
    def file(self) -> str:
        return self.span.file if self.span else "<unknown>"

    def sort_key(self) -> tuple[str, int, int]:
        if self.span is None:
            return (self.file, 0, 0)
        return (self.span.file, self.span.line, self.span.column)


def error(code: str, message: str, span: Span | None, **extra: str | None) -> Diagnostic:
    """Shorthand for an error diagnostic."""
    return Diagnostic(code, "error", message, span, **extra)  # type: ignore[arg-type]


def warning(code: str, message: str, span: Span | None, **extra: str | None) -> Diagnostic:
    """Shorthand for a warning diagnostic."""
    return Diagnostic(code, "warning", message, span, **extra)  # type: ignore[arg-type]


@dataclass
class EvlError(Exception):
    """Raised when .evl input cannot be parsed, compiled or loaded.

    ``diagnostics`` holds every problem found (errors first matter; warnings
    found along the way are kept too). ``sources`` maps file names to their
    text, so the error can be rendered with the offending lines.
    """

    diagnostics: list[Diagnostic]
    sources: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.__str__())

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def render(self, *, style: Literal["long", "short"] = "long") -> str:
        from ._render import render_all

        return render_all(self.diagnostics, self.sources, style=style)

    def __str__(self) -> str:
        return self.render(style="short")
