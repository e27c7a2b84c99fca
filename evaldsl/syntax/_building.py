"""Build AST nodes as each rule is reduced: no parse tree of the file is ever kept.

The LALR parser (Lark's, or `_fastparse`'s loop without Lark) calls one
callback per reduced rule. `_grammar.install` gives every rule a callback
that computes the rule's position from its children and calls the `ToAst`
method named like the rule (`BUILDER.current`, set by the parse in progress
under the parser's lock), so a subtree lives only until its parent is
reduced. Lark's own ``transformer=`` option cannot pass a rule's position to
its method, and its position-propagating wrapper builds a `Tree` and a
`Meta` per rule; this does the same bookkeeping with less (a third of the
parse's time went there). No Lark here: a rule is described by plain data
(`callback_for`'s spec), which the parser cache keeps for a parse without Lark.

Positions follow Lark's ``propagate_positions`` rules exactly (the golden
spans depend on them): a node starts where its first positioned child
starts and ends where its last ends; a child's "container" position is
used, which for a `?rule` that passed its only child on (`(a or b)`) is
widened to the brackets around it.

Most rules take a shorter way to the same values and positions: a rule built
by a `ToAst` method whose Lark chain only drops punctuation and adds
placeholders' Nones gets one callback that does it all (`_built`); another
rule of one symbol is placed from its child inline (`_placed_one`); a
`?rule` of one symbol is marked so that the LALR loop (`_reducing`,
`_fastparse`) passes its child on without a call. `build_parser(fast=False)`
keeps the general way with Lark's own wrappers for every rule (`general`),
for the property test that compares the two
(tests/properties/test_fast_parse_props.py).
"""

from __future__ import annotations

import threading
from typing import Any

from ._tokens import Token, Tree  # a child that is a `str` is a token: Lark's or ours


class Pos:
    """A rule's position (what Lark's `Meta` holds, and what `ToAst` methods read)."""

    __slots__ = ("line", "column", "end_line", "end_column",
                 "c_line", "c_column", "c_end_line", "c_end_column", "empty")

    def __init__(self, first: tuple | None, last: tuple | None) -> None:
        self.line = self.c_line = self.column = self.c_column = None
        self.end_line = self.c_end_line = self.end_column = self.c_end_column = None
        if first is not None:
            self.line, self.column = self.c_line, self.c_column = first
        if last is not None:
            self.end_line, self.end_column = self.c_end_line, self.c_end_column = last
        self.empty = first is None and last is None


class Built(Tree):
    """A subtree already turned into its AST value (`value`); a `Tree` only for the parser's stack.

    Its `data` and (no) `children` are the class's: a file makes one per rule it reduces."""

    __slots__ = ("value",)
    data = "built"  # type: ignore[assignment]
    children = ()  # type: ignore[assignment]

    def __init__(self, value: Any, meta: Pos) -> None:
        self._meta = meta
        self.value = value


class Builder:
    """Whose rule methods build the parse in progress (`current`, set under the parser's lock)."""

    current: Any = None


BUILDER = Builder()
LOCK = threading.RLock()
"""Held by a parse; re-entrant: a parse may start another one inside its `emit` (a `use` file)."""


def callback_for(spec: tuple) -> Any:
    """The callback of a rule described by ``spec`` (`_grammar.rule_spec`): plain data, so that a parse
    without Lark makes the same callbacks from the parser cache (`_tables`).

    ``spec`` is ``(name, size, steps, passes_on)``: the rule's name (its `ToAst` method), how many symbols
    it has, the steps of its Lark chain (`wrap`) and whether it is a `?rule` that gives back a lone child.
    A rule built by a `ToAst` method whose chain only drops children and adds placeholders' Nones gets one
    callback that does it all (`_built`); another rule of one symbol takes its position straight from its
    child (`_placed_one`); any other goes the general way, its steps around the rule's builder. A callback
    marked ``passes_child`` (a `?rule` of one symbol, which gives back its one child, whatever it is) may be
    skipped by the parser's loop, the child left where it is (`_reducing`, `_fastparse`).
    """
    name, size, steps, passes_on = spec
    take = None if name.startswith("_") else _plain_take(steps, size)
    if take is not None:
        return _built(name, take)
    base = _tree(name, statements=name.startswith("__start")) if name.startswith("_") else _node(name)
    for step in steps:
        base = wrap(step, base)
    if size != 1:
        return _placed(base, passes_on=passes_on)
    callback = _placed_one(base, passes_on=passes_on)
    callback.passes_child = passes_on and [tuple(step) for step in steps] == [("expand1",)]  # type: ignore[attr-defined]
    return callback


