"""Copying what an agent returned into plain JSON when it is not, noting every change (`_safe.make_safe`'s
rare path: the common answer is plain already and only copied).

The rule is `_safe`'s module docstring's: a value JSON cannot hold recorded as its ``repr``,
lone surrogates as visible escapes, NaN and the infinities as strings, a circular reference
and nesting past `MAX_DEPTH` said so; each change a warning naming where it was.
"""

from __future__ import annotations

import math
from typing import Any

from ..artifacts import ToolCall
from ._error_text import _type_name, safe_repr, safe_text, text_ok
from ._safe import _FLOATS, MAX_DEPTH, MAX_WARNINGS, decoded_args


class Fixer:
    """Copies a value into plain JSON, noting every change."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def warnings(self) -> list[str]:
        if len(self.notes) <= MAX_WARNINGS:
            return self.notes
        more = len(self.notes) - MAX_WARNINGS
        return self.notes[:MAX_WARNINGS] + [f"... and {more} more values changed the same way"]

    def note(self, where: str, what: str) -> None:
        self.notes.append(f"{where}: {what}")

    def optional_text(self, value: Any, where: str) -> str | None:
        if value is None:
            return None
        if type(value) is str or isinstance(value, str):
            return self.text(str.__str__(value), where)
        self.note(where, f"{_type_name(value)} recorded as its repr (expected a str)")
        return safe_repr(value)

    def text(self, value: str, where: str) -> str:
        if text_ok(value):
            return value
        self.note(where, "lone surrogates recorded as backslash escapes")
        return safe_text(value)

    def items(self, value: Any, where: str = "tool_calls") -> list[Any]:
        if type(value) is list:
            return value
        if isinstance(value, (list, tuple)):
            return list(value)
        self.note(where, f"{_type_name(value)} recorded as its repr (expected a list)")
        return [safe_repr(value)]

    def call(self, call: Any, where: str) -> ToolCall:
        if not isinstance(call, ToolCall):
            self.note(where, f"{_type_name(call)} recorded as its repr (expected a ToolCall)")
            return ToolCall.model_construct(name=safe_repr(call), args={}, result=None)
        name = call.name if isinstance(call.name, str) else safe_repr(call.name)
        return ToolCall.model_construct(
            name=self.text(str.__str__(name), f"{where}.name"),
            args=self.value(decoded_args(call.args), f"{where}.args", 1, ()),
            result=self.value(call.result, f"{where}.result", 1, ()),
        )

    def value(self, value: Any, where: str, depth: int, path: tuple[int, ...]) -> Any:
        """``value`` as plain JSON; ``path`` holds the ids of the containers above it."""
        if value is None or type(value) is bool or type(value) is int:
            return value
        if isinstance(value, str):
            return self.text(str.__str__(value), where)
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            if math.isfinite(value):
                return float(value)
            shown = _FLOATS[repr(float(value))]
            self.note(where, f"{shown} recorded as the string {shown!r} (JSON has no form for it)")
            return shown
        if isinstance(value, (dict, list, tuple)):
            if id(value) in path:
                self.note(where, "circular reference recorded as '<circular reference>'")
                return "<circular reference>"
            if depth > MAX_DEPTH:
                self.note(where, f"nested deeper than {MAX_DEPTH} levels; the rest recorded as its repr")
                return safe_repr(value)
            inner = path + (id(value),)
            if isinstance(value, dict):
                return {self.key(k, where): self.value(v, f"{where}.{self.key(k, where, quiet=True)}", depth + 1, inner)
                        for k, v in list(value.items())}
            return [self.value(v, f"{where}[{i}]", depth + 1, inner) for i, v in enumerate(list(value))]
        self.note(where, f"{_type_name(value)} recorded as its repr (JSON has no form for it)")
        return safe_repr(value)

    def key(self, key: Any, where: str, *, quiet: bool = False) -> str:
        if isinstance(key, str):
            return str.__str__(key) if text_ok(key) else (safe_text(key) if quiet else self.text(key, where))
        if key is None or isinstance(key, (bool, int, float)):
            return "null" if key is None else str(key).lower() if isinstance(key, bool) else repr(key)
        if not quiet:
            self.note(where, f"a {_type_name(key)} key recorded as its repr")
        return safe_repr(key)
