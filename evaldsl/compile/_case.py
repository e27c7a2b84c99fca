"""One case of a file, for one examples row (or none): its statements -> a `CompiledCase`.

`one_case` fills the row into the case's statements, merges its settings
over the file's `Prelude`, compiles its expectations (`expectation`: each
linted once per text, its check shared by the cases with the same text) and
scopes them by position (`Scopes`). For an outline (`LazyCases.outlined`)
the expectations are made without their checks (`outlined_expectation`).
Every problem goes to the `Session`; a case with one is not made (None).
"""

from __future__ import annotations

from typing import Any

from ..syntax import _ast as a
from ..syntax._unparse import unparse
from ._conversation import Scopes, given_rule, given_warnings, world_without_world
from ._errors import CompileProblem
from ._examples import substitute
from ._expect import compile_expectation, lint
from ._model import CompiledCase, CompiledExpectation, CompiledTool
from ._offered import check_names, unoffered
from ._session import Prelude, Session
from ._settings import SETTING_TYPES, apply, apply_row_columns
from ._validate import without_tools
from ._values import to_python, to_text


def expectation(session: Session, stmt: a.ExpectStmt, row: dict | None, tools: dict[str, CompiledTool],
                filename: str, *, from_suite: bool = False) -> CompiledExpectation:
    """``stmt`` compiled for ``row`` (None: as written); its problems to ``session``, the first one raised."""
    node = stmt.expectation if row is None else substitute(stmt.expectation, row, session.holes)
    # Shared: one compiled check per expectation text; not those filled from a row, which
    # differ from row to row (keeping them all would keep every row of a file compiled).
    checks = session.checks if node is stmt.expectation else None
    label = None
    needs_judge = session.needs_judge.get(id(stmt))
    if needs_judge is None and checks is not None:
        label = unparse(node)
        needs_judge = session.linted.get(label)  # this text linted clean before: so it is again
    if needs_judge is None:
        problems, warnings, needs_judge = lint(node, tools, session.predicates)
        if not session.has_world and session.predicates is None:
            problems += world_without_world(node)
        if not tools and not session.has_world:
            warnings += without_tools(node)  # v2: `valid arguments` with nothing to validate against
        session.warn(warnings)
        for problem in problems[1:]:
            session.problem(problem, stmt)
        if problems:
            raise problems[0]
        if label is not None and not warnings:
            session.linted[label] = needs_judge
    if checks is not None and len(checks) >= session.checks_limit:
        checks.clear()  # the shared checks are a cache (`check` keeps no case), kept bounded
        session.linted.clear()
    return compile_expectation(node, filename, from_suite=from_suite, needs_judge=needs_judge, checks=checks,
                               label=label)


COMPILED, LABELS, NONE = 0, 1, 2
"""What `one_case` makes of a case's own expectations: compiled ones; for an outline
(`LazyCases.outlined`), their labels with no check; or none."""


def _not_compiled(ctx: Any) -> Any:
    raise RuntimeError("an outline of a case (LazyCases.outlined) has no compiled checks: it cannot be run")


def outlined_expectation(session: Session, stmt: a.ExpectStmt, row: dict | None, filename: str
                         ) -> CompiledExpectation:
    """What `expectation` makes of ``stmt`` for ``row``, without its check: the same label, file and line."""
    node = stmt.expectation if row is None else substitute(stmt.expectation, row, session.holes)
    needs_judge = session.needs_judge.get(id(stmt))
    if needs_judge is None:
        needs_judge = any(isinstance(n, a.Judge) for n in a.walk(node))
    return CompiledExpectation(label=unparse(node), file=filename, line=node.span.line if node.span else 0,
                               check=_not_compiled, needs_judge=needs_judge)


def one_case(session: Session, case: a.Case, row: dict | None, prelude: Prelude, filename: str,
             expects_as: int = COMPILED) -> CompiledCase | None:
    """``case`` for ``row`` (None: a case without examples); None when it has a problem (reported)."""
    settings, prompt, setup, expects = prelude.defaults, "", None, list(prelude.expects)
    tools = prelude.lint_tools
    scopes, given = Scopes(expects), []
    failed = False
    for stmt in case.body:
        try:
            if isinstance(stmt, SETTING_TYPES):
                filled = _fill(stmt, row, session.holes)
                if isinstance(filled, a.ToolsStmt):
                    check_names(filled, prelude.tools, prelude.names_known)
                settings = apply(settings, filled)
            elif isinstance(stmt, a.PromptStmt):
                prompt = to_text(_fill(stmt, row, session.holes).text)  # the statement: `prompt $p` too
            elif isinstance(stmt, a.SetupStmt):
                setup = to_python(_fill(stmt.value, row, session.holes))
            elif isinstance(stmt, a.ExpectStmt):
                if expects_as == COMPILED:
                    scopes.add(expectation(session, stmt, row, tools, filename))
                elif expects_as == LABELS:
                    scopes.add(outlined_expectation(session, stmt, row, filename))
            elif isinstance(stmt, a.UserStmt):
                scopes.user(to_text(_fill(stmt, row, session.holes).text), stmt.span.line if stmt.span else 0)
            elif isinstance(stmt, a.SimulatedUserStmt):
                scopes.simulated_user(to_text(_fill(stmt, row, session.holes).text))
            elif isinstance(stmt, a.GivenStmt):
                filled = _fill(stmt, row, session.holes)
                given.append(given_rule(filled, prelude.tools, prelude.names_known, filename))
                session.warn(given_warnings(filled, prelude.lint_tools))
        except CompileProblem as exc:
            session.problem(exc, stmt)
            failed = True
    if row is not None:
        settings = apply_row_columns(settings, row)
    if settings.tools is not None and prelude.names_known:  # v2: an expected call the case cannot offer
        session.warn(unoffered(case.body, settings.tools, prelude.tools))
    name = to_text(_fill(case.name, row, session.holes))
    if failed:
        return None  # its problems are already reported
    line = case.span.line if case.span else 0
    turns = scopes.compiled_turns()
    if turns:
        prompt = turns[0].message  # a conversation's first message (LANGUAGE.md 11)
    return CompiledCase(suite=prelude.name, name=name, file=filename, line=line, prompt=prompt,
                        settings=settings, expectations=tuple(expects), setup=setup,
                        tools=prelude.offered(settings), turns=turns, simulated_user=scopes.simulated,
                        given=tuple(given), world=prelude.world)


def _fill(node: Any, row: dict | None, holes: set[int] | None = None) -> Any:
    return node if row is None else substitute(node, row, holes)