def for_the_loop(callback: Any, size: int) -> Any:
    """``callback`` as the parser's loop calls it (`_fastparse.feed`): None for a `?rule` of one symbol
    marked ``passes_child``, which would give back its one child: no call, no change to the stack."""
    return None if getattr(callback, "passes_child", False) and size == 1 else callback


def _plain_take(steps: list, size: int) -> list | None:
    """Which child goes where (None: a placeholder's None) if ``steps`` are at most one child filter that
    inlines nothing; None for any other chain (a `?rule`'s pass-through, an inlined `_rule`)."""
    if not steps:
        return list(range(size))
    if len(steps) != 1 or steps[0][0] != "filter":
        return None
    take: list = []
    for i, expand, *nones in steps[0][1]:
        if expand:
            return None
        take += [None] * (nones[0] if nones else 0) + [i]
    return take + [None] * (steps[0][2] if len(steps[0]) > 2 else 0)


def general(name: str, chain: list, *, one: bool, passes_on: bool, lean: bool) -> Any:
    """A rule's callback the general way with Lark's own ``chain`` of wrappers (``lean``: one symbol placed
    inline), for a chain `_grammar.rule_spec` cannot describe, or for the plain parser of the tests."""
    base = _tree(name, statements=name.startswith("__start")) if name.startswith("_") else _node(name)
    for step in chain:
        base = step(base)
    if lean and one:
        return _placed_one(base, passes_on=passes_on)
    return _placed(base, passes_on=passes_on)


def wrap(step: Any, inner: Any) -> Any:
    """One step of a rule's chain, as Lark's LALR wrappers do it: ``("expand1",)`` gives back a lone child
    (a `?rule`); ``("filter", include, append_none)`` keeps the children ``include`` names ``(index, inline
    its children?, Nones before it)`` and adds placeholders' Nones; ``("filter", include)`` the same with no
    Nones (Lark without placeholders)."""
    if step[0] == "expand1":
        def expand1(children: list) -> Any:
            return children[0] if len(children) == 1 else inner(children)
        return expand1
    include = [tuple(item) for item in step[1]]
    append_none = step[2] if len(step) > 2 else 0
    if len(step) == 2:
        include = [(i, expand, 0) for i, expand in include]

    def child_filter(children: list) -> Any:
        filtered: list = []
        for i, expand, nones in include:
            if nones:
                filtered += [None] * nones
            if not expand:
                filtered.append(children[i])
            elif filtered:
                filtered += children[i].children
            else:  # as Lark: the inlined list itself, which a left-recursive rule goes on filling
                filtered = children[i].children
        if append_none:
            filtered += [None] * append_none
        return inner(filtered)
    return child_filter


def _built(name: str, take: list) -> Any:
    """`_placed`, Lark's child filter (as ``take`` says) and `_node`'s build, in one call.

    `Pos(_first(children), _last(children))` is written out inline: a file makes one such node per rule
    it reduces, and the three calls cost `check` 2 % of its instructions (41.91 G against 42.77 G for the
    generated 10,000 cases), which `check`'s target against PyYAML cannot spare."""
    def callback(children: list) -> Built:
        pos = _new(Pos)
        pos.line = pos.c_line = pos.column = pos.c_column = None
        pos.end_line = pos.c_end_line = pos.end_column = pos.c_end_column = None
        pos.empty = True
        for child in children:  # `_first` (the exact types first: `isinstance` only for others)
            kind = type(child)
            if kind is Token or (kind is not Built and isinstance(child, str)):
                pos.line = pos.c_line = child.line
                pos.column = pos.c_column = child.column
                pos.empty = False
                break
            if (kind is Built or isinstance(child, Tree)) and not child._meta.empty:  # type: ignore[union-attr]
                meta: Any = child._meta
                pos.line = pos.c_line = meta.c_line
                pos.column = pos.c_column = meta.c_column
                pos.empty = False
                break
        for child in reversed(children):  # `_last`
            kind = type(child)
            if kind is Token or (kind is not Built and isinstance(child, str)):
                pos.end_line = pos.c_end_line = child.end_line
                pos.end_column = pos.c_end_column = child.end_column
                pos.empty = False
                break
            if (kind is Built or isinstance(child, Tree)) and not child._meta.empty:  # type: ignore[union-attr]
                meta = child._meta
                pos.end_line = pos.c_end_line = meta.c_end_line
                pos.end_column = pos.c_end_column = meta.c_end_column
                pos.empty = False
                break
        values: list = []
        for i in take:
            if i is None:
                values.append(None)
            else:
                child = children[i]
                values.append(child.value if type(child) is Built else child)
        node = _new(Built)  # `Built(value, pos)`, without the call
        node._meta = pos
        node.value = getattr(BUILDER.current, name)(pos, values)
        return node
    return callback


