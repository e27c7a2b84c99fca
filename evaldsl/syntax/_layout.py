"""One statement laid out within a line width: continuation lines, broken brackets, comments.

The formatter (`_format.py`) cuts a file into statements; this module lays
out one of them. A statement is a list of segments: an `expect` is cut
before each top-level `then`, `and`, `or` and `else` (where the language
lets a line break stand), any other statement is one segment.

- **Continuation lines.** A segment goes on a line of its own, indented two
  spaces more than the statement, when the source broke the line before it,
  or when the statement is wider than the line width on one line: then at
  every `then` / `else`; if a line is still too wide, at every `or` too,
  then at every `and`.
- **Broken brackets.** A bracket (`< >`, `[ ]`, `one of [ ]`, a custom
  predicate's `( )`) is written one entry per line, each entry indented two
  spaces more than the line the bracket opens on and followed by a comma,
  the closing bracket back at that line's indentation, when: it holds a
  comment; or the source wrote it over several lines with a comma after
  its last entry (as black's "magic trailing comma"); or a line of the
  statement is wider than the width: the outermost unbroken brackets on
  the too-wide lines break, one nesting level a round, until every line
  fits or no bracket is left to break.
- **Comments** stay where they are: one inside a bracket stays inside it, at
  the end of its entry's line or on its own line before the next entry; one
  at the end of a line stays at the end of that line; one on a line of its
  own between continuation lines stays there. A comment with no such place
  (inside a parenthesised expression, or at the end of a line that is
  joined to the next) moves to its own line above the statement.

Every choice depends on the tree, the comments and where the source broke
lines, and the output breaks exactly where it says it does, so formatting
twice gives what formatting once gave.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from . import _ast as a
from ._unparse import _Unparser, name, render
from ._unparse_parens import PAREN_LEVEL

BODY_INDENT = 2
BRACKETS = (a.ObjectPattern, a.ObjectValue, a.ArrayPattern, a.ArrayValue, a.OneOfPattern,
            a.OneOfType, a.CustomPredicate, a.CalledAnyOrder, a.CallsAreAnyOrder)
_COMMENT = re.compile(r"#[^\n]*")
_WIDTH_STAGES = (("then", "else"), ("or",), ("and",))

Pos = tuple[int, int]


class Source:
    """The text a suite was parsed from, to ask where lines broke and commas stood."""

    def __init__(self, text: str) -> None:
        if text.startswith("\ufeff"):
            text = text[1:]  # as the parser does, so that spans point where they should
        self.text = text.replace("\r\n", "\n")
        self.lines = self.text.split("\n")
        self._starts = [0]
        for line in self.lines[:-1]:
            self._starts.append(self._starts[-1] + len(line) + 1)

    def offset(self, line: int, column: int) -> int:
        if not 1 <= line <= len(self._starts):
            return len(self.text)
        return self._starts[line - 1] + column - 1

    def trailing_comma(self, node: Any, children: tuple[Any, ...]) -> bool:
        """Whether the source wrote `node` over several lines with a comma after its last entry."""
        span, last = node.span, children[-1].span if children else None
        if span is None or last is None or span.line == span.end_line:
            return False
        between = self.text[self.offset(last.end_line, last.end_column):
                            self.offset(span.end_line, span.end_column)]
        return "," in _COMMENT.sub("", between)


@dataclass
class Seg:
    """A piece of a statement that may start a continuation line."""

    prefix: str
    node: Any
    kind: str = ""  # then / and / or / else: the word a line break may stand before
    suffix: str = ""
    parens: bool = False

    @property
    def lines(self) -> tuple[int, int]:
        span = self.node.span
        return (-1, -1) if span is None else (span.line, span.end_line)


def segments(stmt: Any) -> list[Seg]:
    """A statement cut where a continuation line may start."""
    if isinstance(stmt, (a.WhenStmt, a.OtherwiseStmt, a.GivenStmt)) and stmt.then:
        return _sequence(stmt)
    if not isinstance(stmt, a.ExpectStmt):
        return [Seg("", stmt)]
    segs = _chain(stmt.expectation.expr, "")
    segs[0].prefix = "expect " + segs[0].prefix
    for fallback in stmt.expectation.fallbacks:
        more = _chain(fallback.expr, "else")
        more[-1].suffix += " for " + render(fallback.credit)
        segs += more
    return segs


def _sequence(stmt: Any) -> list[Seg]:
    """An answer sequence (v2) cut before each `then`, as a call chain is: the line up to its
    first answer, then each later step (its verb left out only for a `returns` after a `returns`,
    as `unparse` writes it)."""
    span = stmt.span
    if span is not None and stmt.text.span is not None:
        span = a.span(span.file, span.line, span.column, stmt.text.span.end_line, stmt.text.span.end_column)
    out = [Seg("", a.replaced(stmt, then=(), span=span))]
    action = stmt.action
    for step in stmt.then:
        verb = "" if step.action == action == "returns" else step.action + " "
        out.append(Seg("then " + verb, step.text, "then"))
        action = step.action
    return out


def _chain(node: Any, kind: str) -> list[Seg]:
    word = f"{kind} " if kind else ""
    if isinstance(node, (a.OrExpr, a.AndExpr)):
        joint, level = ("or", 1) if isinstance(node, a.OrExpr) else ("and", 2)
        out: list[Seg] = []
        for i, item in enumerate(node.items):
            this = kind if i == 0 else joint
            if PAREN_LEVEL.get(type(item), 9) <= level:
                out.append(Seg(f"{this} " if this else "", item, this, parens=True))
            else:
                out += _chain(item, this)
        return out
    if isinstance(node, a.Negation) and _is_chain(node.expr):  # not called a then b
        out = _chain(node.expr, "")
        out[0].prefix, out[0].kind = f"{word}not {out[0].prefix}", kind
        return out
    if _is_chain(node):
        head = "called " if isinstance(node, a.CalledSequence) else "calls are "
        out = [Seg(word + head, node.steps[0], kind)]
        out += [Seg("then ", s, "then") for s in node.steps[1:]]
        count = getattr(node, "count", None)
        if count is not None:
            out[-1].suffix = " " + render(count)
        return out
    if isinstance(node, _WITH_OR) and isinstance(node.args, a.PatternOr) and getattr(node, "count", None) is None:
        first, *rest = node.args.patterns  # v2: `called T with <a: 1>` / `or <b: 2>`, a line each when wide
        return [Seg(word, a.replaced(node, args=first), kind)] + [Seg("or ", part, "or") for part in rest]
    return [Seg(word, node, kind)]


_WITH_OR = (a.Called, a.FirstCall, a.LastCall, a.EveryCall)


def _is_chain(node: Any) -> bool:
    return isinstance(node, (a.CalledSequence, a.CallsAre)) and len(node.steps) > 1


# ------------------------------------------------------------ brackets --


def _children(node: Any) -> tuple[Any, ...]:
    if isinstance(node, (a.ObjectPattern, a.ObjectValue)):
        return node.entries
    if isinstance(node, (a.ArrayPattern, a.ArrayValue)):
        return node.items
    if isinstance(node, (a.OneOfPattern, a.OneOfType)):
        return node.values
    if isinstance(node, (a.CalledAnyOrder, a.CallsAreAnyOrder)):  # v2: a step list, one step a line
        return node.steps
    return node.args  # CustomPredicate


def _ends(node: Any) -> tuple[str, str]:
    if isinstance(node, (a.ObjectPattern, a.ObjectValue)):
        return "<", ">"
    if isinstance(node, (a.OneOfPattern, a.OneOfType)):
        return "one of [", "]"
    if isinstance(node, a.CustomPredicate):
        return name(node.name) + "(", ")"
    if isinstance(node, a.CalledAnyOrder):
        return "called [", "] in any order" + ("" if node.count is None else " " + render(node.count))
    if isinstance(node, a.CallsAreAnyOrder):
        return "calls are [", "] in any order"
    return "[", "]"


def _walk(node: Any, parent: Any, out: list[tuple[Any, Any]]) -> None:
    """Every bracket below `node`, outermost first, with its nearest bracket ancestor."""
    if isinstance(node, BRACKETS):
        out.append((node, parent))
        parent = node
    if isinstance(node, a.Node):
        for key in type(node).model_fields:
            if key != "span":
                _walk(getattr(node, key), parent, out)
    elif isinstance(node, tuple):
        for item in node:
            _walk(item, parent, out)


def _start(node: Any) -> Pos:
    return (node.span.line, node.span.column) if node.span else (0, 0)


def _end(node: Any) -> Pos:
    return (node.span.end_line, node.span.end_column) if node.span else (0, 0)


@dataclass
class _Inside:
    """Comments placed inside one broken bracket."""

    head: str | None = None
    before: dict[int, list[str]] = field(default_factory=dict)
    after: dict[int, str] = field(default_factory=dict)
    tail: list[str] = field(default_factory=list)

    def place(self, node: Any, at: Pos, text: str) -> None:
        children = _children(node)
        earlier = [i for i, child in enumerate(children) if _start(child) < at]
        if not earlier:
            if self.head is None and at[0] == _start(node)[0]:
                self.head = text  # on the opening bracket's line
            elif not children:
                self.tail.append(text)
            else:
                self.before.setdefault(0, []).append(text)
            return
        k = earlier[-1]
        if _end(children[k]) <= at:  # after entry k
            if at[0] == _end(children[k])[0] and k not in self.after:
                self.after[k] = text
            elif k + 1 < len(children):
                self.before.setdefault(k + 1, []).append(text)
            else:
                self.tail.append(text)
        else:  # inside entry k, outside any bracket of its own: just above it
            self.before.setdefault(k, []).append(text)


# ----------------------------------------------------------- statement --


class Statement:
    """Lays out one statement at `indent`, within `width` columns."""

    def __init__(self, segs: list[Seg], indent: int, width: int, source: Source) -> None:
        self.segs, self.indent, self.width, self.source = segs, indent, width, source
        self.brackets: list[tuple[Any, Any]] = []
        for seg in segs:
            _walk(seg.node, None, self.brackets)
        self.parent = {id(node): parent for node, parent in self.brackets}
        self.broken: set[int] = set()
        self.inside: dict[int, _Inside] = {}

    def lay_out(self, comments: list[tuple[Pos, str]]) -> tuple[list[str], list[str]]:
        """The statement's lines, and the comments that must move above it."""
        loose = self._comments_in_brackets(comments)
        for node, _ in self.brackets:
            if self.source.trailing_comma(node, _children(node)):
                self._break(node)
        breaks = self._source_breaks() | self._width_breaks()
        chunks = self._chunks(breaks)
        while nodes := self._next_to_break(chunks, breaks):  # one nesting level a round
            for node in nodes:
                self._break(node)
            chunks = self._chunks(breaks)
        return self._join(chunks, breaks, loose)

    def _break(self, node: Any) -> None:
        while node is not None and id(node) not in self.broken:
            self.broken.add(id(node))
            node = self.parent[id(node)]

    def _comments_in_brackets(self, comments: list[tuple[Pos, str]]) -> list[tuple[Pos, str]]:
        loose = []
        for at, text in comments:
            holders = [n for n, _ in self.brackets if n.span and _start(n) < at < _end(n)]
            if not holders:
                loose.append((at, text))
                continue
            inner = holders[-1]  # brackets come outermost first
            self._break(inner)
            self.inside.setdefault(id(inner), _Inside()).place(inner, at, text)
        return loose

    def _source_breaks(self) -> set[int]:
        return {i for i in range(1, len(self.segs))
                if self.segs[i].lines[0] > self.segs[i - 1].lines[1] >= 1}

    def _width_breaks(self) -> set[int]:
        """Where the statement must break to fit, judged with no bracket broken (so the
        answer depends on the tree alone, and a second run finds the same)."""
        broken, self.broken = self.broken, set()
        breaks: set[int] = set()
        for kinds in _WIDTH_STAGES:
            if not self._too_wide(self._chunks(breaks), breaks):
                break
            breaks |= {i for i, seg in enumerate(self.segs) if i and seg.kind in kinds}
        self.broken = broken
        return breaks

    def _too_wide(self, chunks: list[str], breaks: set[int]) -> bool:
        return any(len(line) > self.width for line in self._text(chunks, breaks).split("\n"))

    def _chunks(self, breaks: set[int]) -> list[str]:
        """Each segment's text, rendered at the indentation of the line it starts on."""
        out: list[str] = []
        line_indent = self.indent
        for i, seg in enumerate(self.segs):
            if i in breaks:
                line_indent = self.indent + BODY_INDENT
            un = _Unparser(line_indent, self._hook)
            body = un(seg.node)
            text = seg.prefix + (f"({body})" if seg.parens else body) + seg.suffix
            out.append(text)
            last = text.rsplit("\n", 1)
            if len(last) > 1:
                line_indent = len(last[1]) - len(last[1].lstrip(" "))
        return out

    def _text(self, chunks: list[str], breaks: set[int]) -> str:
        pad = "\n" + " " * (self.indent + BODY_INDENT)
        text = " " * self.indent + chunks[0]
        for i, chunk in enumerate(chunks[1:], 1):
            text += (pad if i in breaks else " ") + chunk
        return text

    def _next_to_break(self, chunks: list[str], breaks: set[int]) -> list[Any]:
        """The outermost brackets not yet broken that stand on a line too wide."""
        wide = [line for line in self._text(chunks, breaks).split("\n") if len(line) > self.width]
        if not wide:
            return []
        found = []
        for node, parent in self.brackets:
            if id(node) in self.broken or not _children(node):
                continue
            if parent is not None and id(parent) not in self.broken:
                continue
            first = render(node, long_indent=0).split("\n")[0]
            if any(first in line for line in wide):
                found.append(node)
        return found

    def _hook(self, un: _Unparser, node: Any) -> str | None:
        if not isinstance(node, BRACKETS) or id(node) not in self.broken:
            return None
        indent = un.long_indent or 0
        pad, inner = " " * indent, " " * (indent + BODY_INDENT)
        child_un = un.at(indent + BODY_INDENT)
        notes = self.inside.get(id(node), _Inside())
        opener, closer = _ends(node)
        lines = [opener + (f"  {notes.head}" if notes.head else "")]
        for i, child in enumerate(_children(node)):
            lines += [inner + text for text in notes.before.get(i, [])]
            after = f"  {notes.after[i]}" if i in notes.after else ""
            lines.append(inner + child_un(child) + "," + after)
        lines += [inner + text for text in notes.tail]
        lines.append(pad + closer)
        return "\n".join(lines)

    def _join(self, chunks: list[str], breaks: set[int],
              comments: list[tuple[Pos, str]]) -> tuple[list[str], list[str]]:
        """Join the segments; place each comment outside brackets, or give it back."""
        after: dict[int, str] = {}
        before: dict[int, list[str]] = {}
        moved = []
        n = len(self.segs)
        for at, text in comments:
            k = max([i for i, seg in enumerate(self.segs) if seg.lines[0] <= at[0]] or [0])
            ends_line = k + 1 == n or k + 1 in breaks
            if at[0] == self.segs[k].lines[1] and ends_line and k not in after:
                after[k] = text
            elif at[0] > self.segs[k].lines[1] and k + 1 in breaks:
                before.setdefault(k + 1, []).append(text)
            else:
                moved.append(text)
        pad = " " * (self.indent + BODY_INDENT)
        lines = [" " * self.indent]
        for i, chunk in enumerate(chunks):
            if i in breaks:
                lines += [pad + text for text in before.get(i, [])]
                lines.append(pad)
            elif i:
                lines[-1] += " "
            first, *rest = chunk.split("\n")
            lines[-1] += first
            lines += rest
            if i in after:
                lines[-1] += "  " + after[i]
        return lines, moved
