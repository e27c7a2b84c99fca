"""Build AST nodes as Lark reduces each rule: no parse tree of the file is ever kept.

Lark's LALR parser calls one callback per reduced rule. `install` gives
every rule a callback that computes the rule's position from its children
and calls the `ToAst` method named like the rule (`BUILDER.current`, set by
the parse in progress under the parser's lock), so a subtree lives only
until its parent is reduced. Lark's own ``transformer=`` option cannot pass
a rule's position to its method, and its position-propagating wrapper
builds a `Tree` and a `Meta` per rule; this does the same bookkeeping with
less (a third of the parse's time went there).

Positions follow Lark's ``propagate_positions`` rules exactly (the golden
spans depend on them): a node starts where its first positioned child
starts and ends where its last ends; a child's "container" position is
used, which for a `?rule` that passed its only child on (`(a or b)`) is
widened to the brackets around it.

Most rules take a shorter way to the same values and positions (`install`'s
``lean``): a rule built by a `ToAst` method whose Lark chain only drops
punctuation and adds placeholders' Nones gets one callback that does it all
(`_built`); another rule of one symbol is placed from its child inline
(`_placed_one`); a `?rule` of one symbol is marked so that the LALR loop
(`_reducing`) passes its child on without a call. A chain this does not
recognise (another Lark version's) goes the general way. `build_parser(fast=
False)` keeps the general way for every rule, for the property test that
compares the two (tests/properties/test_fast_parse_props.py).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from lark import Lark, Token, Tree

try:
    from lark.parse_tree_builder import ChildFilterLALR, ChildFilterLALR_NoPlaceholders, ExpandSingleChild
except ImportError:  # pragma: no cover - another Lark version: its chains go the general way
    ChildFilterLALR = ChildFilterLALR_NoPlaceholders = ExpandSingleChild = None  # type: ignore[misc,assignment]


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
    """A subtree already turned into its AST value (`value`); a `Tree` only for Lark's parser stack."""

    def __init__(self, value: Any, meta: Pos) -> None:
        self.data, self.children = "built", []
        self._meta = meta  # type: ignore[assignment]  # a Pos stands in for Lark's Meta
        self.value = value


class Builder:
    """Whose rule methods build the parse in progress (`current`, set under the parser's lock)."""

    current: Any = None


BUILDER = Builder()


def install(parser: Lark, *, lean: bool = True) -> None:
    """Replace the rule callbacks of ``parser`` (built with ``propagate_positions=False``).

    With ``lean``, a rule built by a `ToAst` method whose Lark chain is at
    most a child filter that only drops and adds children gets one callback
    that does it all (`_built`), and another rule of one symbol takes its
    position straight from its child (`_placed_one`); without, every rule
    goes the general way (the same values and positions: the property tests
    compare the two). A callback marked
    ``passes_child`` (a `?rule` of one symbol, which Lark's `ExpandSingleChild`
    makes give back its one child, whatever it is) may be skipped by the
    parser's loop, the child left where it is (`_reducing`).
    """
    callbacks = parser._callbacks  # rule -> callback: the same table the LALR parser calls
    for rule, chain in parser._parse_tree_builder.rule_builders:
        name = str(rule.alias or rule.options.template_source or rule.origin.name)
        take = _plain_filter(chain, len(rule.expansion)) if lean and not name.startswith("_") else None
        if take is not None:
            callbacks[rule] = _built(name, take)
            continue
        if name.startswith("_"):
            base = _tree(name, statements=name.startswith("__start"))
        else:
            base = _node(name)
        for wrap in chain:  # Lark's child filter (drops punctuation, inlines _rules) and ?rule pass-through
            base = wrap(base)
        passes_on = bool(rule.options.expand1 and not rule.alias)
        if lean and len(rule.expansion) == 1:
            callbacks[rule] = callback = _placed_one(base, passes_on=passes_on)
            callback.passes_child = passes_on and chain == [ExpandSingleChild]  # type: ignore[attr-defined]
        else:
            callbacks[rule] = _placed(base, passes_on=passes_on)


def _plain_filter(chain: list, size: int) -> list | None:
    """Which child goes where (None: a placeholder's None) if ``chain`` is at most one of Lark's LALR child
    filters that inlines nothing; None for any other chain (a `?rule`'s pass-through, an inlined `_rule`)."""
    if not chain:
        return list(range(size))
    if len(chain) != 1 or not isinstance(chain[0], partial) or chain[0].keywords:
        return None
    func, args = chain[0].func, chain[0].args
    if func is ChildFilterLALR_NoPlaceholders and len(args) == 1:
        if any(expand for _, expand in args[0]):
            return None
        return [i for i, _ in args[0]]
    if func is ChildFilterLALR and len(args) == 2:
        take: list = []
        for i, expand, nones in args[0]:
            if expand:
                return None
            take += [None] * nones + [i]
        return take + [None] * args[1]
    return None


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
            if kind is Token or (kind is not Built and isinstance(child, Token)):
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
            if kind is Token or (kind is not Built and isinstance(child, Token)):
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
        node.data, node.children, node._meta = "built", [], pos  # type: ignore[assignment]
        node.value = getattr(BUILDER.current, name)(pos, values)
        return node
    return callback


_PENDING: list[Any] = [None, None]
"""[position of the rule being reduced, the node built for it]: reductions never nest."""


def _first(children: list) -> tuple | None:
    for child in children:
        if isinstance(child, Token):
            return child.line, child.column
        if isinstance(child, Tree):
            meta: Any = child._meta
            if not meta.empty:
                return meta.c_line, meta.c_column
    return None


def _last(children: list) -> tuple | None:
    for child in reversed(children):
        if isinstance(child, Token):
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
        if kind is Token or (kind is not Built and isinstance(child, Token)):  # (exact types first, as in `_built`)
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