_PENDING: list[Any] = [None, None]
"""[position of the rule being reduced, the node built for it]: reductions never nest."""


def _first(children: list) -> tuple | None:
    for child in children:
        if isinstance(child, str):
            return child.line, child.column
        if isinstance(child, Tree):
            meta: Any = child._meta
            if not meta.empty:
                return meta.c_line, meta.c_column
    return None


def _last(children: list) -> tuple | None:
    for child in reversed(children):
        if isinstance(child, str):
            return child.end_line, child.end_column
        if isinstance(child, Tree):
            meta: Any = child._meta
            if not meta.empty:
                return meta.c_end_line, meta.c_end_column
    return None


def _placed(inner: Any, *, passes_on: bool) -> Any:
    def callback(children: list) -> Any:
        if passes_on and len(children) == 1 and type(children[0]) is Built:
            return children[0]  # `?rule` of one built child: Lark passes it on, its position unchanged
        first, last = _first(children), _last(children)
        _PENDING[0] = Pos(first, last)
        result = inner(children)
        if result is not _PENDING[1] and isinstance(result, Tree):
            _widen(result._meta, first, last)  # type: ignore[arg-type]  # a ?rule passed its child on: it now spans the brackets too
        _PENDING[1] = None
        return result
    return callback


_new = object.__new__


def _placed_one(inner: Any, *, passes_on: bool) -> Any:
    """`_placed` for a rule of one symbol: its position is its child's, taken inline."""
    def callback(children: list) -> Any:
        meta: Any
        child = children[0]
        if passes_on and type(child) is Built:
            return child
        pos = _new(Pos)
        kind = type(child)
        if kind is Token or (kind is not Built and isinstance(child, str)):  # (exact types first, as in `_built`)
            pos.line = pos.c_line = child.line
            pos.column = pos.c_column = child.column
            pos.end_line = pos.c_end_line = child.end_line
            pos.end_column = pos.c_end_column = child.end_column
            pos.empty = False
        elif (kind is Built or isinstance(child, Tree)) and not child._meta.empty:  # type: ignore[union-attr]
            meta = child._meta
            pos.line = pos.c_line = meta.c_line
            pos.column = pos.c_column = meta.c_column
            pos.end_line = pos.c_end_line = meta.c_end_line
            pos.end_column = pos.c_end_column = meta.c_end_column
            pos.empty = False
        else:
            pos.line = pos.c_line = pos.column = pos.c_column = None
            pos.end_line = pos.c_end_line = pos.end_column = pos.c_end_column = None
            pos.empty = True
        _PENDING[0] = pos
        result = inner(children)
        if result is not _PENDING[1] and isinstance(result, Tree) and not pos.empty:
            _widen(result._meta, (pos.line, pos.column), (pos.end_line, pos.end_column))  # type: ignore[arg-type]
        _PENDING[1] = None
        return result
    return callback


def _widen(meta: Pos, first: tuple | None, last: tuple | None) -> None:
    if first is not None:
        if meta.line is None:
            meta.line, meta.column = first
        meta.c_line, meta.c_column = first
        meta.empty = False
    if last is not None:
        if meta.end_line is None:
            meta.end_line, meta.end_column = last
        meta.c_end_line, meta.c_end_column = last
        meta.empty = False


def _node(name: str) -> Any:
    def build(children: list) -> Built:
        meta = _PENDING[0]
        values = [c.value if type(c) is Built else c for c in children]
        node = _PENDING[1] = Built(getattr(BUILDER.current, name)(meta, values), meta)
        return node
    return build


def _tree(name: str, *, statements: bool) -> Any:
    """A `_rule` Lark inlines into its parent; for the statement list, whole statements' values.

    When the parse has a ``sink`` (`ToAst.sink`), each whole statement is handed to it as
    soon as it is reduced into the statement list, and the list stays empty: what the
    sink drops (a compiled case's AST) is freed before the next statement is read.
    """
    def build(children: list) -> Tree:
        meta = _PENDING[0]
        if statements:
            i = len(children) - 1
            while i >= 0 and type(children[i]) is Built:
                i -= 1
            done = [c.value for c in children[i + 1:]]  # positions of whole statements are no longer needed
            sink = BUILDER.current.sink
            if sink is None:
                children[i + 1:] = done
            else:  # each whole statement goes on at once (to be grouped, even compiled) and is not kept here
                del children[i + 1:]
                for value in done:
                    sink(value)
        tree = _PENDING[1] = Tree(name, children, meta)
        return tree
    return build
