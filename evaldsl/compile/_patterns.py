"""Argument patterns (docs/language.md section 7) compiled to matchers.

A pattern is compiled once into a matcher; a run only calls it (DESIGN
rule 7, with small objects where it says closures: `_pattern_forms` says
why). A matcher answers None when a value matches, and otherwise a short
reason that names the key path and what was expected against what was got
(`limit: expected above 5, got 5`), because "no call matched" alone sends a
user to the transcript, while the reason usually says what went wrong.

Inside, every pattern compiles to a form object (`_pattern_forms`,
`_pattern_leaves`) whose `match` returns a list of misses, each a key path
and a text; the empty list means a match. Paths are kept apart from texts
so that an object can prefix its key to whatever a nested pattern reports,
and an object reports every failing key, not only the first: the call
predicates pick the "closest" call by the fewest misses.

The one context rule is `absent`: it is meaningful only as a key's own
pattern (`<cc: absent>`), so the object factory handles it and any other
place raises E203.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..syntax import _ast as a
from ._errors import CompileProblem
from ._pattern_forms import COMPARE, Miss, _build, _Pattern, compile_regex, describe, ordered_bounds
from ._values import label, shorten, unfilled

_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

__all__ = ["COMPARE", "ArgsMisses", "Matcher", "Miss", "compile_args", "compile_args_misses", "compile_pattern",
           "compile_regex", "describe", "format_miss", "ordered_bounds"]

Matcher = Callable[[Any], "str | None"]
"""None when the value matches, else a short reason."""




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


def compile_args_misses(node: Any) -> ArgsMisses:
    """Like `compile_args`, but every reason is kept: [] on a match.

    The call predicates use the number of reasons to find the closest call.
    """
    return ArgsMisses(_args_check(node))


def format_miss(miss: Miss) -> str:
    """`key.path[0]: text`, or the bare text for the value itself."""
    path, text = miss
    if not path:
        return text
    if len(path) == 1:  # the usual one key; ASCII and an identifier is exactly _BARE_KEY, without the regex
        key = path[0]
        if type(key) is str and key.isascii() and key.isidentifier():
            return f"{key}: {text}"
    parts: list[str] = []
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        else:
            key = step if _BARE_KEY.match(step) else json.dumps(step, ensure_ascii=False)
            parts.append(f".{key}" if parts else key)
    return f"{''.join(parts)}: {text}"


class _Joined:
    """A matcher: None on a match, else the misses' texts joined by "; "."""

    __slots__ = ("check",)

    def __init__(self, check: _Pattern) -> None:
        self.check = check

    def __call__(self, value: Any) -> str | None:
        misses = self.check.match(value)
        return "; ".join(map(format_miss, misses)) if misses else None


class ArgsMisses:
    """Every reason a call's arguments miss, as texts: [] on a match; `fits` says only whether they match."""

    __slots__ = ("check",)

    def __init__(self, check: _Pattern) -> None:
        self.check = check

    def __call__(self, value: Any) -> list[str]:
        return [format_miss(miss) for miss in self.check.match(value)]

    def match(self, value: Any) -> list[Miss]:
        """The misses themselves, [] on a match: a caller words (`format_miss`) only the ones it shows."""
        return self.check.match(value)

    def fits(self, value: Any) -> bool:
        return not self.check.match(value)


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
    if isinstance(node, a.ObjectPattern):
        return _Args(_build(node))
    bad = _not_object(node)
    if bad is not None:
        raise CompileProblem(f"a call's arguments are an object: `{label(bad)}` can never match them", bad,
                             code="E255", help="after `with`, write object patterns: <key: PATTERN>, "
                             "only <...>, and `or`, `and`, `not` and parentheses over them")
    return _Args(_build(node))


def _not_object(node: Any) -> Any:
    """The first part of an argument pattern that is not an object pattern (v2: `only <...>`, and
    `or` / `and` / `not` over them, may stand after `with`); None when every part is one."""
    if isinstance(node, (a.ObjectPattern, a.OnlyPattern)):
        return None
    if isinstance(node, (a.PatternOr, a.PatternAnd)):
        return next((bad for part in node.patterns if (bad := _not_object(part)) is not None), None)
    if isinstance(node, a.PatternNegation):
        return _not_object(node.pattern)
    return node
