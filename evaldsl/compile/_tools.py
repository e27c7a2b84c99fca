"""Tool declarations -> `CompiledTool`: a JSON Schema for the model and canned answers.

A mock tool answers as a real one would: arguments are first checked
against the declared params (a missing required param or a value of the
wrong type gets an error result that says so), then the `when` lines are
tried in order, then `otherwise`; with no `otherwise`, an unmatched call gets
an error result naming the tool and its arguments.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Sequence
from typing import Any

from ..syntax import _ast as a
from . import _regex
from ._errors import CompileProblem
from ._model import AnswerRule, CompiledTool, ToolAnswer
from ._validate import arg_problems, type_error
from ._values import to_python, to_text, tool_name

__all__ = ["SIMPLE_TYPES", "answer_steps", "compile_tool", "decode_args", "first_rule", "no_answer", "type_error",
           "type_schema"]

SIMPLE_TYPES = ("string", "number", "integer", "boolean", "object", "array")


def type_schema(node: Any) -> dict[str, Any]:
    """The JSON Schema of a param type."""
    if isinstance(node, a.SimpleType):
        if node.name not in SIMPLE_TYPES:
            close = difflib.get_close_matches(node.name, SIMPLE_TYPES, n=1)
            raise CompileProblem(
                f"unknown type `{node.name}`", node, code="E216",
                suggestion=close[0] if close else None,
                help="types are string, number, integer, boolean, object, array of TYPE, one of [...]",
            )
        return {"type": node.name}
    if isinstance(node, a.ArrayType):
        return {"type": "array", **({"items": type_schema(node.of)} if node.of is not None else {})}
    values = [to_python(v) for v in node.values]
    if not values:
        raise CompileProblem("`one of []` allows no value", node, code="E216")
    return {"enum": values}


def _raise(problem: CompileProblem, node: Any = None) -> None:
    raise problem


def compile_tool(
    tool: a.Tool, filename: str, *, report: Callable[[CompileProblem, Any], None] = _raise
) -> CompiledTool:
    """Compile one `tool` block.

    Args:
        tool: the block.
        filename: recorded on the compiled tool.
        report: receives each problem with the statement it is about; the
            default raises the first. The compiler passes a collector, so that
            every bad line of a block is reported and the rest still compiles.
    """
    name = tool_name(tool.name)
    properties: dict[str, Any] = {}
    required: list[str] = []
    whens: list[AnswerRule] = []
    otherwise: list[AnswerRule] = []
    for stmt in tool.body:
        try:
            _body_line(stmt, name, filename, properties, required, whens, otherwise)
        except CompileProblem as exc:
            report(exc, stmt)
    parameters = {"type": "object", "properties": properties, "required": required}
    rules = tuple(whens + otherwise)
    prepare = _preparer(name, properties, required)
    description = to_text(tool.description) if tool.description is not None else ""
    line = tool.span.line if tool.span else 0
    return CompiledTool(name, description, parameters, _answerer(name, prepare, rules), file=filename, line=line,
                        answers=len(rules), rules=rules, prepare=prepare)


def answer_steps(stmt: Any) -> tuple[ToolAnswer, ...]:
    """A `when`, `otherwise` or `given` line's answers in order: its first, then each `then` step."""
    first = ToolAnswer(stmt.action == "returns", to_text(stmt.text))
    return (first, *(ToolAnswer(step.action == "returns", to_text(step.text)) for step in stmt.then))


def _body_line(stmt: Any, name: str, filename: str, properties: dict[str, Any], required: list[str],
               whens: list[AnswerRule], otherwise: list[AnswerRule]) -> None:
    from ._patterns import compile_args

    line = stmt.span.line if stmt.span else 0
    if isinstance(stmt, a.ParamStmt):
        if stmt.name in properties:
            raise CompileProblem(f"param `{stmt.name}` is declared twice", stmt, code="E217")
        properties[stmt.name] = schema = {}  # claimed first: a bad type still makes a duplicate
        schema.update(type_schema(stmt.type))
        if stmt.description is not None:
            schema["description"] = to_text(stmt.description)
        if not stmt.optional:
            required.append(stmt.name)
    elif isinstance(stmt, a.WhenStmt):
        if isinstance(stmt.args, a.Placeholder):  # (v2 patterns over objects go on to `compile_args`)
            raise CompileProblem("`when` needs an argument pattern such as <path: any>", stmt, code="E201")
        whens.append(AnswerRule(compile_args(stmt.args), answer_steps(stmt), name, filename, line))
    else:
        if otherwise:
            raise CompileProblem("a tool has at most one `otherwise`", stmt, code="E217")
        otherwise.append(AnswerRule(None, answer_steps(stmt), name, filename, line))


TOOL_MATCH_LIMIT_S = 1.0
"""The time limit of a regex in a mock tool's `when` pattern (or the case's, when shorter). A tool is
answered on the runner's loop, which every case running beside it shares: a catastrophic pattern
there may hold them all up for this long, no longer, and fails only the run that hit it."""


def first_rule(name: str, rules: Sequence[AnswerRule], args: Any) -> AnswerRule | None:
    """The first line of ``rules`` that answers ``args`` (regexes under `TOOL_MATCH_LIMIT_S`), or None."""
    token = _regex.limit_at_most(TOOL_MATCH_LIMIT_S)
    try:
        for rule in rules:
            if rule.matcher is None or rule.matcher(args) is None:
                return rule
    except _regex.RegexTimeout as exc:
        raise _regex.RegexTimeout(f"tool {name}: a `when` pattern on the call's arguments: {exc}") from None
    finally:
        _regex.reset_limit(token)
    return None


def decode_args(name: str, args: Any) -> Any:
    """A call's arguments as an object: JSON text decoded; else the error `ToolAnswer`."""
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return ToolAnswer(False, f"Error: {name}: arguments are not valid JSON: {args[:200]}")
    if not isinstance(args, dict):
        return ToolAnswer(False, f"Error: {name}: arguments must be an object")
    return args


def _preparer(name: str, properties: dict[str, Any], required: list[str]) -> Callable[[Any], Any]:
    parameters = {"properties": properties, "required": required}

    def prepare(args: Any) -> Any:
        args = decode_args(name, args)
        if isinstance(args, ToolAnswer):
            return args
        problems = arg_problems(parameters, args, unknown=False)  # the rule `valid arguments` applies too
        if problems:
            return ToolAnswer(False, f"Error: {name}: {problems[0]}")
        return args

    return prepare


def no_answer(name: str, args: Any) -> ToolAnswer:
    """The error result of a call that no line answers."""
    shown = json.dumps(args, ensure_ascii=False)
    return ToolAnswer(False, f"Error: {name}: no canned answer for arguments {shown}")


def _answerer(name: str, prepare: Callable[[Any], Any], rules: tuple[AnswerRule, ...]) -> Callable[[Any], ToolAnswer]:
    """`CompiledTool.answer`: each line's first answer (a run's `ToolAnswerer` counts sequences)."""
    def answer(args: Any) -> ToolAnswer:
        args = prepare(args)
        if isinstance(args, ToolAnswer):
            return args
        rule = first_rule(name, rules, args) if rules else None
        return no_answer(name, args) if rule is None else rule.steps[0]

    return answer
