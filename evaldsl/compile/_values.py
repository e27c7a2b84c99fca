"""Value nodes as Python data, the literal equality rule, and detail helpers.

Every matcher family compares what an agent did against values written in a
case. The language fixes one equality for that (docs/language.md section 7, the
literal rule): numbers compare by value, so `2` matches `2.0`, but a boolean
is never a number, so `true` does not match `1`, even though Python says
`True == 1`. That rule lives here, once, as `json_equal`, so that argument
patterns, `one of` and `final json` cannot drift apart.

The helpers that turn AST nodes into Python values run at compile time. A
`$name` placeholder must have been filled in by the compiler before any of
them sees a node; one that slips through is reported as a CompileProblem at
that node rather than compared as text.
"""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from ..syntax import _ast as a
from ._errors import CompileProblem


def to_python(node: Any) -> Any:
    """The Python value a Value node stands for.

    Args:
        node: a String, Word, Number, Constant, ArrayValue or ObjectValue.

    Returns:
        str, int, float, bool, None, list or dict.

    Raises:
        CompileProblem: for a `$name` placeholder that was never filled in,
            or a node that is not a value.
    """
    if isinstance(node, (a.String, a.Word, a.Number, a.Constant)):
        return node.value
    if isinstance(node, a.ArrayValue):
        return [to_python(item) for item in node.items]
    if isinstance(node, a.ObjectValue):
        return {entry.key: to_python(entry.value) for entry in node.entries}
    if isinstance(node, a.Placeholder):
        raise unfilled(node)
    raise CompileProblem(f"expected a value here, found {_kind(node)}", node)


def to_number(node: Any) -> int | float:
    """The number a Num node stands for (a Number; never a boolean)."""
    if isinstance(node, a.Number):
        return node.value
    if isinstance(node, a.Placeholder):
        raise unfilled(node)
    value = to_python(node)
    raise CompileProblem(f"expected a number here, found {show(value)}", node, code="E213")


def to_text(node: Any) -> str:
    """The string a Text node stands for (a String; a bare word counts too)."""
    if isinstance(node, (a.String, a.Word)):
        return node.value
    if isinstance(node, a.Placeholder):
        raise unfilled(node)
    value = to_python(node)
    raise CompileProblem(f"expected a string here, found {show(value)}", node, code="E213")


def tool_name(node: Any) -> str:
    """The name a ToolRef node stands for."""
    if isinstance(node, a.ToolName):
        return node.name
    if isinstance(node, a.Placeholder):
        raise unfilled(node)
    raise CompileProblem(f"expected a tool name here, found {_kind(node)}", node)


def unfilled(node: a.Placeholder) -> CompileProblem:
    """The problem for a `$name` that reached a matcher factory unfilled."""
    return CompileProblem(
        f"${node.name} was not filled in",
        node,
        code="E201",
        help="placeholders take their values from an `examples` table",
    )


def is_number(value: Any) -> bool:
    """True for an int or float that is not a bool (booleans are not numbers)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_equal(left: Any, right: Any) -> bool:
    """Equality by the literal rule: numbers by value, booleans never numbers.

    Lists (and tuples) compare element by element, dicts by their key sets
    and then value by value, both recursively by the same rule.
    """
    if is_number(left) and is_number(right):
        return bool(left == right)
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(map(json_equal, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(
            json_equal(value, right[key]) for key, value in left.items()
        )
    if left is None or right is None:
        return left is right
    if type(left) is not type(right) and not (
        isinstance(left, str) and isinstance(right, str)
    ):
        return False
    return bool(left == right)


def casefold_equal(left: Any, right: Any) -> bool:
    """Equality after Unicode casefolding of strings; the literal rule otherwise."""
    if isinstance(left, str) and isinstance(right, str):
        return left.casefold() == right.casefold()
    return json_equal(left, right)


def shorten(text: str, limit: int = 120) -> str:
    """`text` cut to at most `limit` characters, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


_SHOW = json.JSONEncoder(ensure_ascii=False, allow_nan=True, default=repr)
"""`show`'s encoder, made once: `json.dumps` with options builds a new one per call (most of its time)."""


def _reused_encoder(default: Any) -> Any:
    """json's C encoder made once, as `JSONEncoder(ensure_ascii=False, default=default)` makes it per call.

    Without the circular check (`markers` None): a dict of markers would outlive a failed call. A
    circular value then fails by recursion, and the callers fall back to the encoder itself, which
    says what it says. None where json has no C encoder (the callers then always use the encoder).
    """
    if c_make_encoder is None:
        return None
    try:
        return c_make_encoder(None, default, encode_basestring, None, ": ", ", ", False, False, True)
    except TypeError:  # a json whose C encoder takes other arguments
        return None


_DISPLAY_FAST = _reused_encoder(json.JSONEncoder().default)
_SHOW_FAST = _reused_encoder(repr)


def compact_json(value: Any) -> str | None:
    """`json.JSONEncoder(ensure_ascii=False).encode(value)`'s text (`ToolCall.display`'s), or None when it fails.

    That encoder builds its C encoder anew on every call, which is most of the time a short
    call's display takes; this calls one made once. On any failure (a type JSON has not, a
    circular value) the answer is None, and the caller asks the encoder, which then raises
    or answers as it always did.
    """
    return _fast(_DISPLAY_FAST, value)


def _fast(encoder: Any, value: Any) -> str | None:
    """`encoder`'s text of `value`, None without an encoder or when it fails (the general route then answers)."""
    if encoder is None:
        return None
    try:
        return "".join(encoder(value, 0))
    except Exception:  # a type JSON has not, a circular value, an int too long to print
        return None


def show(value: Any, *, limit: int = 120) -> str:
    """A value as compact JSON for a failure detail, shortened."""
    # the usual `got 3`: an int's JSON is its repr, without the encoder's machinery
    text = repr(value) if type(value) is int else _fast(_SHOW_FAST, value)
    if text is None:
        try:
            text = _SHOW.encode(value)
        except (TypeError, ValueError):  # a circular structure, say
            text = repr(value)
    return text if len(text) <= limit else shorten(text, limit)


def label(node: Any) -> str:
    """The canonical source text of a node, for details (`above 5`, `<op: add>`)."""
    from ..syntax._unparse import unparse

    return unparse(node)


def _kind(node: Any) -> str:
    return getattr(node, "kind", type(node).__name__)
