"""Lark rules -> AST statements, built while parsing.

One method per grammar rule, named like the rule and the AST class it
builds (DESIGN rule 2). Nodes are built with `_ast.make` (no validation): the grammar
already guarantees their shape, so validating again would only cost time.
Problems found while decoding tokens (a bad escape in a string) are
collected in `diagnostics` instead of raised, so one parse reports them all.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from typing import Any

from . import _ast as a
from ._diagnostics import Diagnostic, error, warning
from ._tokens import Token, is_token
from ._transform_rules import RuleMethods

MAX_DIGITS = 4300
"""The longest whole number read, in digits: Python's own limit for turning text into an int."""
_SUSPICIOUS_WORDS = {"True": "true", "False": "false", "None": "null", "NULL": "null"}
_ESCAPE_OR_QUOTE = re.compile(r'\\[\s\S]|"')


def token_span(tok: Token, filename: str) -> a.Span:
    """Where a token stands."""
    return a.span(filename, tok.line, tok.column, tok.end_line, tok.end_column)


def _long_string_body(raw: str) -> str:
    """Dedent a long string's raw body (before escapes are decoded).

    The common leading white space is a common *prefix* (as in textwrap), so
    tabs and spaces are never mixed up; blank means spaces and tabs only.
    """
    lines = raw.split("\n")
    if len(lines) > 1 and not lines[0].strip(" \t"):
        lines = lines[1:]
    if len(lines) > 1 and not lines[-1].strip(" \t"):
        lines = lines[:-1]
    indents = [ln[: len(ln) - len(ln.lstrip(" \t"))] for ln in lines if ln.strip(" \t")]
    cut = len(os.path.commonprefix(indents)) if indents else 0
    return "\n".join(ln[cut:] if ln.strip(" \t") else "" for ln in lines)


def _escape_quotes(body: str) -> str:
    return _ESCAPE_OR_QUOTE.sub(lambda m: '\\"' if m.group() == '"' else m.group(), body)


