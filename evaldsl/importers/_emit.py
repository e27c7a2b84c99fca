"""Writing `.evl` source text: names, strings, values, patterns, regexes, counts.

The importers build text, not AST nodes: the text is what the user keeps,
and `evaldsl.format` then gives it the canonical layout and `compile`
proves it means what it should. Every piece here quotes whatever could be
read as something else (a keyword where a name stands, a bare word where a
string is meant), so an imported value is never reinterpreted.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
_RESERVED = frozenset(
    "any tool with then once twice times at least most between and or not else for is "
    "true false null absent contains matches one of starts ends ignoring case within above below".split()
)


class Unrepresentable(ValueError):
    """A value with no `.evl` form (NaN, infinity): the caller keeps it as a comment."""


def string(text: str) -> str:
    """A `.evl` string literal (JSON escapes)."""
    return json.dumps(text, ensure_ascii=False)


def name(text: str) -> str:
    """A tool, tag or key name, quoted unless it is a plain name that no keyword could take."""
    if _NAME.match(text) and text not in _RESERVED:
        return text
    return string(text)


def number(value: int | float) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        raise Unrepresentable(f"{value} has no JSON form")
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)  # 4.0 stays 4.0: the source wrote a float
    return json.dumps(value)


def value(item: Any) -> str:
    """A JSON value written as an `.evl` value: objects as `< >`, strings always quoted."""
    if item is None:
        return "null"
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, (int, float)):
        return number(item)
    if isinstance(item, str):
        return string(item)
    if isinstance(item, list):
        return "[" + ", ".join(value(x) for x in item) + "]"
    if isinstance(item, dict):
        return "<" + ", ".join(f"{name(str(k))}: {value(v)}" for k, v in item.items()) + ">"
    raise Unrepresentable(f"a {type(item).__name__} has no .evl form")


def exact_args_pattern(args: dict[str, Any]) -> str:
    """eval-core's subset rule as a pattern: objects recurse by subset, everything else exactly.

    `.evl` arrays match element by element, so an array holding no object is
    already exact; one holding an object is written `one of [ARRAY]`, which
    compares whole values, as eval-core does.
    """
    parts = [f"{name(str(k))}: {_exact(v)}" for k, v in args.items()]
    return "<" + ", ".join(parts) + ">"


def _exact(item: Any) -> str:
    if isinstance(item, dict):
        return exact_args_pattern(item)
    if isinstance(item, list) and _holds_object(item):
        return f"one of [{value(item)}]"
    return value(item)


def _holds_object(item: Any) -> bool:
    if isinstance(item, dict):
        return True
    return isinstance(item, list) and any(_holds_object(x) for x in item)


def regex(pattern: str) -> str:
    """A `/.../` literal for a Python `re` pattern: `/` escaped, line breaks as `\\n`."""
    escaped: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            escaped.append(pattern[i: i + 2])
            i += 2
            continue
        escaped.append({"/": "\\/", "\n": "\\n", "\r": "\\r"}.get(ch, ch))
        i += 1
    return "/" + "".join(escaped) + "/"


def count(minimum: int | None, maximum: int | None) -> str:
    """A COUNT clause for [min, max]; both None means any number (`at least 0 times`)."""
    if minimum is not None and minimum == maximum:
        return {1: "once", 2: "twice"}.get(minimum, f"{minimum} times")
    if minimum is not None and maximum is not None:
        return f"between {minimum} and {maximum} times"
    if maximum is not None:
        return f"at most {maximum} times"
    return f"at least {minimum or 0} times"


def comment(text: str) -> str:
    """A comment line holding ``text`` (line breaks folded)."""
    return "# " + " ".join(text.split())
