"""eval-core's RON suites: `EvalCase(...)` or a list of them, and its expectation catalogue.

Each variant maps to the `.evl` form with the same meaning (eval-core's
matching rules, LANGUAGE.md 4): `CalledToolWith` args use eval-core's rule
(objects by subset, everything else exactly), so an array that holds an
object becomes `one of [ARRAY]`, compared whole. A variant with no `.evl`
form, or a value `.evl` cannot write, is kept as a comment and reported.
"""

from __future__ import annotations

import re
from typing import Any

from . import _emit
from ._model import CaseOut, Problem
from ._ron import Located, Struct

CASE_FIELDS = {"name", "instruction", "expect", "tags", "setup"}


def cases_of(root: Any) -> list[tuple[Any, int]]:
    """The case structs of a file: one `EvalCase(...)` or a list of them."""
    if isinstance(root, Located) and isinstance(root.value, list):
        return list(zip(root.value, root.item_offsets))
    if isinstance(root, Struct):
        return [(root, root.offset)]
    raise Problem("expected an `EvalCase(...)` or a list `[...]` of them", getattr(root, "offset", 0))


def convert_case(node: Any, offset: int) -> CaseOut:
    if not isinstance(node, Struct) or node.name not in (None, "EvalCase") or node.items:
        raise Problem("expected a case: `EvalCase(name: ..., instruction: ..., expect: [...])`", offset)
    fields = node.fields
    prompt = _plain(fields.get("instruction"))
    if not isinstance(prompt, str):
        raise Problem("this case has no `instruction` string (the prompt)", offset)
    case = CaseOut(prompt=prompt, offset=offset, source_format="ron")
    name = _plain(fields.get("name"))
    if name is not None and not isinstance(name, str):
        raise Problem("`name` must be a string", node.field_offsets.get("name", offset))
    case.name = name
    case.tags = _string_list(fields.get("tags"), "tags", node.field_offsets.get("tags", offset))
    _setup(case, fields.get("setup"))
    expect = fields.get("expect")
    if not (isinstance(expect, Located) and isinstance(expect.value, list)):
        raise Problem("this case has no `expect: [...]` list", node.field_offsets.get("expect", offset))
    for item, at in zip(expect.value, expect.item_offsets):
        _expectation(case, item, at)
    for key, val in fields.items():
        if key not in CASE_FIELDS:
            case.unknown.append(f"{key}: {_describe(val)}")
    return case


def _setup(case: CaseOut, raw: Any) -> None:
    value = _to_json(raw)
    if value is None:
        return
    try:
        case.setup = _emit.value(value)
    except _emit.Unrepresentable as exc:
        case.comments.append((f"setup {_describe(raw)}: {exc}", case.offset))


def _expectation(case: CaseOut, item: Any, at: int) -> None:
    if not isinstance(item, Struct) or item.name is None:
        raise Problem("expected an expectation such as `CalledTool(tool: \"search\")`", at)
    handler = _VARIANTS.get(item.name)
    if handler is None:
        case.comments.append((f"{_describe(item)}: no .evl form for the variant `{item.name}`", at))
        return
    try:
        body = handler(item, at)
    except _emit.Unrepresentable as exc:
        case.comments.append((f"{_describe(item)}: {exc}", at))
        return
    if body is None:
        case.comments.append((f"{_describe(item)}: always holds, nothing to check", at))
    else:
        case.expects.append(body)


def _field(item: Struct, key: str, at: int, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    raw = item.fields.get(key, ...)
    if raw is ...:
        if default is ...:
            raise Problem(f"`{item.name}` needs the field `{key}`", at)
        return default
    value = _option(raw)
    if value is not None and (not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool)):
        raise Problem(f"`{item.name}`'s field `{key}` has the wrong type", item.field_offsets.get(key, at))
    return value


def _called_with(item: Struct, at: int) -> str:
    tool = _field(item, "tool", at, str)
    args = _to_json(item.fields.get("args", Located({}, at)))
    if not isinstance(args, dict):
        raise Problem("`CalledToolWith`'s `args` must be a map `{ \"key\": value }`", at)
    return f"called {_emit.name(tool)} with {_emit.exact_args_pattern(args)}"


