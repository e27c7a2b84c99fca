"""What a case says about its conversation and its tools' answers (LANGUAGE.md 11-13).

A case holds exactly one of: one `prompt`; one or more `user` lines,
optionally followed by one `simulated user`; one `simulated user`
(`shape_problems`, reported once per case, not per examples row). Its
`expect` lines are scoped by position (`Scopes`): under a `user` line, that
turn; above the first `user` line and after a `simulated user` line, the
whole conversation. Its `given` lines become `AnswerRule`s that the run's
`ToolAnswerer` tries before the tool's own lines (`given_rule`).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from ..syntax import _ast as a
from ._errors import CompileProblem
from ._model import AnswerRule, CompiledExpectation, CompiledTool, CompiledTurn
from ._tools import answer_steps
from ._values import tool_name

_WORDS: dict[Any, str] = {a.PromptStmt: "prompt", a.UserStmt: "user", a.SimulatedUserStmt: "simulated user"}


def _line(node: Any) -> tuple[int, int]:
    span = node.span
    return (span.line, span.column) if span is not None else (0, 0)


def shape_problems(case: a.Case) -> list[CompileProblem]:
    """Errors in what the case sends the agent: no message at all, or forms that do not go together."""
    prompts: list[Any] = [s for s in case.body if isinstance(s, a.PromptStmt)]
    users: list[Any] = [s for s in case.body if isinstance(s, a.UserStmt)]
    simulated: list[Any] = [s for s in case.body if isinstance(s, a.SimulatedUserStmt)]
    out: list[CompileProblem] = []
    if not (prompts or users or simulated):
        out.append(CompileProblem("this case has no `prompt`", case, code="E219",
                                  help='add a line: prompt "what the agent is asked" (or `user` lines for '
                                       'a conversation)'))
    for extra in prompts[1:]:
        out.append(CompileProblem("a case has exactly one `prompt`", extra, code="E219",
                                  help='for a conversation, write each message as a `user "..."` line'))
    if prompts and (users or simulated):
        other = min(users + simulated, key=_line)
        first, second = sorted((prompts[0], other), key=_line)
        out.append(CompileProblem(
            f"a case has a `prompt` or a conversation, not both: this `{_WORDS[type(second)]}` follows the "
            f"`{_WORDS[type(first)]}` at line {_line(first)[0]}", second, code="E240",
            help='`prompt "x"` means the same as one `user "x"` line: write the messages as `user` lines'))
    for extra in simulated[1:]:
        out.append(CompileProblem("a case has at most one `simulated user`", extra, code="E241",
                                  help="put all of the simulated user's instructions in one text"))
    if simulated:
        after = [u for u in users if _line(u) > _line(simulated[0])]
        for user in after:
            out.append(CompileProblem(
                f"a `user` line after the `simulated user` at line {_line(simulated[0])[0]}", user, code="E241",
                help="scripted `user` lines come first; the simulated user goes on after them"))
    return out


class Scopes:
    """Where each `expect` line of a case goes, as its lines come in order (see the module docstring)."""

    def __init__(self, whole: list[CompiledExpectation]) -> None:
        self.whole = whole
        self.turns: list[tuple[str, int, list[CompiledExpectation]]] = []
        self.current: list[CompiledExpectation] | None = None
        self.simulated: str | None = None

    def user(self, message: str, line: int) -> None:
        self.current = []
        self.turns.append((message, line, self.current))

    def simulated_user(self, text: str) -> None:
        self.simulated, self.current = text, None

    def add(self, expectation: CompiledExpectation) -> None:
        (self.whole if self.current is None else self.current).append(expectation)

    def compiled_turns(self) -> tuple[CompiledTurn, ...]:
        return tuple(CompiledTurn(message, tuple(exps), line) for message, line, exps in self.turns)


def given_rule(stmt: a.GivenStmt, tools: Mapping[str, CompiledTool], names_known: bool, filename: str) -> AnswerRule:
    """A (filled-in) `given` line as an `AnswerRule` of its tool.

    Raises:
        CompileProblem: E242 for a tool that is not declared (``names_known``: the suite's tool names
            are all known, which they are not when its world was not imported); E201 for arguments that
            are not an object pattern.
    """
    from ._patterns import compile_args

    name = tool_name(stmt.tool)
    if names_known and name not in tools:
        close = difflib.get_close_matches(name, list(tools), n=1)
        raise CompileProblem(f"`given` answers no declared tool: `{name}`", stmt.tool, code="E242",
                             suggestion=close[0] if close else None,
                             help=f"declared tools: {', '.join(sorted(tools)) or '(none)'}; "
                                  "declare it with a `tool` block (or a world method)")
    matcher = None
    if stmt.args is not None:
        if isinstance(stmt.args, a.Placeholder):  # (v2 patterns over objects go on to `compile_args`)
            raise CompileProblem("`given ... with` needs an argument pattern such as <city: any>", stmt.args,
                                 code="E201")
        matcher = compile_args(stmt.args)
    line = stmt.span.line if stmt.span else 0
    return AnswerRule(matcher, answer_steps(stmt), name, filename, line)


def given_warnings(stmt: a.GivenStmt, tools: Mapping[str, CompiledTool]) -> list[Any]:
    """W302 / W306 for a (filled-in) `given ... with <...>` line, as for `called ... with`: a key the
    tool has no param for, or a pattern its param can never accept, makes a line that never answers."""
    from ..syntax._diagnostics import warning
    from ._never import describe, never_reason

    name = tool_name(stmt.tool)
    if not isinstance(stmt.args, a.ObjectPattern) or name not in tools:
        return []
    params = tools[name].parameters.get("properties", {})
    out = []
    for entry in stmt.args.entries:
        if entry.key in params and (why := never_reason(entry.pattern, params[entry.key])) is not None:
            out.append(warning("W306", f"`{entry.key}` of tool `{name}` can never match: {why}", entry.pattern.span,
                               help=f"the param `{entry.key}` {describe(params[entry.key])}; this `given` line "
                                    "never answers"))
        elif entry.key not in params and not isinstance(entry.pattern, a.AbsentPattern):
            close = difflib.get_close_matches(entry.key, list(params), n=1)
            out.append(warning("W302", f"`{entry.key}` is not a param of tool `{name}`", entry.span,
                               suggestion=close[0] if close else None,
                               help=f"its params: {', '.join(params) or '(none)'}; this `given` line answers "
                                    "only calls that have it"))
    return out


def world_without_world(node: Any) -> list[CompileProblem]:
    """E245 for each `world PATTERN` in an expectation of a suite with no world and no harness known."""
    return [CompileProblem("`expect world` needs a world, and this suite has none", n, code="E245",
                           help='name one in the suite\'s head: world "shop_world.py:Shop" (or run with a '
                                "harness whose world has a state() method: --harness, check --harness)")
            for n in a.walk(node) if isinstance(n, a.WorldState)]
