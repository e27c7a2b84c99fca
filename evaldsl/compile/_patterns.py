"""Argument patterns (docs/language.md section 7) compiled to matchers.

A pattern is compiled once into a closure; a run only calls it (DESIGN
rule 7). A matcher answers None when a value matches, and otherwise a short
reason that names the key path and what was expected against what was got
(`limit: expected above 5, got 5`), because "no call matched" alone sends a
user to the transcript, while the reason usually says what went wrong.

Inside, every pattern compiles to a small object (one class a pattern
form, its values as slots: a suite of many cases that differ only in their
numbers and strings holds each matcher's code once and a few bytes of data a
case) whose call returns a list of misses,
each a key path and a text; the empty list means a match. Paths are kept
apart from texts so that an object can prefix its key to whatever a nested
pattern reports, and an object reports every failing key, not only the first:
the call predicates pick the "closest" call by the fewest misses.

The one context rule is `absent`: it is meaningful only as a key's own
pattern (`<cc: absent>`), so the object factory handles it and any other
place raises E203.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from ..syntax import _ast as a
from ._errors import CompileProblem
from ._regex import search
from ._values import (
    casefold_equal,
    is_number,
    json_equal,
    label,
    shorten,
    show,
    to_number,
    to_python,
    to_text,
    unfilled,
)

Matcher = Callable[[Any], "str | None"]
"""None when the value matches, else a short reason."""


class Miss(NamedTuple):
    """One reason a value failed a pattern, at a key path inside the value."""

    path: tuple[str | int, ...]
    text: str


_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}
_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def compile_pattern(node: Any) -> Matcher:
    """Compile a PATTERN node into a matcher.

    Args:
        node: any pattern node of the AST (`EqualsPattern`, `ObjectPattern`, ...).

    Returns:
        A matcher: None on a match, else the reasons joined by "; ".

    Raises:
        CompileProblem: E203 for `absent` other than as a key's pattern, E202
            for a bad regex, and for a placeholder that was never filled in.
    """
    return _Joined(_build(node))


def compile_args(node: Any) -> Matcher:
    """Compile a call's ARGS (an object pattern) into a matcher of its arguments.

    A string argument value is decoded as JSON first, as models send
    arguments that way; a string that is not JSON matches no pattern.
    """
    return _Joined(_args_check(node))


def compile_args_misses(node: Any) -> Callable[[Any], list[str]]:
    """Like `compile_args`, but every reason is kept: [] on a match.

    The call predicates use the number of reasons to find the closest call.
    """
    return _Reasons(_args_check(node))


def compile_regex(node: a.Regex) -> re.Pattern[str]:
    """Compile a `/re/flags` node with Python's `re`; a bad one raises E202."""
    flags = 0
    for letter in node.flags:
        if letter not in _FLAGS:
            raise CompileProblem(f"unknown regex flag {letter!r}", node, code="E202",
                                 help="regex flags are i, m, s and x")
        flags |= _FLAGS[letter]
    try:
        return re.compile(node.pattern, flags)
    except re.error as err:
        raise CompileProblem(f"invalid regex /{node.pattern}/: {err}", node,
                             code="E202") from None


def format_miss(miss: Miss) -> str:
    """`key.path[0]: text`, or the bare text for the value itself."""
    if not miss.path:
        return miss.text
    parts: list[str] = []
    for step in miss.path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        else:
            key = step if _BARE_KEY.match(step) else json.dumps(step, ensure_ascii=False)
            parts.append(f".{key}" if parts else key)
    return f"{''.join(parts)}: {miss.text}"


def describe(node: Any) -> str:
    """A pattern as a detail shows it: literals as JSON (`"add"`), the rest as written."""
    if isinstance(node, a.EqualsPattern):
        return show(to_python(node.value)) + (" ignoring case" if node.ignore_case else "")
    if isinstance(node, (a.PatternOr, a.PatternAnd)):
        joiner = " or " if isinstance(node, a.PatternOr) else " and "
        return joiner.join(map(describe, node.patterns))
    return label(node)


class _Joined:
    """A matcher: None on a match, else the misses' texts joined by "; "."""

    __slots__ = ("check",)

    def __init__(self, check: _Pattern) -> None:
        self.check = check

    def __call__(self, value: Any) -> str | None:
        misses = self.check.match(value)
        return "; ".join(map(format_miss, misses)) if misses else None


class _Reasons:
    """Every reason a value misses, as texts: [] on a match."""

    __slots__ = ("check",)

    def __init__(self, check: _Pattern) -> None:
        self.check = check

    def __call__(self, value: Any) -> list[str]:
        return [format_miss(miss) for miss in self.check.match(value)]


class _Pattern:
    """A compiled pattern: `match(value)` gives the misses, [] on a match."""

    __slots__ = ()

    def match(self, value: Any) -> list[Miss]:
        raise NotImplementedError

    def __call__(self, value: Any) -> list[Miss]:
        return self.match(value)


