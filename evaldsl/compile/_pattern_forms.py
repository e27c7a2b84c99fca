"""The pattern forms of docs/language.md section 7, each a small class (see `_patterns`).

One class a form, with the form's values as slots (`_Equals.expected`,
`_Compare.bound`): the code of a matcher exists once, and each case that
writes the form holds only its own values, a few dozen bytes. A suite of
100,000 cases that differ only in their numbers and strings then holds
100,000 small objects, not 100,000 sets of closures (about four times the
memory). `match(value)` returns the misses, [] on a match; the wording of
what was expected is made only when a value misses.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..syntax import _ast as a
from ._errors import CompileProblem
from ._pattern_leaves import (
    COMPARE,
    Miss,
    _Affix,
    _Between,
    _Compare,
    _Equals,
    _Leaf,
    _Loosely,
    _Matches,
    _miss,
    _OneOf,
    _Pattern,
    _prefixed,
    _Within,
    compile_regex,
    loose,
    ordered_bounds,
)
from ._values import label, show, to_python, unfilled

__all__ = ["COMPARE", "Miss", "compile_regex", "describe", "ordered_bounds"]


def describe(node: Any) -> str:
    """A pattern as a detail shows it: literals as JSON (`"add"`), the rest as written."""
    if isinstance(node, a.EqualsPattern):
        return show(to_python(node.value)) + (" ignoring case" if node.ignore_case else "")
    if isinstance(node, (a.PatternOr, a.PatternAnd)):
        joiner = " or " if isinstance(node, a.PatternOr) else " and "
        return joiner.join(map(describe, node.patterns))
    return label(node)


def _build(node: Any) -> _Pattern:
    factory = _FACTORIES.get(type(node))
    if factory is not None:
        return factory(node)
    if isinstance(node, a.Placeholder):
        raise unfilled(node)
    if isinstance(node, a.AbsentPattern):
        raise CompileProblem("`absent` (and `absent or P`) can only be the pattern of a key, as in <cc: absent>",
                             node, code="E203", help="an optional key: <limit: absent or at most 10>")
    raise CompileProblem(f"expected a pattern here, found {getattr(node, 'kind', node)}", node)


# ------------------------------------------------------------ structure --


class _Object(_Pattern):
    """`<k: P, ...>`: every listed key matches its pattern (None: `absent`; an `_Optional`: `absent or P`),
    other keys are free; `only <...>` (v2, ``closed``): no other key."""

    __slots__ = ("keys", "inners", "closed")

    def __init__(self, node: a.ObjectPattern, closed: bool = False) -> None:
        self.keys = _shared(tuple(entry.key for entry in node.entries))
        self.inners = tuple(_key_pattern(entry.pattern) for entry in node.entries)
        self.closed = closed

    def match(self, value: Any) -> list[Miss]:
        if not isinstance(value, dict):
            return _miss(f"expected an object, got {show(value)}")
        misses: list[Miss] = []
        for key, inner in zip(self.keys, self.inners):
            if inner is None:
                if key in value:
                    misses.append(Miss((key,), f"expected no such key, got {show(value[key])}"))
            elif key not in value:
                if type(inner) is not _Optional:
                    misses.append(Miss((), f"missing key {json.dumps(key, ensure_ascii=False)}"))
            else:
                found = inner.match(value[key])
                if found:
                    if len(found) == 1 and not found[0].path:  # a leaf's miss: its path is this key
                        misses.append(Miss((key,), found[0].text))
                    else:
                        misses.extend(_prefixed(key, found))
        if self.closed:
            misses.extend(self._extra(value))
        return misses

    def _extra(self, value: dict) -> list[Miss]:
        """`only <...>`: a miss for each key the pattern does not name."""
        named = self.keys
        return [Miss((key,), f"unexpected key (`only` names {', '.join(named) or 'no key'}), got "
                             f"{show(value[key], limit=60)}") for key in value if key not in named]


class _Optional(_Pattern):
    """`absent or P` (v2) as a key's pattern: a missing key is fine (see `_Object`); a present one matches P."""

    __slots__ = ("inner",)

    def __init__(self, inner: _Pattern) -> None:
        self.inner = inner

    def match(self, value: Any) -> list[Miss]:
        return self.inner.match(value)


def _key_pattern(node: Any) -> _Pattern | None:
    """A key's own pattern: None for `absent`, an `_Optional` for `absent or P`, else the pattern."""
    if isinstance(node, a.AbsentPattern):
        return None
    if isinstance(node, a.PatternOr) and any(isinstance(p, a.AbsentPattern) for p in node.patterns):
        rest = tuple(p for p in node.patterns if not isinstance(p, a.AbsentPattern))
        if not rest:
            return None  # `absent or absent`
        inner = rest[0] if len(rest) == 1 else a.make(a.PatternOr, span=node.span, patterns=rest)
        return _Optional(_build(inner))
    return _build(node)


def _only(node: a.OnlyPattern) -> _Pattern:
    """`only <...>` (v2): a closed object pattern; before anything else an error."""
    inner = node.pattern
    if not isinstance(inner, a.ObjectPattern):
        raise CompileProblem(f"`only` closes an object pattern, not {label(inner)}", inner, code="E250",
                             help="write `only <key: PATTERN, ...>`; for an `or` of objects, `only` before each: "
                                  "only <a: 1> or only <b: 2>")
    return _Object(inner, closed=True)


