"""A reader for RON (Rusty Object Notation), the format of eval-core's case files.

Only reading is needed, and only the part of RON that case files use, so a
small recursive-descent reader does it (no well-kept RON package exists for
Python): structs (`Name(field: v)`, `(field: v)`), tuple structs
(`Some(v)`), unit variants (`NoToolCalls`, `None`), lists, maps, strings
(with escapes, raw strings), chars, numbers (with `_`, hex, octal, binary),
booleans, `()`, comments (`//`, nested `/* */`) and `#![enable(...)]`
attributes. Every value keeps the offset where it starts, so the converter
can point an error at the value it could not use. Nesting is bounded (64),
as in the `.evl` language.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 64


class RonError(ValueError):
    """A RON text that does not read; ``offset`` is where reading stopped."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass
class Struct:
    """``Name(field: value, ...)``, ``(field: value)`` or a unit variant ``Name``."""

    name: str | None
    fields: dict[str, Any] = field(default_factory=dict)
    items: list[Any] = field(default_factory=list)
    """Positional values of a tuple struct such as ``Some(3)``."""
    offset: int = 0
    field_offsets: dict[str, int] = field(default_factory=dict)


@dataclass
class Located:
    """A list or map with the offset where it starts (plain values carry none)."""

    value: Any
    offset: int
    item_offsets: list[int] = field(default_factory=list)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    # -- lexical -------------------------------------------------------------
    def skip(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                self._block_comment()
            else:
                return

    def _block_comment(self) -> None:
        start, level = self.pos, 0
        while self.pos < len(self.text):
            if self.text.startswith("/*", self.pos):
                level, self.pos = level + 1, self.pos + 2
            elif self.text.startswith("*/", self.pos):
                level, self.pos = level - 1, self.pos + 2
                if level == 0:
                    return
            else:
                self.pos += 1
        raise RonError("this comment is never closed (`*/` missing)", start)

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, ch: str, what: str) -> None:
        if self.peek() != ch:
            found = self.text[self.pos] if self.pos < len(self.text) else "the end of the file"
            raise RonError(f"expected {what}, found `{found}`" if found != "the end of the file"
                           else f"expected {what}, found the end of the file", self.pos)
        self.pos += 1

    def ident(self) -> str | None:
        self.skip()
        start = self.pos
        text = self.text
        if start < len(text) and (text[start].isalpha() or text[start] == "_"):
            end = start + 1
            while end < len(text) and (text[end].isalnum() or text[end] == "_"):
                end += 1
            self.pos = end
            return text[start:end]
        return None

    # -- values --------------------------------------------------------------
    def value(self) -> Any:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise RonError(f"values nest deeper than {MAX_DEPTH} levels", self.pos)
        try:
            return self._value()
        finally:
            self.depth -= 1

    def _value(self) -> Any:
        ch = self.peek()
        start = self.pos
        if ch == "[":
            return self._sequence(start)
        if ch == "{":
            return self._map(start)
        if ch == "(":
            return self._parens(None, start)
        if ch == '"':
            return self._string()
        if ch == "r" and self.text.startswith(("r\"", "r#"), self.pos):
            return self._raw_string()
        if ch == "'":
            return self._char()
        if ch and (ch.isdigit() or ch in "+-."):
            return self._number()
        name = self.ident()
        if name is None:
            found = ch or "the end of the file"
            raise RonError(f"expected a value, found `{found}`", start)
        if name in ("true", "false"):
            return name == "true"
        if name in ("inf", "NaN"):
            return float(name.replace("NaN", "nan"))
        if self.peek() == "(":
            return self._parens(name, start)
        return Struct(name, offset=start)

    def _sequence(self, start: int) -> Located:
        self.pos += 1
        items: list[Any] = []
        offsets: list[int] = []
        while self.peek() != "]":
            offsets.append(self.pos)
            items.append(self.value())
            if self.peek() != ",":
                break
            self.pos += 1
        self.expect("]", "`,` or `]` to continue or close the list")
        return Located(items, start, offsets)

    def _map(self, start: int) -> Located:
        self.pos += 1
        entries: dict[Any, Any] = {}
        offsets: list[int] = []
        while self.peek() != "}":
            key_at = self.pos
            key = _plain(self.value())
            if not isinstance(key, (str, int, float, bool)):
                raise RonError("a map key must be a string, number or boolean", key_at)
            self.expect(":", "`:` after the map key")
            offsets.append(key_at)
            entries[key] = self.value()
            if self.peek() != ",":
                break
            self.pos += 1
        self.expect("}", "`,` or `}` to continue or close the map")
        return Located(entries, start, offsets)

    def _parens(self, name: str | None, start: int) -> Any:
        self.pos += 1  # the `(`
        if self.peek() == ")":
            self.pos += 1
            return Struct(name, offset=start) if name else None  # `()` is unit: null
        node = Struct(name, offset=start)
        save = self.pos
        label = self.ident()
        if label is not None and self.peek() == ":":
            self.pos = save
            self._fields(node)
        elif label is not None and self.peek() not in ",)(":
            raise RonError(f"expected `:` after the field name `{label}`", self.pos)
        else:
            self.pos = save
            while self.peek() != ")":
                node.items.append(self.value())
                if self.peek() != ",":
                    break
                self.pos += 1
        self.expect(")", "`,` or `)` to continue or close " + (f"`{name}(...)`" if name else "the struct"))
        return node

    def _fields(self, node: Struct) -> None:
        while self.peek() != ")":
            at = self.pos
            label = self.ident()
            if label is None:
                raise RonError("expected a field name", self.pos)
            if label in node.fields:
                raise RonError(f"the field `{label}` is given twice", at)
            self.expect(":", f"`:` after the field name `{label}`")
            node.field_offsets[label] = at
            node.fields[label] = self.value()
            if self.peek() != ",":
                return
            self.pos += 1

    def _string(self) -> str:
        start = self.pos
        self.pos += 1
        out: list[str] = []
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == '"':
                self.pos += 1
                return "".join(out)
            if ch == "\\":
                out.append(self._escape())
                continue
            out.append(ch)
            self.pos += 1
        raise RonError("this string is never closed", start)

    def _escape(self) -> str:
        text, at = self.text, self.pos
        code = text[at + 1: at + 2]
        if code in _ESCAPES:
            self.pos += 2
            return _ESCAPES[code]
        if code == "\n":  # a line continuation: the break and the next line's indent vanish
            self.pos += 2
            while self.pos < len(text) and text[self.pos] in " \t\r\n":
                self.pos += 1
            return ""
        if code == "x" and at + 4 <= len(text):
            digits = text[at + 2: at + 4]
            self.pos += 4
            return chr(_hex(digits, at))
        if code == "u" and text[at + 2: at + 3] == "{":
            end = text.find("}", at)
            if end < 0:
                raise RonError("a `\\u{...}` escape is never closed", at)
            self.pos = end + 1
            return _char_of(_hex(text[at + 3: end], at), at)
        raise RonError(f"unknown escape `\\{code}` in a string", at)

    def _raw_string(self) -> str:
        start = self.pos
        self.pos += 1
        hashes = 0
        while self.text.startswith("#", self.pos):
            hashes, self.pos = hashes + 1, self.pos + 1
        if not self.text.startswith('"', self.pos):
            raise RonError("expected `\"` to open the raw string", self.pos)
        closing = '"' + "#" * hashes
        end = self.text.find(closing, self.pos + 1)
        if end < 0:
            raise RonError("this raw string is never closed", start)
        body = self.text[self.pos + 1: end]
        self.pos = end + len(closing)
        return body

    def _char(self) -> str:
        start = self.pos
        self.pos += 1
        if self.text.startswith("\\", self.pos):
            ch = self._escape()
        else:
            ch = self.text[self.pos: self.pos + 1]
            self.pos += 1
        if not self.text.startswith("'", self.pos) or len(ch) != 1:
            raise RonError("a character literal holds exactly one character, closed by `'`", start)
        self.pos += 1
        return ch

    def _number(self) -> int | float:
        start = self.pos
        text = self.text
        end = start
        while end < len(text) and (text[end].isalnum() or text[end] in "+-._"):
            if text[end] in "+-" and end > start and text[end - 1] not in "eE":
                break
            end += 1
        raw = text[start:end].replace("_", "")
        self.pos = end
        try:
            lowered = raw.lower().lstrip("+")
            body = lowered.lstrip("-")
            if body.startswith(("0x", "0o", "0b")):
                value = int(body, 0)
                return -value if lowered.startswith("-") else value
            if any(c in body for c in ".e") or body in ("inf", "nan"):
                return float(lowered)
            return int(lowered)
        except ValueError:
            raise RonError(f"`{text[start:end]}` is not a number", start) from None


def _hex(digits: str, at: int) -> int:
    try:
        return int(digits, 16)
    except ValueError:
        raise RonError(f"`{digits}` is not a hexadecimal number", at) from None


def _char_of(code: int, at: int) -> str:
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise RonError(f"`{code:x}` is not a Unicode scalar value", at)
    return chr(code)


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Located) else value


def read_ron(text: str) -> Any:
    """Read one RON value (the whole text); raises `RonError` with the offset of the problem."""
    reader = _Reader(text)
    while reader.peek() == "#" and reader.text.startswith("#![", reader.pos):
        end = reader.text.find("]", reader.pos)
        if end < 0:
            raise RonError("this attribute is never closed (`]` missing)", reader.pos)
        reader.pos = end + 1
    value = reader.value()
    if reader.peek():
        raise RonError("expected the end of the file after the value", reader.pos)
    return value