class _Leaf(_Pattern):
    """A pattern with no inner pattern: it holds or it does not, with one wording."""

    __slots__ = ()

    def holds(self, value: Any) -> bool:
        raise NotImplementedError

    def wanted(self) -> str:
        """What was expected, as a detail says it (made only when a value misses)."""
        raise NotImplementedError

    def match(self, value: Any) -> list[Miss]:
        return [] if self.holds(value) else _miss(f"expected {self.wanted()}, got {show(value)}")


class _Args(_Pattern):
    """A call's arguments: a string is decoded as JSON first, as models send them."""

    __slots__ = ("inner",)

    def __init__(self, inner: _Pattern) -> None:
        self.inner = inner

    def match(self, value: Any) -> list[Miss]:
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.strip() else {}  # "" means no arguments, as for a mock tool
            except ValueError:
                return [Miss((), f"arguments are not valid JSON: {shorten(value, 80)}")]
        return self.inner.match(value)


def _args_check(node: Any) -> _Pattern:
    if isinstance(node, a.Placeholder):
        raise unfilled(node)
    if not isinstance(node, a.ObjectPattern):
        raise CompileProblem("tool arguments are matched by an object pattern <...>", node)
    return _Args(_build(node))


def _build(node: Any) -> _Pattern:
    factory = _FACTORIES.get(type(node))
    if factory is not None:
        return factory(node)
    if isinstance(node, a.Placeholder):
        raise unfilled(node)
    if isinstance(node, a.AbsentPattern):
        raise CompileProblem("`absent` can only be the pattern of a key, as in <cc: absent>",
                             node, code="E203")
    raise CompileProblem(f"expected a pattern here, found {getattr(node, 'kind', node)}", node)


def _miss(text: str) -> list[Miss]:
    return [Miss((), text)]


def _prefixed(step: str | int, misses: list[Miss]) -> list[Miss]:
    return [Miss((step, *miss.path), miss.text) for miss in misses]


# ------------------------------------------------------------ structure --


class _Object(_Pattern):
    """`<k: P, ...>`: every listed key matches its pattern (None: `absent`), other keys are free."""

    __slots__ = ("keys", "inners")

    def __init__(self, node: a.ObjectPattern) -> None:
        self.keys = _shared(tuple(entry.key for entry in node.entries))
        self.inners = tuple(None if isinstance(entry.pattern, a.AbsentPattern) else _build(entry.pattern)
                            for entry in node.entries)

    def match(self, value: Any) -> list[Miss]:
        if not isinstance(value, dict):
            return _miss(f"expected an object, got {show(value)}")
        misses: list[Miss] = []
        for key, inner in zip(self.keys, self.inners):
            if inner is None:
                if key in value:
                    misses.append(Miss((key,), f"expected no such key, got {show(value[key])}"))
            elif key not in value:
                misses.append(Miss((), f"missing key {json.dumps(key, ensure_ascii=False)}"))
            else:
                found = inner.match(value[key])
                if found:
                    misses.extend(_prefixed(key, found))
        return misses


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


# -------------------------------------------------------------- literals --


class _Equals(_Leaf):
    """A literal: equal by the literal rule (or after casefolding, `ignoring case`)."""

    __slots__ = ("expected", "fold")

    def __init__(self, node: a.EqualsPattern) -> None:
        self.expected = to_python(node.value)
        self.fold = node.ignore_case

    def holds(self, value: Any) -> bool:
        return casefold_equal(value, self.expected) if self.fold else json_equal(value, self.expected)

    def match(self, value: Any) -> list[Miss]:
        expected = self.expected
        if type(value) is type(expected) and type(value) in _SCALARS and value == expected:
            return []  # the usual hit, without the literal rule's walk
        return _Leaf.match(self, value)

    def wanted(self) -> str:
        return show(self.expected) + (" ignoring case" if self.fold else "")


_SCALARS = frozenset({str, int, float})
"""Types whose equal values of the same type are equal by the literal rule too (NaN is never equal)."""


class _OneOf(_Leaf):
    __slots__ = ("options",)

    def __init__(self, node: a.OneOfPattern) -> None:
        self.options = tuple(to_python(value) for value in node.values)

    def holds(self, value: Any) -> bool:
        return any(json_equal(value, option) for option in self.options)

    def wanted(self) -> str:
        return f"one of {show(list(self.options))}"


# --------------------------------------------------------------- strings --


class _Contains(_Pattern):
    """`contains P`: an array with an element matching P, or (P a string) a string containing it."""

    __slots__ = ("inner", "needle", "fold", "described")

    def __init__(self, node: a.ContainsPattern) -> None:
        inner_node = node.pattern
        self.inner = _build(inner_node)
        self.needle = _needle(inner_node)
        self.fold = isinstance(inner_node, a.EqualsPattern) and inner_node.ignore_case
        self.described = describe(inner_node)

    def match(self, value: Any) -> list[Miss]:
        needle, wanted = self.needle, self.described
        if isinstance(value, (list, tuple)):
            if any(not self.inner.match(item) for item in value):
                return []
            return _miss(f"expected an array containing {wanted}, got {show(value)}")
        if isinstance(value, str) and needle is not None:
            if (needle.casefold() in value.casefold()) if self.fold else (needle in value):
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


