"""The leaf pattern forms (literals, strings, numbers) and the base classes of all forms.

See `_pattern_forms` for why each form is a small class with its values as slots.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any, NamedTuple

from ..syntax import _ast as a
from ._errors import CompileProblem
from ._regex import search
from ._values import casefold_equal, is_number, json_equal, show, to_number, to_python, to_text


class Miss(NamedTuple):
    """One reason a value failed a pattern, at a key path inside the value."""

    path: tuple[str | int, ...]
    text: str


_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


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


class _Pattern:
    """A compiled pattern: `match(value)` gives the misses, [] on a match."""

    __slots__ = ()

    def match(self, value: Any) -> list[Miss]:
        raise NotImplementedError


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


def _miss(text: str) -> list[Miss]:
    return [Miss((), text)]


def _prefixed(step: str | int, misses: list[Miss]) -> list[Miss]:
    return [Miss((step, *miss.path), miss.text) for miss in misses]


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
        kind = type(value)
        if kind is type(expected) and kind in _SCALARS:  # the usual case, without the literal rule's walk
            if value == expected:
                return []
            if not self.fold:  # (ignoring case, unequal strings may still be equal once folded)
                return [Miss((), f"expected {show(expected)}, got {show(value)}")]
        return _Leaf.match(self, value)

    def wanted(self) -> str:
        return show(self.expected) + (" ignoring case" if self.fold else "")


_SCALARS = frozenset({str, int, float})
"""Types whose equal values of the same type are equal by the literal rule too (NaN is never equal)."""


class _OneOf(_Leaf):
    """`one of [v1, v2]`; an item `"s" loosely` (v2) is compared loosely (kept apart, in `loose`)."""

    __slots__ = ("options", "loose", "described")

    def __init__(self, node: a.OneOfPattern) -> None:
        self.options = tuple(to_python(value) for value in node.values if not isinstance(value, a.LooselyPattern))
        self.loose = frozenset(_Loosely(value).key for value in node.values if isinstance(value, a.LooselyPattern))
        self.described = None if not self.loose else f"one of [{', '.join(_shown_item(v) for v in node.values)}]"

    def holds(self, value: Any) -> bool:
        if self.loose and isinstance(value, str) and loose(value) in self.loose:
            return True
        return any(json_equal(value, option) for option in self.options)

    def wanted(self) -> str:
        return self.described or f"one of {show(list(self.options))}"


def _shown_item(node: Any) -> str:
    if isinstance(node, a.LooselyPattern):
        return f"{show(to_python(node.value))} loosely"
    return show(to_python(node))


# ------------------------------------------------------ v2: loose strings --


def loose(text: str) -> str:
    """`text` casefolded, then without white space, punctuation or symbols (Unicode categories Z, P, S;
    and any other character Python calls white space, such as a tab): what `"s" loosely` compares."""
    folded = text.casefold()
    return "".join([ch for ch in folded if unicodedata.category(ch)[0] not in "ZPS" and not ch.isspace()])


class _Loosely(_Leaf):
    """`"s" loosely` (v2): a string equal to s once both are made `loose`."""

    __slots__ = ("expected", "key")

    def __init__(self, node: a.LooselyPattern) -> None:
        expected = to_python(node.value)
        if not isinstance(expected, str):
            raise CompileProblem(f"`loosely` compares strings, and {show(expected)} is not one", node.value,
                                 code="E252", help=f'write the value as a string ("{expected}" loosely), '
                                 "or drop `loosely` to compare it as it is")
        self.expected = expected
        self.key = loose(expected)

    def holds(self, value: Any) -> bool:
        return isinstance(value, str) and loose(value) == self.key

    def wanted(self) -> str:
        return f"{show(self.expected)} loosely"


# --------------------------------------------------------------- strings --


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

    def __init__(self, node: a.ComparePattern | a.NumberCompare) -> None:  # (the same words after `final number`)
        self.op = node.op
        self.bound = to_number(node.value)

    def holds(self, value: Any) -> bool:
        return is_number(value) and COMPARE[self.op](value, self.bound)

    def wanted(self) -> str:
        return f"{self.op} {show(self.bound)}"


class _Between(_Leaf):
    __slots__ = ("low", "high")

    def __init__(self, node: a.BetweenPattern | a.NumberBetween) -> None:
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
