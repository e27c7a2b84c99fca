"""Lark parse tree -> AST statements.

One method per grammar rule, named like the rule and the AST class it
builds (DESIGN rule 2). Nodes are built with `_ast.make` (no validation): the grammar
already guarantees their shape, so validating again would only cost time.
Problems found while decoding tokens (a bad escape in a string) are
collected in `diagnostics` instead of raised, so one parse reports them all.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from lark import Token, Tree

from . import _ast as a
from ._diagnostics import Diagnostic, error, warning

_SUSPICIOUS_WORDS = {"True": "true", "False": "false", "None": "null", "NULL": "null"}
_ESCAPE_OR_QUOTE = re.compile(r'\\[\s\S]|"')


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


class ToAst:
    """Builds AST statements; one instance per parse (it knows the file name).

    `transform` walks the tree bottom-up with an explicit stack (no
    recursion, however deep the input) and calls the method named like
    each rule with the rule's position info and its transformed children.
    """

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.diagnostics: list[Diagnostic] = []

    def transform(self, root: Tree) -> Any:
        order, stack = [], [root]
        while stack:
            tree = stack.pop()
            order.append(tree)
            stack.extend(c for c in tree.children if isinstance(c, Tree))
        done: dict[int, Any] = {}
        methods: dict[str, Any] = {}
        for tree in reversed(order):
            method = methods.get(tree.data)
            if method is None:
                method = methods[tree.data] = getattr(self, tree.data)
            children = [done.pop(id(c)) if isinstance(c, Tree) else c for c in tree.children]
            done[id(tree)] = method(tree.meta, children)
        return done[id(root)]

    # ---- helpers ------------------------------------------------------------
    def _span(self, meta: Any) -> a.Span:
        return a.make(a.Span, file=self.filename, line=meta.line, column=meta.column,
                      end_line=meta.end_line, end_column=meta.end_column)

    def _tok_span(self, tok: Token) -> a.Span:
        return a.make(a.Span, file=self.filename, line=tok.line, column=tok.column,
                      end_line=tok.end_line, end_column=tok.end_column)

    def _node(self, cls: type, meta: Any, **fields: Any) -> Any:
        return a.make(cls, span=self._span(meta), **fields)

    def _decode(self, tok: Token) -> str:
        text = str(tok)
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
        if not isinstance(tok, Token):
            return tok
        span = self._tok_span(tok)
        kind = tok.type
        if kind in ("STRING", "LONG_STRING"):
            return self.string_token(tok)
        if kind == "PLACEHOLDER":
            return a.make(a.Placeholder, span=span, name=str(tok)[1:])
        if kind == "NUMBER":
            raw = str(tok)
            value: int | float = int(raw) if re.fullmatch(r"-?\d+", raw) else float(raw)
            return a.make(a.Number, span=span, value=value, raw=raw)
        if kind in ("TRUE", "FALSE", "NULL"):
            return a.make(a.Constant, span=span, value={"TRUE": True, "FALSE": False}.get(kind))
        if str(tok) in _SUSPICIOUS_WORDS:
            self.diagnostics.append(warning(
                "W301", f"bare word `{tok}` is the string \"{tok}\" here", span,
                help=f"write `{_SUSPICIOUS_WORDS[str(tok)]}` for the literal, or quote it",
            ))
        return a.make(a.Word, span=span, value=str(tok))

    def name_of(self, tok: Token) -> str:
        return self._decode(tok) if tok.type == "STRING" else str(tok)

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
        return self._node(a.OneOfPattern, meta, values=tuple(x for x in c if x is not None))

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
        return a.make(a.Duration, span=self._tok_span(tok), amount=int(m[1]), unit=m[2])

    # ---- expressions --------------------------------------------------------
    def expectation(self, meta: Any, c: list) -> a.Expectation:
        return self._node(a.Expectation, meta, expr=c[0], fallbacks=tuple(c[1:]))

    def fallback(self, meta: Any, c: list) -> a.Fallback:
        return self._node(a.Fallback, meta, expr=c[0], credit=c[1])

    def or_expr(self, meta: Any, c: list) -> a.OrExpr:
        return self._node(a.OrExpr, meta, items=tuple(c))

    def and_expr(self, meta: Any, c: list) -> a.AndExpr:
        return self._node(a.AndExpr, meta, items=tuple(c))

    def negation(self, meta: Any, c: list) -> a.Negation:
        return self._node(a.Negation, meta, expr=c[0])

    # ---- call predicates ----------------------------------------------------
    def step(self, meta: Any, c: list) -> a.Step:
        return self._node(a.Step, meta, tool=c[0], args=c[1])

    def any_step(self, meta: Any, c: list) -> a.Step:
        return self._node(a.Step, meta, tool=None, args=None)

    def called(self, meta: Any, c: list) -> Any:
        *steps, count = c
        if len(steps) > 1:
            return self._node(a.CalledSequence, meta, steps=tuple(steps), count=count)
        step = steps[0]
        if step.tool is None:
            return self._node(a.CalledAny, meta, count=count)
        return self._node(a.Called, meta, tool=step.tool, args=step.args, count=count)

    def calls_are(self, meta: Any, c: list) -> a.CallsAre:
        return self._node(a.CallsAre, meta, steps=tuple(c))

    def only_called(self, meta: Any, c: list) -> a.OnlyCalled:
        return self._node(a.OnlyCalled, meta, tools=tuple(c))

    def first_call(self, meta: Any, c: list) -> a.FirstCall:
        return self._node(a.FirstCall, meta, tool=c[0], args=c[1])

    def last_call(self, meta: Any, c: list) -> a.LastCall:
        return self._node(a.LastCall, meta, tool=c[0], args=c[1])

    def every_call(self, meta: Any, c: list) -> a.EveryCall:
        return self._node(a.EveryCall, meta, tool=c[0], args=c[1])

    def no_tool_calls(self, meta: Any, c: list) -> a.NoToolCalls:
        return self._node(a.NoToolCalls, meta)

    def no_error(self, meta: Any, c: list) -> a.NoError:
        return self._node(a.NoError, meta)

    def _count(self, meta: Any, form: str, c: list) -> a.Count:
        return self._node(a.Count, meta, form=form, n=c[0] if c else None, m=c[1] if len(c) > 1 else None)

    def once(self, meta: Any, c: list) -> a.Count:
        return self._count(meta, "once", c)

    def twice(self, meta: Any, c: list) -> a.Count:
        return self._count(meta, "twice", c)

    def times(self, meta: Any, c: list) -> a.Count:
        return self._count(meta, "times", c)

    def at_least_times(self, meta: Any, c: list) -> a.Count:
        return self._count(meta, "at least", c)

    def at_most_times(self, meta: Any, c: list) -> a.Count:
        return self._count(meta, "at most", c)

    def between_times(self, meta: Any, c: list) -> a.Count:
        return self._count(meta, "between", c)

    # ---- final-answer and other predicates ----------------------------------
    def text_contains(self, meta: Any, c: list) -> a.TextContains:
        return self._node(a.TextContains, meta, text=c[0], ignore_case=bool(c[1]))

    def text_is(self, meta: Any, c: list) -> a.TextIs:
        return self._node(a.TextIs, meta, text=c[0], ignore_case=bool(c[1]))

    def text_empty(self, meta: Any, c: list) -> a.TextEmpty:
        return self._node(a.TextEmpty, meta)

    def text_starts_with(self, meta: Any, c: list) -> a.TextStartsWith:
        return self._node(a.TextStartsWith, meta, text=c[0], ignore_case=bool(c[1]))

    def text_ends_with(self, meta: Any, c: list) -> a.TextEndsWith:
        return self._node(a.TextEndsWith, meta, text=c[0], ignore_case=bool(c[1]))

    def text_matches(self, meta: Any, c: list) -> a.TextMatches:
        return self._node(a.TextMatches, meta, regex=self._regex(c[0]))

    def number_is(self, meta: Any, c: list) -> a.NumberIs:
        return self._node(a.NumberIs, meta, value=c[0], within=c[1])

    def number_compare(self, meta: Any, c: list) -> a.NumberCompare:
        return self._node(a.NumberCompare, meta, op=c[0], value=c[1])

    def number_between(self, meta: Any, c: list) -> a.NumberBetween:
        return self._node(a.NumberBetween, meta, low=c[0], high=c[1])

    def final_json(self, meta: Any, c: list) -> a.FinalJson:
        return self._node(a.FinalJson, meta, pattern=c[0])

    def tokens_at_most(self, meta: Any, c: list) -> a.TokensAtMost:
        return self._node(a.TokensAtMost, meta, limit=c[0])

    def duration_at_most(self, meta: Any, c: list) -> a.DurationAtMost:
        return self._node(a.DurationAtMost, meta, limit=self._duration(c[0]))

    def judge(self, meta: Any, c: list) -> a.Judge:
        return self._node(a.Judge, meta, rubric=c[0], threshold=c[1])

    def custom_predicate(self, meta: Any, c: list) -> a.CustomPredicate:
        entries = tuple(x for x in c[1:] if isinstance(x, a.Entry))
        self._unique_keys(entries)
        return self._node(a.CustomPredicate, meta, name=c[0], args=entries)

    # ---- statements -----------------------------------------------------------
    def suite_stmt(self, meta: Any, c: list) -> a.SuiteStmt:
        return self._node(a.SuiteStmt, meta, name=c[0])

    def description_stmt(self, meta: Any, c: list) -> a.DescriptionStmt:
        return self._node(a.DescriptionStmt, meta, text=c[0])

    def use_stmt(self, meta: Any, c: list) -> a.UseStmt:
        return self._node(a.UseStmt, meta, path=self.string_token(c[0]))

    def tags_stmt(self, meta: Any, c: list) -> a.TagsStmt:
        return self._node(a.TagsStmt, meta, tags=tuple(c))

    def repeat_stmt(self, meta: Any, c: list) -> a.RepeatStmt:
        return self._node(a.RepeatStmt, meta, count=c[0])

    def pass_rate_stmt(self, meta: Any, c: list) -> a.PassRateStmt:
        return self._node(a.PassRateStmt, meta, rate=c[0])

    def timeout_stmt(self, meta: Any, c: list) -> a.TimeoutStmt:
        return self._node(a.TimeoutStmt, meta, duration=self._duration(c[0]))

    def system_stmt(self, meta: Any, c: list) -> a.SystemStmt:
        return self._node(a.SystemStmt, meta, text=c[0])

    def mode_stmt(self, meta: Any, c: list) -> a.ModeStmt:
        return self._node(a.ModeStmt, meta, mode=str(c[0]))

    def max_turns_stmt(self, meta: Any, c: list) -> a.MaxTurnsStmt:
        return self._node(a.MaxTurnsStmt, meta, count=c[0])

    def skip_stmt(self, meta: Any, c: list) -> a.SkipStmt:
        return self._node(a.SkipStmt, meta, reason=c[0])

    def xfail_stmt(self, meta: Any, c: list) -> a.XfailStmt:
        return self._node(a.XfailStmt, meta, reason=c[0])

    def case_stmt(self, meta: Any, c: list) -> a.CaseStmt:
        return self._node(a.CaseStmt, meta, name=c[0])

    def prompt_stmt(self, meta: Any, c: list) -> a.PromptStmt:
        return self._node(a.PromptStmt, meta, text=c[0])

    def setup_stmt(self, meta: Any, c: list) -> a.SetupStmt:
        return self._node(a.SetupStmt, meta, value=self.token_value(c[0]))

    def expect_stmt(self, meta: Any, c: list) -> a.ExpectStmt:
        return self._node(a.ExpectStmt, meta, expectation=c[0])

    def examples_stmt(self, meta: Any, c: list) -> a.ExamplesStmt:
        source = self.string_token(c[0]) if c[0] is not None else None
        return self._node(a.ExamplesStmt, meta, source=source, rows=())

    def table_row(self, meta: Any, c: list) -> a.TableRow:
        return self._node(a.TableRow, meta, cells=tuple(self.token_value(x) for x in c))

    def tool_stmt(self, meta: Any, c: list) -> a.ToolStmt:
        return self._node(a.ToolStmt, meta, name=c[0], description=c[1])

    def param_stmt(self, meta: Any, c: list) -> a.ParamStmt:
        name, optional, type_, description = c
        return self._node(a.ParamStmt, meta, name=name, optional=optional is not None,
                          type=type_, description=description)

    def simple_type(self, meta: Any, c: list) -> a.SimpleType:
        return self._node(a.SimpleType, meta, name=str(c[0]))

    def array_type(self, meta: Any, c: list) -> a.ArrayType:
        return self._node(a.ArrayType, meta, of=c[0])

    def one_of_type(self, meta: Any, c: list) -> a.OneOfType:
        return self._node(a.OneOfType, meta, values=tuple(x for x in c if x is not None))

    def when_stmt(self, meta: Any, c: list) -> a.WhenStmt:
        return self._node(a.WhenStmt, meta, args=c[0], action=c[1], text=c[2])

    def otherwise_stmt(self, meta: Any, c: list) -> a.OtherwiseStmt:
        return self._node(a.OtherwiseStmt, meta, action=c[0], text=c[1])

    def start(self, meta: Any, c: list) -> list:
        return c