class _Affix(_Leaf):
    """`starts with "s"` / `ends with "s"`, optionally ignoring case."""

    __slots__ = ("affix", "key", "fold", "starts")

    def __init__(self, node: a.StartsWithPattern | a.EndsWithPattern) -> None:
        self.affix = to_text(node.text)
        self.fold = node.ignore_case
        self.starts = isinstance(node, a.StartsWithPattern)
        self.key = self.affix.casefold() if self.fold else self.affix

    def holds(self, value: Any) -> bool:
        if not isinstance(value, str):
            return False
        text = value.casefold() if self.fold else value
        return text.startswith(self.key) if self.starts else text.endswith(self.key)

    def wanted(self) -> str:
        verb = "starting" if self.starts else "ending"
        return f"a string {verb} with {show(self.affix)}" + (" ignoring case" if self.fold else "")


class _Matches(_Leaf):
    """`matches /re/`: a string the regex finds a match in (time-limited, see `_regex`)."""

    __slots__ = ("regex", "flags")

    def __init__(self, node: a.MatchesPattern) -> None:
        self.regex = compile_regex(node.regex)
        self.flags = node.regex.flags

    def holds(self, value: Any) -> bool:
        return isinstance(value, str) and bool(search(self.regex, value, "a string"))

    def wanted(self) -> str:
        return f"a string matching /{self.regex.pattern}/{self.flags}"


# --------------------------------------------------------------- numbers --


COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "at least": lambda x, bound: x >= bound,
    "at most": lambda x, bound: x <= bound,
    "above": lambda x, bound: x > bound,
    "below": lambda x, bound: x < bound,
}
"""The four comparison words of patterns and `final number`, as tests."""


class _Compare(_Leaf):
    __slots__ = ("op", "bound")

    def __init__(self, node: a.ComparePattern) -> None:
        self.op = node.op
        self.bound = to_number(node.value)

    def holds(self, value: Any) -> bool:
        return is_number(value) and COMPARE[self.op](value, self.bound)

    def wanted(self) -> str:
        return f"{self.op} {show(self.bound)}"


class _Between(_Leaf):
    __slots__ = ("low", "high")

    def __init__(self, node: a.BetweenPattern) -> None:
        self.low, self.high = ordered_bounds(node)

    def holds(self, value: Any) -> bool:
        return is_number(value) and self.low <= value <= self.high

    def wanted(self) -> str:
        return f"between {show(self.low)} and {show(self.high)}"


def ordered_bounds(node: Any) -> tuple[int | float, int | float]:
    """The (low, high) of a `between` node; reversed bounds are a compile error."""
    low, high = to_number(node.low), to_number(node.high)
    if low > high:
        raise CompileProblem(f"between {show(low)} and {show(high)} can never hold: "
                             "the first bound is above the second", node, code="E213")
    return low, high


class _Within(_Leaf):
    __slots__ = ("center", "tolerance")

    def __init__(self, node: a.WithinPattern) -> None:
        center = to_python(node.value)
        if not is_number(center):
            raise CompileProblem(f"`within` needs a number before it, found {show(center)}",
                                 node.value, code="E213")
        tolerance = to_number(node.tolerance)
        if tolerance < 0:
            raise CompileProblem("a `within` tolerance cannot be negative", node.tolerance,
                                 code="E213")
        self.center, self.tolerance = center, tolerance

    def holds(self, value: Any) -> bool:
        return is_number(value) and abs(value - self.center) <= self.tolerance

    def wanted(self) -> str:
        return f"{show(self.center)} within {show(self.tolerance)}"


# ----------------------------------------------------------- combinators --


class _Negation(_Leaf):
    __slots__ = ("inner", "described")

    def __init__(self, node: a.PatternNegation) -> None:
        self.inner = _build(node.pattern)
        self.described = f"not {describe(node.pattern)}"

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


def _shared(value: Any) -> Any:
    if len(_SHARED) >= 4096:
        _SHARED.clear()
    return _SHARED.setdefault(value, value)


def _literal(node: a.EqualsPattern) -> _Pattern:
    """An `_Equals`, the same one for the same string, whole number or constant."""
    value = node.value
    if isinstance(value, a.Number) and type(value.value) is int or isinstance(value, (a.Word, a.Constant)):
        key = (type(value), value.value, node.ignore_case)
    elif isinstance(value, a.String):
        key = (a.String, value.value, node.ignore_case)
    else:
        return _Equals(node)
    found = _SHARED.get(key)
    if found is None:
        found = _SHARED[key] = _Equals(node)
        if len(_SHARED) > 4096:
            _SHARED.clear()
    return found


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
}
