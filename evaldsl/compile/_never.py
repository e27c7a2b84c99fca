"""Patterns that a declared param can never match: `check` says so before a run finds out.

`param op: one of [add, sub]` and `expect called calculator with <op: mul>`
is a case that cannot pass, whatever the agent does; so is a string
literal `"17"` for a `number` param. `never_reason` tells, for a pattern and
the JSON Schema of the param it is written for, why no value the param
accepts could match it (or None when some could). It looks only at what is
certain: literals, arrays and objects of them, `one of`, `or` (every branch
impossible), and the forms that need a string (`starts with`, `ends with`,
`matches`) or a number (`at least`, `between`, `within`). Anything else
(`not`, `any`, `$name`, `contains`) may match, so it says nothing.
"""

from __future__ import annotations

import json
from typing import Any

from ..syntax import _ast as a
from ._tools import type_error
from ._values import to_python

_KINDS = ("string", "number", "integer", "boolean", "object", "array")
_VALUES = (a.String, a.Word, a.Number, a.Constant, a.ArrayValue, a.ObjectValue)
_NEEDS_STRING = (a.StartsWithPattern, a.EndsWithPattern, a.MatchesPattern)
_NEEDS_NUMBER = (a.ComparePattern, a.BetweenPattern, a.WithinPattern)


def _by_value(value: Any) -> Any:
    """A literal as the values it matches see it: `20.0` matches the integer 20 (numbers compare by
    value), so a whole float counts as an int here, though an argument `20.0` is no `integer`."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_by_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _by_value(v) for k, v in value.items()}
    return value


def never_reason(pattern: Any, schema: dict[str, Any]) -> str | None:
    """Why ``pattern`` can match no value of a param of ``schema``; None when it may match one."""
    if "enum" not in schema and schema.get("type") not in _KINDS:
        return None  # a param whose type did not compile (an error of its own): nothing is certain
    if isinstance(pattern, a.EqualsPattern):
        if not isinstance(pattern.value, _VALUES):
            return None  # a placeholder, filled per row: checked once filled
        value = to_python(pattern.value)
        if pattern.ignore_case and isinstance(value, str) and _accepts_strings(schema):
            return None  # casefolded: "ADD" ignoring case may be `add`
        why = type_error(schema, _by_value(value))
        return None if why is None else f"{_shown(value)} {why}"
    if isinstance(pattern, a.OneOfPattern):
        if not all(isinstance(v, _VALUES) for v in pattern.values):
            return None
        values = [to_python(v) for v in pattern.values]
        if values and all(type_error(schema, _by_value(v)) for v in values):
            return f"none of {_shown(values)} fits: the param {describe(schema)}"
        return None
    if isinstance(pattern, a.PatternOr):
        reasons = [never_reason(p, schema) for p in pattern.patterns]
        return reasons[0] if all(reasons) else None
    if isinstance(pattern, a.PatternAnd):
        return next((r for p in pattern.patterns if (r := never_reason(p, schema))), None)
    if isinstance(pattern, a.ArrayPattern):
        if "enum" in schema or schema.get("type") != "array":
            return _needs(schema, "an array")
        items = schema.get("items")
        if not isinstance(items, dict):
            return None
        return next((f"item {i} {r}" for i, p in enumerate(pattern.items) if (r := never_reason(p, items))), None)
    if isinstance(pattern, a.ObjectPattern):
        return _needs(schema, "an object") if "enum" in schema or schema.get("type") != "object" else None
    if isinstance(pattern, _NEEDS_STRING):
        return None if _accepts_strings(schema) else _needs(schema, "a string")
    if isinstance(pattern, _NEEDS_NUMBER):
        accepts = schema.get("type") in ("number", "integer") or any(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in schema.get("enum", []))
        return None if accepts else _needs(schema, "a number")
    return None


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _accepts_strings(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "string" or any(isinstance(v, str) for v in schema.get("enum", []))


def _needs(schema: dict[str, Any], what: str) -> str:
    """The reason a pattern that matches only ``what`` never matches a value of ``schema``."""
    return f"matches only {what}, and the param {describe(schema)}"


def describe(schema: dict[str, Any]) -> str:
    """A param's type in words: ``is one of ["add", "sub"]``, ``is a number``, ``is an array of string``."""
    if "enum" in schema:
        return f"is one of {json.dumps(schema['enum'], ensure_ascii=False)}"
    kind = schema.get("type", "any value")
    if kind == "array" and "items" in schema:
        return f"is an array of {describe(schema['items'])[3:].removeprefix('a ').removeprefix('an ')}"
    return f"is {'an' if kind[0] in 'aeiou' else 'a'} {kind}"
