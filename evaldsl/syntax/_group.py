"""Group the flat list of statements into the suite head, cases and tool blocks.

The grammar reads one statement per line; which block a line belongs to
follows docs/language.md section 2, and the misplacements it forbids get their
own diagnostics here (a positioned error each, all of them collected).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _ast as a
from ._diagnostics import Diagnostic, error, warning

_SUITE_ONLY = (a.SuiteStmt, a.DescriptionStmt, a.UseStmt, a.WorldStmt)
_SETTINGS = (
    a.TagsStmt, a.RepeatStmt, a.PassRateStmt, a.TimeoutStmt, a.SystemStmt,
    a.ModeStmt, a.MaxTurnsStmt, a.SkipStmt, a.XfailStmt, a.UserTurnsStmt,
)
_SETTING_OR_EXPECT = (*_SETTINGS, a.ExpectStmt)
_CASE_ONLY = (a.PromptStmt, a.SetupStmt, a.ExamplesStmt, a.UserStmt, a.SimulatedUserStmt, a.GivenStmt)
_TOOL_BODY = (a.ParamStmt, a.WhenStmt, a.OtherwiseStmt)
_WORD: dict[type, str] = {
    a.SuiteStmt: "suite", a.DescriptionStmt: "description", a.UseStmt: "use",
    a.PromptStmt: "prompt", a.SetupStmt: "setup", a.ExamplesStmt: "examples",
    a.ParamStmt: "param", a.WhenStmt: "when", a.OtherwiseStmt: "otherwise",
    a.WorldStmt: "world", a.UserStmt: "user", a.SimulatedUserStmt: "simulated user", a.GivenStmt: "given",
}


def _word(stmt: Any) -> str:
    return _WORD.get(type(stmt), type(stmt).__name__)


class Grouper:
    """Arranges statements, given one at a time (`add`, then `flush` at the end of the file).

    Each finished item (a head statement, a `Case`, a `Tool`) goes to ``emit``;
    by default it is kept in `items`.
    """

    def __init__(self, emit: Callable[[Any], None] | None = None) -> None:
        self.items: list[Any] = []
        self.emit = self.items.append if emit is None else emit
        self.diagnostics: list[Diagnostic] = []
        self.case: dict[str, Any] | None = None
        self.tool: dict[str, Any] | None = None
        self.seen_case = False
        self.orphan_after: int | None = None  # line of a tool block between cases
        self.case_body: list[Any] = []
        self.tool_body: list[Any] = []

    def flush(self) -> None:
        if self.case is not None:
            case = a.Case.model_construct(**self.case, body=tuple(self.case_body))
            self.case, self.case_body = None, []
            self.emit(case)
        if self.tool is not None:
            tool = a.Tool.model_construct(**self.tool, body=tuple(self.tool_body))
            self.tool, self.tool_body = None, []
            self.emit(tool)
            self.tool = None

    def add(self, stmt: Any) -> None:
        if self.tool is not None and isinstance(stmt, _TOOL_BODY):
            self.tool_body.append(stmt)
            return
        if isinstance(stmt, a.CaseStmt):
            self.flush()
            self.case = {"span": stmt.span, "name": stmt.name}
            self.case_body = []
            self.seen_case, self.orphan_after = True, None
            return
        if isinstance(stmt, a.ToolStmt):
            self.flush()
            self.tool = {"span": stmt.span, "name": stmt.name, "description": stmt.description}
            self.tool_body = []
            if self.seen_case and stmt.span is not None:
                self.orphan_after = stmt.span.line
            return
        if self.tool is not None:
            self.flush()
        self.add_plain(stmt)

    def add_plain(self, stmt: Any) -> None:
        if isinstance(stmt, _TOOL_BODY):
            self.err("E111", f"`{_word(stmt)}` belongs in a `tool` block", stmt,
                     help="put it right under its `tool` line")
        elif isinstance(stmt, a.TableRow):
            self.add_row(stmt)
        elif self.orphan_after is not None:
            self.err("E112", "this statement belongs to no case", stmt,
                     label=f"it follows the tool block at line {self.orphan_after}",
                     help="move it into a case, or above the first case for the whole suite")
        elif self.case is not None:
            self.add_to_case(stmt)
        elif isinstance(stmt, _CASE_ONLY):
            self.err("E110", f"`{_word(stmt)}` belongs in a case", stmt,
                     help='start a case first: case "name"')
        else:
            self.emit(stmt)

    def add_to_case(self, stmt: Any) -> None:
        if isinstance(stmt, _SUITE_ONLY):
            self.err("E113", f"`{_word(stmt)}` must come before the first case", stmt,
                     help="suite statements belong in the file's head")
            return
        if isinstance(stmt, _SETTING_OR_EXPECT) and stmt.span is not None and stmt.span.column == 1:
            what = "expectation" if isinstance(stmt, a.ExpectStmt) else "setting"
            self.diagnostics.append(warning(
                "W303", f"this {what} belongs to the case above, though it reads like a suite line",
                stmt.span, help="indent it under its case, or move it above the first case for the whole suite",
            ))
        self.case_body.append(stmt)

    def add_row(self, row: a.TableRow) -> None:
        body = self.case_body if self.case is not None else []
        last = body[-1] if body else None
        if isinstance(last, a.ExamplesStmt) and last.source is None:
            body[-1] = last.model_copy(update={"rows": last.rows + (row,)})
            return
        self.err("E114", "a table row must follow `examples` (or another row)", row)

    def err(self, code: str, message: str, stmt: Any, **extra: str) -> None:
        self.diagnostics.append(error(code, message, stmt.span, **extra))


def group(statements: list[Any], filename: str) -> tuple[a.Suite, list[Diagnostic]]:
    """Arrange statements into a `Suite`; returns it with any misplacement diagnostics."""
    grouper = Grouper()
    for stmt in statements:
        grouper.add(stmt)
    grouper.flush()
    return grouped(grouper, filename)


def grouped(grouper: Grouper, filename: str) -> tuple[a.Suite, list[Diagnostic]]:
    """The `Suite` of a flushed `Grouper`'s kept items, and its misplacement diagnostics."""
    span = a.Span.model_construct(file=filename, line=1, column=1, end_line=1, end_column=1)
    suite = a.Suite.model_construct(span=span, items=tuple(grouper.items), comments=())
    return suite, grouper.diagnostics
