"""Argument patterns (docs/language.md section 7) compiled to matchers.

A pattern is compiled once into a closure; a run only calls it (DESIGN
rule 7). A matcher answers None when a value matches, and otherwise a short
reason that names the key path and what was expected against what was got
(`limit: expected above 5, got 5`), because "no call matched" alone sends a
user to the transcript, while the reason usually says what went wrong.

Inside, every pattern compiles to a function that returns a list of misses,
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


_Check = Callable[[Any], list[Miss]]
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
    return _joined(_build(node))


def compile_args(node: Any) -> Matcher:
    """Compile a call's ARGS (an object pattern) into a matcher of its arguments.

    A string argument value is decoded as JSON first, as models send
    arguments that way; a string that is not JSON matches no pattern.
    """
    return _joined(_args_check(node))


def compile_args_misses(node: Any) -> Callable[[Any], list[str]]:
    """Like `compile_args`, but every reason is kept: [] on a match.

    The call predicates use the number of reasons to find the closest call.
    """
    check = _args_check(node)
    return lambda value: [format_miss(miss) for miss in check(value)]


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


def _joined(check: _Check) -> Matcher:
    def matcher(value: Any) -> str | None:
        misses = check(value)
        return "; ".join(map(format_miss, misses)) if misses else None

    return matcher


def _args_check(node: Any) -> _Check:
    if isinstance(node, a.Placeholder):
        raise unfilled(node)
    if not isinstance(node, a.ObjectPattern):
        raise CompileProblem("tool arguments are matched by an object pattern <...>", node)
    check = _build(node)

    def args(value: Any) -> list[Miss]:
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.strip() else {}  # "" means no arguments, as for a mock tool
            except ValueError:
                return [Miss((), f"arguments are not valid JSON: {shorten(value, 80)}")]
        return check(value)

    return args


def _build(node: Any) -> _Check:
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


def _expect(holds: Callable[[Any], bool], wanted: str) -> _Check:
    """A leaf check: no miss when `holds(value)`, else `expected WANTED, got VALUE`."""

    def check(value: Any) -> list[Miss]:
        return [] if holds(value) else _miss(f"expected {wanted}, got {show(value)}")

    return check


def _prefixed(step: str | int, misses: list[Miss]) -> list[Miss]:
    return [Miss((step, *miss.path), miss.text) for miss in misses]


# ------------------------------------------------------------ structure --


def _object(node: a.ObjectPattern) -> _Check:
    entries = [
        (entry.key, None if isinstance(entry.pattern, a.AbsentPattern) else _build(entry.pattern))
        for entry in node.entries
    ]

    def check(value: Any) -> list[Miss]:
        if not isinstance(value, dict):
            return _miss(f"expected an object, got {show(value)}")
        misses: list[Miss] = []
        for key, inner in entries:
            if inner is None:
                if key in value:
                    misses.append(Miss((key,), f"expected no such key, got {show(value[key])}"))
            elif key not in value:
                misses.append(Miss((), f"missing key {json.dumps(key, ensure_ascii=False)}"))
            else:
                misses.extend(_prefixed(key, inner(value[key])))
        return misses

    return check


def _array(node: a.ArrayPattern) -> _Check:
    items = [_build(item) for item in node.items]
    size = len(items)
    wanted = f"an array of {size} element{'' if size == 1 else 's'}"

    def check(value: Any) -> list[Miss]:
        if not isinstance(value, (list, tuple)):
            return _miss(f"expected {wanted}, got {show(value)}")
        if len(value) != size:
            return _miss(f"expected {wanted}, got {len(value)}: {show(value)}")
        misses: list[Miss] = []
        for index, (inner, item) in enumerate(zip(items, value, strict=True)):
            misses.extend(_prefixed(index, inner(item)))
        return misses

    return check


def _any(node: a.AnyPattern) -> _Check:
    return lambda value: []


# -------------------------------------------------------------- literals --


def _equals(node: a.EqualsPattern) -> _Check:
    expected = to_python(node.value)
    equal = casefold_equal if node.ignore_case else json_equal
    wanted = show(expected) + (" ignoring case" if node.ignore_case else "")
    return _expect(lambda value: equal(value, expected), wanted)


def _one_of(node: a.OneOfPattern) -> _Check:
    options = [to_python(value) for value in node.values]
    return _expect(lambda value: any(json_equal(value, option) for option in options),
                   f"one of {show(options)}")


# --------------------------------------------------------------- strings --


def _contains(node: a.ContainsPattern) -> _Check:
    inner_node = node.pattern
    inner = _build(inner_node)
    needle = _needle(inner_node)
    fold = isinstance(inner_node, a.EqualsPattern) and inner_node.ignore_case
    wanted = describe(inner_node)

    def check(value: Any) -> list[Miss]:
        if isinstance(value, (list, tuple)):
            if any(not inner(item) for item in value):
                return []
            return _miss(f"expected an array containing {wanted}, got {show(value)}")
        if isinstance(value, str) and needle is not None:
            if (needle.casefold() in value.casefold()) if fold else (needle in value):
                return []
            return _miss(f"expected a string containing {wanted}, got {show(value)}")
        kind = "a string or an array" if needle is not None else "an array"
        return _miss(f"expected {kind} containing {wanted}, got {show(value)}")

    return check


def _needle(node: Any) -> str | None:
    """The string of `contains "s"`, None when the pattern is not a string."""
    if isinstance(node, a.EqualsPattern):
        value = to_python(node.value)
        if isinstance(value, str):
            return value
    return None


def _affix(node: a.StartsWithPattern | a.EndsWithPattern) -> _Check:
    affix = to_text(node.text)
    fold = node.ignore_case
    starts = isinstance(node, a.StartsWithPattern)
    verb = "starting" if starts else "ending"
    wanted = f"a string {verb} with {show(affix)}" + (" ignoring case" if fold else "")
    key = affix.casefold() if fold else affix

    def holds(value: Any) -> bool:
        if not isinstance(value, str):
            return False
        text = value.casefold() if fold else value
        return text.startswith(key) if starts else text.endswith(key)

    return _expect(holds, wanted)


def _matches(node: a.MatchesPattern) -> _Check:
    regex = compile_regex(node.regex)
    wanted = f"a string matching /{node.regex.pattern}/{node.regex.flags}"
    return _expect(lambda value: isinstance(value, str) and bool(search(regex, value, "a string")), wanted)


# --------------------------------------------------------------- numbers --


COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "at least": lambda x, bound: x >= bound,
    "at most": lambda x, bound: x <= bound,
    "above": lambda x, bound: x > bound,
    "below": lambda x, bound: x < bound,
}
"""The four comparison words of patterns and `final number`, as tests."""


def _compare(node: a.ComparePattern) -> _Check:
    bound = to_number(node.value)
    holds = COMPARE[node.op]
    return _expect(lambda value: is_number(value) and holds(value, bound),
                   f"{node.op} {show(bound)}")


def _between(node: a.BetweenPattern) -> _Check:
    low, high = ordered_bounds(node)
    return _expect(lambda value: is_number(value) and low <= value <= high,
                   f"between {show(low)} and {show(high)}")


def ordered_bounds(node: Any) -> tuple[int | float, int | float]:
    """The (low, high) of a `between` node; reversed bounds are a compile error."""
    low, high = to_number(node.low), to_number(node.high)
    if low > high:
        raise CompileProblem(f"between {show(low)} and {show(high)} can never hold: "
                             "the first bound is above the second", node, code="E213")
    return low, high


def _within(node: a.WithinPattern) -> _Check:
    center = to_python(node.value)
    if not is_number(center):
        raise CompileProblem(f"`within` needs a number before it, found {show(center)}",
                             node.value, code="E213")
    tolerance = to_number(node.tolerance)
    if tolerance < 0:
        raise CompileProblem("a `within` tolerance cannot be negative", node.tolerance,
                             code="E213")
    return _expect(lambda value: is_number(value) and abs(value - center) <= tolerance,
                   f"{show(center)} within {show(tolerance)}")


# ----------------------------------------------------------- combinators --


def _negation(node: a.PatternNegation) -> _Check:
    inner = _build(node.pattern)
    return _expect(lambda value: bool(inner(value)), f"not {describe(node.pattern)}")


def _and(node: a.PatternAnd) -> _Check:
    parts = [_build(part) for part in node.patterns]
    return lambda value: [miss for part in parts for miss in part(value)]


def _or(node: a.PatternOr) -> _Check:
    parts = [_build(part) for part in node.patterns]
    return _expect(lambda value: any(not part(value) for part in parts), describe(node))


_FACTORIES: dict[type, Callable[[Any], _Check]] = {
    a.ObjectPattern: _object,
    a.ArrayPattern: _array,
    a.AnyPattern: _any,
    a.EqualsPattern: _equals,
    a.OneOfPattern: _one_of,
    a.ContainsPattern: _contains,
    a.StartsWithPattern: _affix,
    a.EndsWithPattern: _affix,
    a.MatchesPattern: _matches,
    a.ComparePattern: _compare,
    a.BetweenPattern: _between,
    a.WithinPattern: _within,
    a.PatternNegation: _negation,
    a.PatternAnd: _and,
    a.PatternOr: _or,
}
