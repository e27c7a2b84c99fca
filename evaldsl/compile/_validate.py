"""The one argument rule (LANGUAGE.md 6), and `valid arguments` (4.1, v2), which applies it.

A declared tool's params are a small JSON Schema (`_tools.type_schema`).
Two things check arguments against it, and they must agree: a mock tool,
before it answers a call (a missing required param or a value of the wrong
type gets an error result, as a real tool would give), and the `valid
arguments` predicate, which a function-calling benchmark's checker would be.
So the rule lives here once: `type_error` for one value, `arg_problems` for
a call's arguments object.

The type rule follows JSON, not Python. `integer` is a JSON number written
without a fraction or exponent: `20`, not `20.0`, `2e1` or `"20"`. Arguments
that arrive as text are decoded by Python's json, which gives an `int` for
exactly those tokens and a `float` for every other number, so one test
serves both: an `int` (never a `bool`) is an integer, a `float` never is,
not even `20.0` from an agent that built its arguments as Python data.
`number` is any finite int or float (never a bool); NaN and the infinities
are no JSON numbers.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..syntax import _ast as a
from ..syntax._diagnostics import Diagnostic, warning
from ._model import EvalContext, Outcome
from ._values import shorten

_HOLDS = Outcome(1.0)
_SHOWN_PROBLEMS = 3


def is_integer(value: Any) -> bool:
    """A JSON integer: an int that is not a bool (a decoded `20`; never `20.0`, `2e1` or `"20"`)."""
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


def is_json_number(value: Any) -> bool:
    """Any JSON number: a finite int or float, never a bool."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


_KIND_TESTS = {
    "string": lambda v: isinstance(v, str),
    "number": is_json_number,
    "integer": is_integer,
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def type_error(schema: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` does not fit a param's ``schema`` (`must be an integer`), or None when it does."""
    if "enum" in schema:
        from ._values import json_equal

        if any(json_equal(value, v) for v in schema["enum"]):
            return None
        return f"must be one of {json.dumps(schema['enum'], ensure_ascii=False)}"
    kind = schema["type"]
    if not _KIND_TESTS[kind](value):
        article = "an" if kind[0] in "aeiou" else "a"
        return f"must be {article} {kind}"
    if kind == "array" and "items" in schema:
        for i, item in enumerate(value):
            why = type_error(schema["items"], item)
            if why:
                return f"item {i} {why}"
    return None


def decoded(args: Any) -> tuple[Any, str | None]:
    """A call's arguments as an object: JSON text decoded ("" is no arguments); else (None, why)."""
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return None, f"arguments are not valid JSON: {shorten(args, 200)}"
        if not isinstance(args, dict):
            return None, f"arguments are not a JSON object: {shorten(json.dumps(args, ensure_ascii=False), 200)}"
    if not isinstance(args, dict):
        return None, "arguments must be an object"
    return args, None


def arg_problems(parameters: Mapping[str, Any], args: dict[str, Any], *, unknown: bool) -> list[str]:
    """What is wrong with an arguments object for a tool's ``parameters`` (its JSON Schema), in order:
    each missing required param, then each key in the arguments' order: not a param (when
    ``unknown``), or a value of the wrong type. [] when the arguments are valid."""
    properties = parameters.get("properties", {})
    problems = [f"missing required parameter `{p}`" for p in parameters.get("required", ()) if p not in args]
    for key, value in args.items():
        schema = properties.get(key)
        if schema is None:
            if unknown:
                close = difflib.get_close_matches(key, list(properties), n=1)
                hint = f" (did you mean `{close[0]}`?)" if close else ""
                problems.append(f"unknown parameter `{key}`{hint}")
            continue
        why = type_error(schema, value)
        if why:
            problems.append(f"parameter `{key}` {why}")
    return problems


def call_problems(offered: Mapping[str, Any], name: str, args: Any) -> list[str]:
    """What makes one call invalid under `valid arguments`: [] when it is valid."""
    tool = offered.get(name)
    if tool is None:
        close = difflib.get_close_matches(name, list(offered), n=1)
        hint = f" (did you mean `{close[0]}`?)" if close else ""
        return [f"`{name}` is not an offered tool{hint}; offered: {', '.join(offered) or '(none)'}"]
    values, why = decoded(args)
    if why is not None:
        return [why]
    return arg_problems(tool.parameters, values, unknown=True)


def without_tools(node: Any) -> list[Diagnostic]:
    """W308 for each `valid arguments` of an expectation in a suite that declares no tools: every call
    would fail it (no call is to a declared tool), which is surely not what was meant."""
    return [warning("W308", "`valid arguments` in a suite that declares no tools: every call will fail it",
                    n.span, help="declare the tools the agent may call (`tool NAME` with its `param` lines, "
                    "or `use` a file that does), or drop this expectation")
            for n in a.walk(node) if isinstance(n, a.ValidArguments)]


class ValidArguments:
    """`valid arguments`: every call was to an offered tool, its arguments valid for its params.

    The tools are the run's (`EvalContext.tools`: the case's `tools` setting, or every declared
    tool); a run scored without them fails, saying so, rather than passing unchecked.
    """

    __slots__ = ()

    def __call__(self, ctx: EvalContext) -> Outcome:
        tools: Sequence[Any] | None = ctx.tools
        if tools is None:
            return Outcome(0.0, "the run's tools are not known here, so its arguments cannot be checked")
        offered = {tool.name: tool for tool in tools}
        calls = ctx.artifacts.tool_calls
        failed = [(i, call, found) for i, call in enumerate(calls, 1)
                  if (found := call_problems(offered, call.name, call.args))]
        if not failed:
            return _HOLDS
        i, call, found = failed[0]
        shown = "; ".join(found[:_SHOWN_PROBLEMS]) + (f"; … ({len(found) - _SHOWN_PROBLEMS} more)"
                                                      if len(found) > _SHOWN_PROBLEMS else "")
        return Outcome(0.0, f"{len(failed)} of {len(calls)} calls had invalid arguments; call {i} "
                            f"{shorten(call.display(), 100)}: {shown}")
