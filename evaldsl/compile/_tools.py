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
from collections.abc import Callable
from typing import Any

from ..syntax import _ast as a
from . import _regex
from ._errors import CompileProblem
from ._model import CompiledTool, ToolAnswer
from ._values import json_equal, to_python, to_text, tool_name

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


def type_error(schema: dict[str, Any], value: Any) -> str | None:
    """Why `value` does not fit `schema` (a small subset of JSON Schema), or None."""
    if "enum" in schema:
        if any(json_equal(value, v) for v in schema["enum"]):
            return None
        return f"must be one of {json.dumps(schema['enum'], ensure_ascii=False)}"
    kind = schema["type"]
    checks: dict[str, Callable[[Any], bool]] = {
        "string": lambda v: isinstance(v, str),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer()),
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
    }
    if not checks[kind](value):
        article = "an" if kind[0] in "aeiou" else "a"
        return f"must be {article} {kind}"
    if kind == "array" and "items" in schema:
        for i, item in enumerate(value):
            why = type_error(schema["items"], item)
            if why:
                return f"item {i} {why}"
    return None


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
    whens: list[tuple[Callable[[Any], str | None], bool, str]] = []
    otherwise: list[tuple[bool, str]] = []
    for stmt in tool.body:
        try:
            _body_line(stmt, properties, required, whens, otherwise)
        except CompileProblem as exc:
            report(exc, stmt)
    parameters = {"type": "object", "properties": properties, "required": required}
    answer = _answerer(name, properties, required, whens, otherwise[0] if otherwise else None)
    description = to_text(tool.description) if tool.description is not None else ""
    line = tool.span.line if tool.span else 0
    return CompiledTool(name, description, parameters, answer, file=filename, line=line,
                        answers=len(whens) + len(otherwise))


def _body_line(stmt: Any, properties: dict[str, Any], required: list[str],
               whens: list[tuple[Callable[[Any], str | None], bool, str]],
               otherwise: list[tuple[bool, str]]) -> None:
    from ._patterns import compile_args

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
        if not isinstance(stmt.args, a.ObjectPattern):
            raise CompileProblem("`when` needs an argument pattern such as <path: any>", stmt, code="E201")
        whens.append((compile_args(stmt.args), stmt.action == "returns", to_text(stmt.text)))
    else:
        if otherwise:
            raise CompileProblem("a tool has at most one `otherwise`", stmt, code="E217")
        otherwise.append((stmt.action == "returns", to_text(stmt.text)))


TOOL_MATCH_LIMIT_S = 1.0
"""The time limit of a regex in a mock tool's `when` pattern (or the case's, when shorter). A tool is
answered on the runner's loop, which every case running beside it shares: a catastrophic pattern
there may hold them all up for this long, no longer, and fails only the run that hit it."""


def _first_when(name: str, whens: list[tuple[Callable[[Any], str | None], bool, str]], args: Any) -> ToolAnswer | None:
    """The answer of the first `when` line whose pattern matches ``args`` (regexes under `TOOL_MATCH_LIMIT_S`)."""
    token = _regex.limit_at_most(TOOL_MATCH_LIMIT_S)
    try:
        for matcher, ok, text in whens:
            if matcher(args) is None:
                return ToolAnswer(ok, text)
    except _regex.RegexTimeout as exc:
        raise _regex.RegexTimeout(f"tool {name}: a `when` pattern on the call's arguments: {exc}") from None
    finally:
        _regex.reset_limit(token)
    return None


def _answerer(
    name: str,
    properties: dict[str, Any],
    required: list[str],
    whens: list[tuple[Callable[[Any], str | None], bool, str]],
    otherwise: tuple[bool, str] | None,
) -> Callable[[Any], ToolAnswer]:
    def answer(args: Any) -> ToolAnswer:
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                return ToolAnswer(False, f"Error: {name}: arguments are not valid JSON: {args[:200]}")
        if not isinstance(args, dict):
            return ToolAnswer(False, f"Error: {name}: arguments must be an object")
        for param in required:
            if param not in args:
                return ToolAnswer(False, f"Error: {name}: missing required parameter `{param}`")
        for key, value in args.items():
            if key in properties:
                why = type_error(properties[key], value)
                if why:
                    return ToolAnswer(False, f"Error: {name}: parameter `{key}` {why}")
        if whens:
            found = _first_when(name, whens, args)
            if found is not None:
                return found
        if otherwise is not None:
            return ToolAnswer(*otherwise)
        shown = json.dumps(args, ensure_ascii=False)
        return ToolAnswer(False, f"Error: {name}: no canned answer for arguments {shown}")

    return answer
