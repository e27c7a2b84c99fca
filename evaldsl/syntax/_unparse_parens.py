"""Where `unparse` puts parentheses: the fewest that re-parse to the same tree.

Expressions: `not` binds tighter than `and`, `and` tighter than `or`; a
nested `and` inside `and` keeps its parentheses, so the tree shape survives
(`operand`). Argument patterns (v2) get them the same way (`not ("a" or
"b")`, `pattern_operand`); after `with`, an `or` / `and` of object patterns
stands bare (`with <a: 1> or <b: 2>`) and any other pattern in parentheses
(`call_args`). `only` takes a bare object, array, `any` or plain value, and
anything else in parentheses (`only_operand`).

Each helper is given the renderer (``un``: node -> text) of the caller, so
long strings inside keep the caller's layout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _ast as a

Render = Callable[[Any], str]

PAREN_LEVEL: dict[type, int] = {a.OrExpr: 1, a.AndExpr: 2}
"""How loosely an expression binds (1 `or`, 2 `and`); every other binds tighter (9)."""
_PATTERN_LEVEL: dict[type, int] = {a.PatternOr: 1, a.PatternAnd: 2}
_ARGS_ATOMS = (a.ObjectPattern, a.OnlyPattern, a.Placeholder)
_ONLY_ATOMS = (a.ObjectPattern, a.ArrayPattern, a.AnyPattern)


def operand(un: Render, node: Any, level: int) -> str:
    """`node` as an operand of an operator at `level` (1 or, 2 and, 3 not)."""
    text = un(node)
    return f"({text})" if PAREN_LEVEL.get(type(node), 9) <= level else text


def pattern_operand(un: Render, node: Any, level: int) -> str:
    """A pattern as an operand of `or` (level 1), `and` (2), `not`, `contains`, `final json` (2):
    parenthesized (v2) when it binds as loosely as the operator or more."""
    text = un(node)
    return f"({text})" if _PATTERN_LEVEL.get(type(node), 9) <= level else text


def only_operand(un: Render, inner: Any) -> str:
    """What follows `only`: bare when it is an object, array, `any` or a plain value."""
    plain = isinstance(inner, _ONLY_ATOMS) or (
        isinstance(inner, a.EqualsPattern) and not inner.ignore_case
        and isinstance(inner.value, (a.String, a.Word, a.Number, a.Constant)))
    return un(inner) if plain else f"({un(inner)})"


def call_args(un: Render, node: Any) -> str:
    """A call's arguments after `with` (v2): an `or` / `and` of object patterns needs no parentheses."""
    if isinstance(node, a.PatternOr):
        return " or ".join(_args_and(un, x) for x in node.patterns)
    return _args_and(un, node)


def _args_and(un: Render, node: Any) -> str:
    if isinstance(node, a.PatternAnd):
        return " and ".join(_args_atom(un, x) for x in node.patterns)
    return _args_atom(un, node)


def _args_atom(un: Render, node: Any) -> str:
    """One operand after `with`: an object pattern, `only <...>`, `not` one, or anything in parentheses."""
    if isinstance(node, _ARGS_ATOMS):
        return un(node)
    if isinstance(node, a.PatternNegation):
        return "not " + _args_atom(un, node.pattern)
    return f"({un(node)})"


def with_args(un: Render, node: Any) -> str:
    """` with ARGS`, or nothing when a call names no arguments."""
    return "" if node is None else " with " + call_args(un, node)
