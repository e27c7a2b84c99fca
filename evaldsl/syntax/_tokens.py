"""The parse's own token and tree node: what Lark's `Token` and `Tree` are to a parse, without importing Lark.

A file with no syntax error is parsed without Lark (`_fastparse`), so that
`evaldsl check` and a first `run` do not pay for importing it; the rule
callbacks (`_building`) and `ToAst` read these classes on both ways. A
`Token` is a `str` with its terminal's name and eight positions, as Lark's.
A file with a syntax error is lexed by Lark's own lexer, which makes Lark's
tokens, so a token is told from a built value by `is_token`, not by its
class alone.
"""

from __future__ import annotations

from typing import Any


class Token(str):
    """A terminal's text with its type and place (lines and columns from 1; positions are string indexes)."""

    __slots__ = ("type", "value", "start_pos", "line", "column", "end_line", "end_column", "end_pos")

    type: str
    value: str
    start_pos: int | None
    line: int | None
    column: int | None
    end_line: int | None
    end_column: int | None
    end_pos: int | None

    def __new__(cls, type: str, value: str, start_pos: int | None = None, line: int | None = None,  # noqa: A002
                column: int | None = None, end_line: int | None = None, end_column: int | None = None,
                end_pos: int | None = None) -> Token:
        self = str.__new__(cls, value)
        self.type, self.value, self.start_pos = type, value, start_pos
        self.line, self.column, self.end_pos = line, column, end_pos
        self.end_line, self.end_column = end_line, end_column
        return self

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"

    def __reduce__(self) -> tuple:
        return Token, (self.type, self.value, self.start_pos, self.line, self.column, self.end_line,
                       self.end_column, self.end_pos)


def is_token(value: Any) -> bool:
    """Whether ``value`` is a token (ours or Lark's), not a value a rule built (which may be a plain `str`)."""
    return type(value) is Token or (isinstance(value, str) and type(value) is not str and hasattr(value, "type"))


class Tree:
    """A rule's children kept as they are (a `_rule` its parent takes in, the statement list); `Built` for a
    rule turned into its value. ``_meta`` is its position (`_building.Pos`), as in Lark's `Tree`."""

    __slots__ = ("data", "children", "_meta")

    def __init__(self, data: str, children: list, meta: Any = None) -> None:
        self.data, self.children, self._meta = data, children, meta

    @property
    def meta(self) -> Any:
        return self._meta

    def __repr__(self) -> str:
        return f"Tree({self.data!r}, {self.children!r})"