def _count(item: Struct, at: int) -> str:
    tool = _field(item, "tool", at, str, None)
    low = _field(item, "min", at, int, None)
    high = _field(item, "max", at, int, None)
    who = "any tool" if tool is None else _emit.name(tool)
    return f"called {who} {_emit.count(low, high)}"


def _in_order(item: Struct, at: int) -> str | None:
    tools = _string_list(item.fields.get("tools"), "tools", at)
    return "called " + " then ".join(_emit.name(t) for t in tools) if tools else None


def _contains(item: Struct, at: int) -> str:
    text = _field(item, "text", at, str)
    folded = _field(item, "case_insensitive", at, bool, False)
    return f"final text contains {_emit.string(text)}" + (" ignoring case" if folded else "")


def _matches(item: Struct, at: int) -> str:
    pattern = _field(item, "regex", at, str)
    try:
        re.compile(pattern)
    except re.error as exc:
        raise _emit.Unrepresentable(f"the regex does not compile in Python's `re`: {exc}") from None
    return f"final text matches {_emit.regex(pattern)}"


def _number(item: Struct, at: int) -> str:
    target = _field(item, "value", at, (int, float))
    tolerance = _field(item, "tolerance", at, (int, float), 0.0) or 0.0
    within = f" within {_emit.number(tolerance)}" if tolerance else ""
    return f"final number is {_emit.number(target)}{within}"


_VARIANTS = {
    "CalledTool": lambda i, at: f"called {_emit.name(_field(i, 'tool', at, str))}",
    "DidNotCallTool": lambda i, at: f"not called {_emit.name(_field(i, 'tool', at, str))}",
    "CalledToolWith": _called_with,
    "ToolCallCount": _count,
    "CalledToolsInOrder": _in_order,
    "NoToolCalls": lambda i, at: "no tool calls",
    "FinalTextContains": _contains,
    "FinalTextEquals": lambda i, at: f"final text is {_emit.string(_field(i, 'text', at, str))}",
    "FinalTextMatches": _matches,
    "FinalNumberEquals": _number,
    "NoError": lambda i, at: "no error",
}


def _option(raw: Any) -> Any:
    """`Some(x)` is x, `None` is None; a bare value stands for itself (RON's implicit_some)."""
    if isinstance(raw, Struct) and raw.name == "Some" and len(raw.items) == 1:
        return _option(raw.items[0])
    if isinstance(raw, Struct) and raw.name == "None" and not raw.items and not raw.fields:
        return None
    return _plain(raw)


def _plain(raw: Any) -> Any:
    return raw.value if isinstance(raw, Located) else raw


def _to_json(raw: Any) -> Any:
    """A RON value as JSON: maps and lists recursively, `None`/`()` as null, `Some(x)` as x."""
    raw = _option(raw)
    if isinstance(raw, dict):
        return {str(k): _to_json(v) for k, v in raw.items()}
    if isinstance(raw, list):
        return [_to_json(v) for v in raw]
    if isinstance(raw, Struct):  # a struct inside a value: its fields as an object
        if raw.name is not None and not raw.fields and not raw.items:
            return raw.name  # a unit variant is written as its name (serde's externally tagged form)
        return {k: _to_json(v) for k, v in raw.fields.items()} if raw.fields else [_to_json(v) for v in raw.items]
    return raw


def _string_list(raw: Any, what: str, at: int) -> list[str]:
    value = _option(raw)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(_plain(v), str) for v in value):
        raise Problem(f"`{what}` must be a list of strings", getattr(raw, "offset", at))
    return [_plain(v) for v in value]


def _describe(raw: Any) -> str:
    if isinstance(raw, Struct):
        inner = [f"{k}: {_describe(v)}" for k, v in raw.fields.items()] + [_describe(v) for v in raw.items]
        body = f"({', '.join(inner)})" if inner or raw.name is None else ""
        return f"{raw.name or ''}{body}"
    if isinstance(raw, Located):
        if isinstance(raw.value, dict):
            return "{" + ", ".join(f"{_describe(k)}: {_describe(v)}" for k, v in raw.value.items()) + "}"
        return "[" + ", ".join(_describe(v) for v in raw.value) + "]"
    if isinstance(raw, str):
        return _emit.string(raw)
    if raw is None:
        return "()"
    return str(raw).lower() if isinstance(raw, bool) else str(raw)