class _Array(_Pattern):
    """`[P, ...]`: an array of exactly that many elements, each matching in turn."""

    __slots__ = ("items",)

    def __init__(self, node: a.ArrayPattern) -> None:
        self.items = tuple(_build(item) for item in node.items)

    def match(self, value: Any) -> list[Miss]:
        size = len(self.items)
        if not isinstance(value, (list, tuple)):
            return _miss(f"expected {self._wanted()}, got {show(value)}")
        if len(value) != size:
            return _miss(f"expected {self._wanted()}, got {len(value)}: {show(value)}")
        misses: list[Miss] = []
        for index, (inner, item) in enumerate(zip(self.items, value, strict=True)):
            misses.extend(_prefixed(index, inner.match(item)))
        return misses

    def _wanted(self) -> str:
        size = len(self.items)
        return f"an array of {size} element{'' if size == 1 else 's'}"


class _Any(_Pattern):
    """`_`: anything."""

    __slots__ = ()

    def match(self, value: Any) -> list[Miss]:
        return []


_ANY = _Any()


# --------------------------------------------------------------- strings --


class _Contains(_Pattern):
    """`contains P`: an array with an element matching P, or (P a string) a string containing it."""

    __slots__ = ("inner", "needle", "fold", "described", "loosely")

    def __init__(self, node: a.ContainsPattern) -> None:
        inner_node = node.pattern
        self.inner = _build(inner_node)
        self.loosely = isinstance(self.inner, _Loosely)  # v2: `contains "s" loosely`
        self.needle = self.inner.key if isinstance(self.inner, _Loosely) else _needle(inner_node)
        self.fold = isinstance(inner_node, a.EqualsPattern) and inner_node.ignore_case
        self.described = describe(inner_node)

    def match(self, value: Any) -> list[Miss]:
        needle, wanted = self.needle, self.described
        if isinstance(value, (list, tuple)):
            if any(not self.inner.match(item) for item in value):
                return []
            return _miss(f"expected an array containing {wanted}, got {show(value)}")
        if isinstance(value, str) and needle is not None:
            if self.loosely:
                if needle in loose(value):
                    return []
            elif (needle.casefold() in value.casefold()) if self.fold else (needle in value):
                return []
            return _miss(f"expected a string containing {wanted}, got {show(value)}")
        kind = "a string or an array" if needle is not None else "an array"
        return _miss(f"expected {kind} containing {wanted}, got {show(value)}")


def _needle(node: Any) -> str | None:
    """The string of `contains "s"`, None when the pattern is not a string."""
    if isinstance(node, a.EqualsPattern):
        value = to_python(node.value)
        if isinstance(value, str):
            return value
    return None


# ----------------------------------------------------------- combinators --


class _Negation(_Leaf):
    __slots__ = ("inner", "described")

    def __init__(self, node: a.PatternNegation) -> None:
        self.inner = _build(node.pattern)
        inner = describe(node.pattern)
        self.described = f"not ({inner})" if isinstance(node.pattern, (a.PatternOr, a.PatternAnd)) else f"not {inner}"

    def holds(self, value: Any) -> bool:
        return bool(self.inner.match(value))

    def wanted(self) -> str:
        return self.described


class _And(_Pattern):
    __slots__ = ("parts",)

    def __init__(self, node: a.PatternAnd) -> None:
        self.parts = tuple(_build(part) for part in node.patterns)

    def match(self, value: Any) -> list[Miss]:
        return [miss for part in self.parts for miss in part.match(value)]


class _Or(_Leaf):
    __slots__ = ("parts", "described")

    def __init__(self, node: a.PatternOr) -> None:
        self.parts = tuple(_build(part) for part in node.patterns)
        self.described = describe(node)

    def holds(self, value: Any) -> bool:
        return any(not part.match(value) for part in self.parts)

    def wanted(self) -> str:
        return self.described


_SHARED: dict[Any, Any] = {}
"""Parts that recur from case to case (`op: add`, a key list), one object each; bounded."""


def _one(key: Any, make: Callable[[], Any]) -> Any:
    """The object kept for ``key``, made by ``make`` the first time (the cache starts again past 4,096)."""
    found = _SHARED.get(key)
    if found is None:
        if len(_SHARED) >= 4096:
            _SHARED.clear()
        found = _SHARED[key] = make()
    return found


def _shared(value: Any) -> Any:
    return _one(value, lambda: value)


_SHAREABLE = frozenset({str, int, bool, type(None)})
"""Literal types whose equal values match alike (a float is left out: 0.0 and -0.0 are shown apart)."""


def _literal(node: a.EqualsPattern) -> _Pattern:
    """An `_Equals`, the same one for the same string, whole number or constant."""
    literal = node.value
    if not isinstance(literal, (a.String, a.Word, a.Number, a.Constant)) or type(literal.value) not in _SHAREABLE:
        return _Equals(node)  # an array, an object, a float
    key = (type(literal.value), literal.value, node.ignore_case)
    return _one(key, lambda: _Equals(node))  # type: ignore[no-any-return]


_FACTORIES: dict[type, Callable[[Any], _Pattern]] = {
    a.ObjectPattern: _Object,
    a.ArrayPattern: _Array,
    a.AnyPattern: lambda node: _ANY,
    a.EqualsPattern: _literal,
    a.OneOfPattern: _OneOf,
    a.ContainsPattern: _Contains,
    a.StartsWithPattern: _Affix,
    a.EndsWithPattern: _Affix,
    a.MatchesPattern: _Matches,
    a.ComparePattern: _Compare,
    a.BetweenPattern: _Between,
    a.WithinPattern: _Within,
    a.PatternNegation: _Negation,
    a.PatternAnd: _And,
    a.PatternOr: _Or,
    a.OnlyPattern: _only,
    a.LooselyPattern: _Loosely,
}
