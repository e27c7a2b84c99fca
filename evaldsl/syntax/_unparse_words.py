"""How one string, name or key is written in .evl text: the spelling under `unparse` (see `_unparse`).

Strings are JSON strings with non-ASCII text kept as it is, except the
characters that some tool on the way might take for a line break or that
UTF-8 cannot carry (C1 controls, U+2028, U+2029, lone surrogates): those
become `\\uXXXX` escapes. Long strings (`String.long`) come out as one-line
JSON strings here; the formatter asks for `\"\"\"` blocks through
`render(node, long_indent=...)`, which writes them with `long_block`.
Names are bare when they can be and quoted when they must be (a name that
is a keyword of the language, or has other characters).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

KEYWORDS = frozenset({
    "above", "absent", "and", "any", "are", "array", "at", "below", "between", "call",
    "called", "calls", "case", "contains", "description", "duration", "else", "empty", "ends",
    "error", "every", "examples", "expect", "fails", "false", "final", "first", "for", "from",
    "given", "ignoring", "is", "json", "judge", "last", "least", "matches", "max", "mode", "most", "no",
    "not", "null", "number", "of", "once", "one", "only", "or", "otherwise", "param", "pass",
    "prompt", "rate", "repeat", "returns", "setup", "simulated", "skip", "starts", "suite", "system",
    "tags", "text", "then", "timeout", "times", "tokens", "tool", "true", "turns", "twice",
    "use", "user", "when", "with", "within", "world", "xfail",
    "arguments", "in", "loosely", "order", "tools", "valid",
})
"""Every quoted word of grammar/evl.lark (a test keeps the two in step)."""
QUOTED_WORDS = KEYWORDS - {"given", "simulated", "user", "world", "arguments", "in", "loosely", "order",
                           "tools", "valid"}
"""The keywords a name is quoted for. Version 2's words start a statement (or, `world`, a
predicate, where `world(` still calls a custom predicate) and never stand where a name or a
value does, so a version 1 file's tool, key or word `user` keeps its bare spelling in `fmt`."""

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_LONG_CHAR = re.compile('[\\\\\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]|"(?="")')
_SHORT_ESCAPES = {"\\": "\\\\", '"': '\\"', "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}


_encode_string: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]


def quote(value: str) -> str:
    """A one-line JSON string for `value`, with every character the lexer might mistake escaped."""
    # json's own string encoder: what json.dumps(value, ensure_ascii=False) gives, without building an encoder
    text = _encode_string(value) if type(value) is str else json.dumps(value, ensure_ascii=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _UNSAFE.search(text) else text


def name(value: str) -> str:
    """A tool name, key or predicate name: bare when it can be, else a JSON string."""
    if value in QUOTED_WORDS or not NAME.fullmatch(value):
        return quote(value)
    return value


def key(value: str) -> str:
    """An argument key or param name: bare whenever it is a name (no keyword is expected
    where a key stands, so even `not` or `with` reads back as a key), else a JSON string."""
    return value if NAME.fullmatch(value) else quote(value)


def long_block(value: str, indent: int) -> str:
    """A `\"\"\"` block that the parser's dedent turns back into `value`.

    Content lines and the closing quotes stand at `indent` spaces. Escapes
    keep what the dedent would lose, and keep white space off line ends:
    when every non-blank line starts with white space, the first one's
    first character is escaped (`\\u0020`, `\\t`); a line of white space
    only is escaped whole; a trailing white-space character is escaped.
    Backslashes, control characters and any `"` that starts a `\"\"\"` run
    are escaped as in a JSON string.
    """
    lines = value.split("\n")
    solid = [ln for ln in lines if ln.strip()]
    lead = solid[0] if solid and all(ln[0] in " \t" for ln in solid) else None
    pad = " " * indent
    out = ['"""']
    for line in lines:
        body = _long_line(line, line == lead)
        out.append(pad + body if body else "")
    out.append(pad + '"""')
    return "\n".join(out)


def _long_line(line: str, escape_lead: bool) -> str:
    if not line:
        return ""
    if not line.strip():
        return "".join(_u_escape(ch) for ch in line)
    body = _LONG_CHAR.sub(lambda m: _long_escape(m.group()), line)
    if escape_lead:
        body = _u_escape(body[0]) + body[1:]
    if body[-1].isspace():
        body = body[:-1] + _u_escape(body[-1])
    return body


def _long_escape(ch: str) -> str:
    return _SHORT_ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def _u_escape(ch: str) -> str:
    return "\\t" if ch == "\t" else f"\\u{ord(ch):04x}"
