"""`tools T1, T2` (LANGUAGE.md 3, v2): the declared tools a case offers.

A function-calling benchmark gives each question its own set of functions;
one suite holds such cases when each says which of the declared tools it
offers. The case's `CompiledCase.tools` is then that subset, in the order
the setting names them, and everything that offers tools reads it: the
model loop (the tools sent to the model, and the only ones answered), the
case context (`ctx.tools`, `ctx.call`), `valid arguments` and the record.
A case's `tools` replaces the suite's (it does not add to it, unlike
`tags`): a set of offered tools is meant whole.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from ..syntax import _ast as a
from ..syntax._diagnostics import Diagnostic, warning
from ._errors import CompileProblem
from ._model import CaseSettings, CompiledTool
from ._values import tool_name


def check_names(stmt: a.ToolsStmt, tools: Mapping[str, CompiledTool], names_known: bool = True) -> None:
    """Raise E256 at the first name of a (filled-in) `tools` line that no declared tool has.

    Args:
        stmt: the `tools` line.
        tools: the declared tools (own, imported by `use`, a world's).
        names_known: False when a world's file was not imported (`check`): its tools' names are unknown.
    """
    if not names_known:
        return
    for ref in stmt.tools:
        wanted = tool_name(ref)
        if wanted not in tools:
            close = difflib.get_close_matches(wanted, list(tools), n=1)
            declared = ", ".join(sorted(tools)) if tools else "(none: the suite declares no tools)"
            raise CompileProblem(f"`tools` names `{wanted}`, which no declared tool is", ref, code="E256",
                                 suggestion=close[0] if close else None,
                                 help=f"declare it with a `tool` block, or name a declared tool: {declared}")


class Offered:
    """The tuples of tools a file's cases are offered, one per distinct `tools` setting (shared by its cases)."""

    def __init__(self, tools: Mapping[str, CompiledTool], every: tuple[CompiledTool, ...]) -> None:
        self.tools, self.every = tools, every
        self._made: dict[tuple[str, ...], tuple[CompiledTool, ...]] = {}

    def __call__(self, settings: CaseSettings) -> tuple[CompiledTool, ...]:
        names = settings.tools
        if names is None:
            return self.every
        found = self._made.get(names)
        if found is None:
            found = self._made[names] = tuple(self.tools[n] for n in dict.fromkeys(names) if n in self.tools)
        return found


_NEEDS_A_CALL = (a.Called, a.CalledSequence, a.CallsAre, a.FirstCall, a.LastCall, a.CalledAnyOrder,
                 a.CallsAreAnyOrder)
"""Predicates that hold only when the tools they name were called (not `every call`, `only called`)."""


def unoffered(body: tuple[Any, ...], offered: tuple[str, ...], declared: Mapping[str, Any]) -> list[Diagnostic]:
    """W309 for each declared tool that a case's own `expect` lines need a call of, outside `not`,
    though its `tools` setting does not offer it: that predicate can never hold in the case; and for each
    `given` line answering such a tool: it can never answer."""
    found = []
    for stmt in body:
        if isinstance(stmt, a.GivenStmt):  # a tool answer for a tool the case never offers never answers
            ref = stmt.tool
            if isinstance(ref, a.ToolName) and ref.name in declared and ref.name not in offered:
                found.append(warning(
                    "W309", f"`{ref.name}` is declared but not offered to this case (`tools`): this `given` line "
                    "never answers", ref.span,
                    help=f"the case's `tools` offers {', '.join(offered)}; add {ref.name} there, or drop the line"))
            continue
        if not isinstance(stmt, a.ExpectStmt):
            continue
        nodes = list(a.walk(stmt.expectation))
        negated = {id(n) for neg in nodes if isinstance(neg, a.Negation) for n in a.walk(neg.expr)}
        for node in nodes:
            if not isinstance(node, _NEEDS_A_CALL) or id(node) in negated:
                continue
            refs = [step.tool for step in node.steps] if hasattr(node, "steps") else [node.tool]
            for ref in refs:
                if isinstance(ref, a.ToolName) and ref.name in declared and ref.name not in offered:
                    found.append(warning(
                        "W309", f"`{ref.name}` is declared but not offered to this case (`tools`): a model run "
                        "does not see it", ref.span,
                        help=f"the case's `tools` offers {', '.join(offered)}; add {ref.name} there, or expect "
                             "another tool"))
    return found


def offered_names(case: Any) -> list[str]:
    """The names of the tools a compiled case offers, in order (what the record keeps of them)."""
    return [tool.name for tool in case.tools]