class ToAst(RuleMethods):
    """Builds AST statements; one instance per parse (it knows the file name).

    The parser calls the method named like each rule as it reduces the rule
    (`_grammar.Built`), with the rule's position info and its built
    children: no parse tree of the file is ever kept.
    """

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.diagnostics: list[Diagnostic] = []
        self.sink: Any = None
        """Called with each whole statement as it is parsed (see `_building`); None keeps them in the tree."""

    # ---- helpers ------------------------------------------------------------
    def _span(self, meta: Any) -> a.Span:
        return a.span(self.filename, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok_span(self, tok: Token) -> a.Span:
        return token_span(tok, self.filename)

    def _node(self, cls: type, meta: Any, **fields: Any) -> Any:
        return a.make_spanned(cls, fields, self.filename, meta.line, meta.column, meta.end_line, meta.end_column)

    def _decode(self, tok: Token) -> str:
        text = str(tok)
        if tok.type == "STRING" and "\\" not in text:
            return text[1:-1]  # no escapes: what json.loads would return, without its cost
        try:
            if tok.type == "LONG_STRING":
                return json.loads('"' + _escape_quotes(_long_string_body(text[3:-3])) + '"', strict=False)
            return json.loads(text, strict=False)  # a raw tab in a string is kept, not an error
        except json.JSONDecodeError as exc:
            self.diagnostics.append(error(
                "E103", "invalid escape in string", self._tok_span(tok),
                label=exc.msg.lower(), help='strings use JSON escapes: \\n \\t \\" \\\\ \\uXXXX',
            ))
            return text.strip('"')

    def string_token(self, tok: Token) -> a.String:
        return a.make(a.String,
            span=self._tok_span(tok), value=self._decode(tok), long=tok.type == "LONG_STRING"
        )

    def token_value(self, tok: Any) -> Any:
        """Turn a raw token into the value node it stands for."""
        if not is_token(tok):
            return tok
        span = self._tok_span(tok)
        kind = tok.type
        if kind in ("STRING", "LONG_STRING"):
            return self.string_token(tok)
        if kind == "PLACEHOLDER":
            return a.make(a.Placeholder, span=span, name=str(tok)[1:])
        if kind == "NUMBER":
            raw = str(tok)
            value: int | float = self._int(raw, span) if re.fullmatch(r"-?\d+", raw) else float(raw)
            if value in (math.inf, -math.inf):
                self._too_large(raw, span, "it is beyond the range of a floating-point number")
                value = 0
            return a.make(a.Number, span=span, value=value, raw=raw)
        if kind in ("TRUE", "FALSE", "NULL"):
            return a.make(a.Constant, span=span, value={"TRUE": True, "FALSE": False}.get(kind))
        if str(tok) in _SUSPICIOUS_WORDS:
            self.diagnostics.append(warning(
                "W301", f"bare word `{tok}` is the string \"{tok}\" here", span,
                help=f"write `{_SUSPICIOUS_WORDS[str(tok)]}` for the literal, or quote it",
            ))
        return a.make(a.Word, span=span, value=sys.intern(str(tok)))  # a word recurs from case to case

    def name_of(self, tok: Token) -> str:
        return self._decode(tok) if tok.type == "STRING" else sys.intern(str(tok))  # keys, tool names

    # ---- terminals wrapped in rules -----------------------------------------
    def literal(self, meta: Any, c: list) -> Any:
        return self.token_value(c[0])

    def placeholder(self, meta: Any, c: list) -> Any:
        return self.token_value(c[0])

    num = literal
    text = literal
    tag = literal

    def key(self, meta: Any, c: list) -> str:
        return self.name_of(c[0])

    name = key

    def tool_ref(self, meta: Any, c: list) -> Any:
        tok = c[0]
        if tok.type == "PLACEHOLDER":
            return self.token_value(tok)
        return a.make(a.ToolName, span=self._tok_span(tok), name=self.name_of(tok))

    def ignoring_case(self, meta: Any, c: list) -> bool:
        return True

    def compare_op(self, meta: Any, c: list) -> str:
        return " ".join(str(t) for t in c)

    def result_kind(self, meta: Any, c: list) -> str:
        return str(c[0])

    def args(self, meta: Any, c: list) -> Any:
        return self.token_value(c[0])

    # ---- v2: precise matching -------------------------------------------------
    def call_args(self, meta: Any, c: list) -> Any:
        """`with P or Q ...`: the patterns after `with`, an `or` of them when there are several."""
        if len(c) == 1:
            return c[0]
        return self._node(a.PatternOr, meta, patterns=tuple(c))

    def call_and(self, meta: Any, c: list) -> Any:
        if len(c) == 1:
            return self.token_value(c[0])
        return self._node(a.PatternAnd, meta, patterns=tuple(self.token_value(x) for x in c))

    def only_pattern(self, meta: Any, c: list) -> a.OnlyPattern:
        inner = c[0]
        if not isinstance(inner, a.Node) or isinstance(inner, (a.String, a.Word, a.Number, a.Constant)):
            inner = a.make(a.EqualsPattern, span=getattr(inner, "span", None), value=self.token_value(inner))
        return self._node(a.OnlyPattern, meta, pattern=inner)

    def only_word(self, meta: Any, c: list) -> a.Word:
        """`only` where a value stands, not before an object pattern: the word "only", as in version 1."""
        return self._node(a.Word, meta, value="only")

    def loosely_pattern(self, meta: Any, c: list) -> a.LooselyPattern:
        return self._node(a.LooselyPattern, meta, value=self.token_value(c[0]))

    def step_list(self, meta: Any, c: list) -> tuple:
        return tuple(x for x in c if x is not None)

    def called_any_order(self, meta: Any, c: list) -> a.CalledAnyOrder:
        return self._node(a.CalledAnyOrder, meta, steps=c[0], count=c[1])

    def calls_are_any_order(self, meta: Any, c: list) -> a.CallsAreAnyOrder:
        return self._node(a.CallsAreAnyOrder, meta, steps=c[0])

    def valid_arguments(self, meta: Any, c: list) -> a.ValidArguments:
        return self._node(a.ValidArguments, meta)

    def valid_predicate(self, meta: Any, c: list) -> a.CustomPredicate:
        """A v1 custom predicate named `valid`: `valid(...)` still calls it."""
        return self.custom_predicate(meta, ["valid", *c])  # type: ignore[attr-defined]

    def tools_stmt(self, meta: Any, c: list) -> a.ToolsStmt:
        return self._node(a.ToolsStmt, meta, tools=tuple(c))

    # ---- values -------------------------------------------------------------
    def array_value(self, meta: Any, c: list) -> a.ArrayValue:
        return self._node(a.ArrayValue, meta, items=tuple(x for x in c if x is not None))

    def entry(self, meta: Any, c: list) -> a.Entry:
        return self._node(a.Entry, meta, key=c[0], value=c[1])

    def object_value(self, meta: Any, c: list) -> a.ObjectValue:
        entries = tuple(x for x in c if isinstance(x, a.Entry))
        self._unique_keys(entries)
        return self._node(a.ObjectValue, meta, entries=entries)

    def _unique_keys(self, entries: tuple) -> None:
        seen: dict[str, Any] = {}
        for entry in entries:
            if entry.key in seen:
                self.diagnostics.append(error(
                    "E105", f"key `{entry.key}` appears twice", entry.span,
                    label=f"first at column {seen[entry.key].span.column}",
                    help="combine the two: <k: P and Q> for patterns, or keep one"))
            else:
                seen[entry.key] = entry

    # ---- patterns -----------------------------------------------------------
    def equals_pattern(self, meta: Any, c: list) -> a.EqualsPattern:
        return self._node(a.EqualsPattern, meta, value=self.token_value(c[0]), ignore_case=bool(c[1]))

    def within_pattern(self, meta: Any, c: list) -> a.WithinPattern:
        return self._node(a.WithinPattern, meta, value=self.token_value(c[0]), tolerance=c[1])

    def key_pattern(self, meta: Any, c: list) -> a.KeyPattern:
        return self._node(a.KeyPattern, meta, key=c[0], pattern=c[1])

    def object_pattern(self, meta: Any, c: list) -> a.ObjectPattern:
        entries = tuple(x for x in c if isinstance(x, a.KeyPattern))
        self._unique_keys(entries)
        return self._node(a.ObjectPattern, meta, entries=entries)

    def array_pattern(self, meta: Any, c: list) -> a.ArrayPattern:
        return self._node(a.ArrayPattern, meta, items=tuple(x for x in c if x is not None))

    def any_pattern(self, meta: Any, c: list) -> a.AnyPattern:
        return self._node(a.AnyPattern, meta)

    def absent_pattern(self, meta: Any, c: list) -> a.AbsentPattern:
        return self._node(a.AbsentPattern, meta)

    def contains_pattern(self, meta: Any, c: list) -> a.ContainsPattern:
        return self._node(a.ContainsPattern, meta, pattern=c[0])

    def starts_with_pattern(self, meta: Any, c: list) -> a.StartsWithPattern:
        return self._node(a.StartsWithPattern, meta, text=c[0], ignore_case=bool(c[1]))

    def ends_with_pattern(self, meta: Any, c: list) -> a.EndsWithPattern:
        return self._node(a.EndsWithPattern, meta, text=c[0], ignore_case=bool(c[1]))

    def matches_pattern(self, meta: Any, c: list) -> a.MatchesPattern:
        return self._node(a.MatchesPattern, meta, regex=self._regex(c[0]))

    def one_of_pattern(self, meta: Any, c: list) -> a.OneOfPattern:
        return self._node(a.OneOfPattern, meta, values=tuple(self.token_value(x) for x in c if x is not None))

    def compare_pattern(self, meta: Any, c: list) -> a.ComparePattern:
        return self._node(a.ComparePattern, meta, op=c[0], value=c[1])

    def between_pattern(self, meta: Any, c: list) -> a.BetweenPattern:
        return self._node(a.BetweenPattern, meta, low=c[0], high=c[1])

    def pattern_negation(self, meta: Any, c: list) -> a.PatternNegation:
        return self._node(a.PatternNegation, meta, pattern=c[0])

    def pattern_and(self, meta: Any, c: list) -> a.PatternAnd:
        return self._node(a.PatternAnd, meta, patterns=tuple(c))

    def pattern_or(self, meta: Any, c: list) -> a.PatternOr:
        return self._node(a.PatternOr, meta, patterns=tuple(c))

    def _regex(self, tok: Token) -> a.Regex:
        text = str(tok)
        end = text.rindex("/")
        return a.make(a.Regex, span=self._tok_span(tok), pattern=text[1:end], flags=text[end + 1:])

    def _duration(self, tok: Token) -> a.Duration:
        m = re.fullmatch(r"(\d+)(ms|s|m|h)", str(tok))
        assert m is not None
        span = self._tok_span(tok)
        return a.make(a.Duration, span=span, amount=self._int(m[1], span), unit=m[2])

    def _int(self, raw: str, span: a.Span) -> int:
        """A whole number; one longer than Python converts (`MAX_DIGITS`) is an error, not a traceback."""
        digits = len(raw) - raw.startswith("-")
        if digits > MAX_DIGITS:
            self._too_large(raw, span, f"it has {digits:,} digits; the most a number may have is {MAX_DIGITS:,}")
            return 0
        return int(raw)

    def _too_large(self, raw: str, span: a.Span, why: str) -> None:
        shown = raw if len(raw) <= 20 else f"{raw[:10]}...{raw[-6:]}"
        self.diagnostics.append(error("E107", f"number `{shown}` is too large", span, label=why))

    def start(self, meta: Any, c: list) -> list:
        return c
