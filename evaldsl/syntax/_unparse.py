"""`unparse(node)`: the canonical one-line source text of any AST node.

This is the inverse of the parser for one node at a time. The compiler uses
it for expectation labels (`called calculator with <op: add>`), the
formatter for every statement line, so the output is exact and canonical:
object syntax always with `< >`, one space after `,` and `:`, numbers as
they were written (`Number.raw`), strings as JSON strings, names bare when
they can be and quoted when they must be (a name that is a keyword of the
language, or has other characters).

Parentheses are the fewest that re-parse to the same tree (`_unparse_parens`).
A tree the parser can never build (a `Word` whose text is a keyword) does not
round-trip, nor do `ExamplesStmt` rows (a table is several lines: see the
formatter).

How a string, name or key is spelled (escapes, `\"\"\"` blocks, when a name is
quoted) is `_unparse_words`; its names are importable from here too.

Each node class has one small render function, registered with `@_on`;
`unparse` is one dictionary look-up per node.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from . import _ast as a
from ._unparse_parens import call_args, only_operand, operand, pattern_operand, with_args
from ._unparse_words import KEYWORDS, NAME, QUOTED_WORDS, key, long_block, name, quote

_Method = Callable[["_Unparser", Any], str]
_METHODS: dict[type, _Method] = {}


def unparse(node: Any) -> str:
    """The canonical source text of an AST node, on one line.

    Args:
        node: any `evaldsl.syntax._ast` node but a `Suite` (a file is laid
            out by the formatter, `_format.format_suite`); `Case` and `Tool`
            give their header line; `ExamplesStmt` its `examples` line only.

    Raises:
        TypeError: when `node` is not an AST node.
    """
    return _ONE_LINE(node)


def render(node: Any, *, long_indent: int | None = None, hook: Hook | None = None) -> str:
    """Like `unparse`, but with long strings as `\"\"\"` blocks when `long_indent` is set.

    Args:
        node: any AST node.
        long_indent: the column (0-based) of the line the node starts on;
            long strings put their content lines and closing quotes two
            spaces further in. None renders them as one-line strings.
        hook: asked first about every node (see `_Unparser`).
    """
    if long_indent is None and hook is None:
        return _ONE_LINE(node)
    return _Unparser(long_indent, hook)(node)


def expectation_parts(node: a.Expectation, *, long_indent: int | None = None) -> list[str]:
    """An expectation cut before each `then` of its chain and each `else` (the formatter
    cuts finer, at `and` / `or` too: `_layout.segments`).

    The first part is the main expression up to its first `then` (the whole
    expression unless it is a `called ... then` or `calls are` chain); each
    further `then STEP` and each `else EXPR for N` is a part of its own.

    Args:
        node: the expectation.
        long_indent: as in `render`.
    """
    un = _Unparser(long_indent) if long_indent is not None else _ONE_LINE
    expr = node.expr
    if isinstance(expr, (a.CalledSequence, a.CallsAre)) and expr.steps:
        head = "called " if isinstance(expr, a.CalledSequence) else "calls are "
        parts = [head + un(expr.steps[0])] + ["then " + un(s) for s in expr.steps[1:]]
        count = getattr(expr, "count", None)
        if count is not None:
            parts[-1] += " " + un(count)
    else:
        parts = [un(expr)]
    return parts + [un(f) for f in node.fallbacks]


Hook = Callable[["_Unparser", Any], "str | None"]
"""A formatter's say over a node: its text, or None for the canonical one-line text."""


class _Unparser:
    """Renders nodes; `long_indent` says how to lay out long strings (None: one line).

    `long_indent` is the indentation of the line a node starts on; `hook`,
    when set, is asked first about every node (the formatter breaks long
    brackets over several lines this way).
    """

    __slots__ = ("hook", "long_indent")

    def __init__(self, long_indent: int | None, hook: Hook | None = None) -> None:
        self.long_indent = long_indent
        self.hook = hook

    def __call__(self, node: Any) -> str:
        if self.hook is not None and (text := self.hook(self, node)) is not None:
            return text
        method = _METHODS.get(type(node))
        if method is None:
            raise TypeError(f"cannot unparse {type(node).__name__}: not an .evl AST node")
        return method(self, node)

    def at(self, indent: int) -> _Unparser:
        """The same renderer for a node that starts a line indented by `indent`."""
        return _Unparser(indent, self.hook)

    def opt(self, prefix: str, node: Any) -> str:
        """`prefix + text` for an optional child, or nothing."""
        return "" if node is None else prefix + self(node)

    def join(self, nodes: Any, sep: str = ", ") -> str:
        return sep.join(self(n) for n in nodes)


_ONE_LINE = _Unparser(None)


def _on(*kinds: type) -> Callable[[_Method], _Method]:
    def register(fn: _Method) -> _Method:
        for kind in kinds:
            _METHODS[kind] = fn
        return fn

    return register


def _case(flag: bool) -> str:
    return " ignoring case" if flag else ""


# ---------------------------------------------------------------- values --


@_on(a.String)
def _string(un: _Unparser, n: a.String) -> str:
    if n.long and un.long_indent is not None:
        return long_block(n.value, un.long_indent + 2)
    return quote(n.value)


@_on(a.Word)
def _word(un: _Unparser, n: a.Word) -> str:
    return n.value if NAME.fullmatch(n.value) else quote(n.value)


_on(a.Number)(lambda un, n: n.raw)
_on(a.Constant)(lambda un, n: {True: "true", False: "false", None: "null"}[n.value])
_on(a.Placeholder)(lambda un, n: "$" + n.name)
_on(a.Entry)(lambda un, n: f"{key(n.key)}: {un(n.value)}")
_on(a.ArrayValue)(lambda un, n: f"[{un.join(n.items)}]")
_on(a.ObjectValue)(lambda un, n: f"<{un.join(n.entries)}>")
_on(a.Duration)(lambda un, n: f"{n.amount}{n.unit}")
_on(a.ToolName)(lambda un, n: name(n.name))
_on(a.Comment)(lambda un, n: n.text)


@_on(a.Regex)
def _regex(un: _Unparser, n: a.Regex) -> str:
    # A `/` not already escaped would end the regex early: escape it.
    pattern = re.sub(r"(?<!\\)((?:\\\\)*)/", r"\1\\/", n.pattern)
    return f"/{pattern}/{n.flags}"


# -------------------------------------------------------------- patterns --

_on(a.EqualsPattern)(lambda un, n: un(n.value) + _case(n.ignore_case))
_on(a.WithinPattern)(lambda un, n: f"{un(n.value)} within {un(n.tolerance)}")
_on(a.KeyPattern)(lambda un, n: f"{key(n.key)}: {un(n.pattern)}")
_on(a.ObjectPattern)(lambda un, n: f"<{un.join(n.entries)}>")
_on(a.ArrayPattern)(lambda un, n: f"[{un.join(n.items)}]")
_on(a.AnyPattern)(lambda un, n: "any")
_on(a.AbsentPattern)(lambda un, n: "absent")
_on(a.ContainsPattern)(lambda un, n: "contains " + pattern_operand(un, n.pattern, 2))
_on(a.StartsWithPattern)(lambda un, n: f"starts with {un(n.text)}{_case(n.ignore_case)}")
_on(a.EndsWithPattern)(lambda un, n: f"ends with {un(n.text)}{_case(n.ignore_case)}")
_on(a.MatchesPattern)(lambda un, n: "matches " + un(n.regex))
_on(a.OneOfPattern, a.OneOfType)(lambda un, n: f"one of [{un.join(n.values)}]")
_on(a.ComparePattern)(lambda un, n: f"{n.op} {un(n.value)}")
_on(a.BetweenPattern)(lambda un, n: f"between {un(n.low)} and {un(n.high)}")
_on(a.PatternNegation)(lambda un, n: "not " + pattern_operand(un, n.pattern, 2))
_on(a.PatternAnd)(lambda un, n: " and ".join(pattern_operand(un, x, 2) for x in n.patterns))
_on(a.PatternOr)(lambda un, n: " or ".join(pattern_operand(un, x, 1) for x in n.patterns))

# v2: precise matching
_on(a.LooselyPattern)(lambda un, n: un(n.value) + " loosely")
_on(a.OnlyPattern)(lambda un, n: "only " + only_operand(un, n.pattern))


# ------------------------------------------------------------ predicates --


@_on(a.Count)
def _count(un: _Unparser, n: a.Count) -> str:
    if n.form in ("once", "twice"):
        return n.form
    if n.form == "times":
        return f"{un(n.n)} times"
    if n.form == "between":
        return f"between {un(n.n)} and {un(n.m)} times"
    return f"{n.form} {un(n.n)} times"


@_on(a.Step)
def _step(un: _Unparser, n: a.Step) -> str:
    return ("any tool" if n.tool is None else un(n.tool)) + with_args(un, n.args)


_on(a.Called)(lambda un, n: f"called {un(n.tool)}{with_args(un, n.args)}{un.opt(' ', n.count)}")
_on(a.CalledAny)(lambda un, n: "called any tool" + un.opt(" ", n.count))
_on(a.CalledSequence)(lambda un, n: f"called {un.join(n.steps, ' then ')}{un.opt(' ', n.count)}")
_on(a.CallsAre)(lambda un, n: "calls are " + un.join(n.steps, " then "))
_on(a.OnlyCalled)(lambda un, n: "only called " + un.join(n.tools))
_on(a.FirstCall)(lambda un, n: f"first call {un(n.tool)}{with_args(un, n.args)}")
_on(a.LastCall)(lambda un, n: f"last call {un(n.tool)}{with_args(un, n.args)}")
_on(a.EveryCall)(lambda un, n: f"every call {un(n.tool)}{with_args(un, n.args)}")
_on(a.CalledAnyOrder)(lambda un, n: f"called [{un.join(n.steps)}] in any order{un.opt(' ', n.count)}")
_on(a.CallsAreAnyOrder)(lambda un, n: f"calls are [{un.join(n.steps)}] in any order")
_on(a.ValidArguments)(lambda un, n: "valid arguments")
_on(a.NoToolCalls)(lambda un, n: "no tool calls")
_on(a.NoError)(lambda un, n: "no error")
_on(a.TextContains)(lambda un, n: f"final text contains {un(n.text)}{_case(n.ignore_case)}")
_on(a.TextIs)(lambda un, n: f"final text is {un(n.text)}{_case(n.ignore_case)}")
_on(a.TextEmpty)(lambda un, n: "final text is empty")
_on(a.TextStartsWith)(lambda un, n: f"final text starts with {un(n.text)}{_case(n.ignore_case)}")
_on(a.TextEndsWith)(lambda un, n: f"final text ends with {un(n.text)}{_case(n.ignore_case)}")
_on(a.TextMatches)(lambda un, n: "final text matches " + un(n.regex))
_on(a.NumberIs)(lambda un, n: f"final number is {un(n.value)}{un.opt(' within ', n.within)}")
_on(a.NumberCompare)(lambda un, n: f"final number {n.op} {un(n.value)}")
_on(a.NumberBetween)(lambda un, n: f"final number between {un(n.low)} and {un(n.high)}")
_on(a.FinalJson)(lambda un, n: "final json " + pattern_operand(un, n.pattern, 2))
_on(a.TokensAtMost)(lambda un, n: "tokens at most " + un(n.limit))
_on(a.DurationAtMost)(lambda un, n: "duration at most " + un(n.limit))
_on(a.Judge)(lambda un, n: f"judge {un(n.rubric)}{un.opt(' at least ', n.threshold)}")
_on(a.CustomPredicate)(lambda un, n: f"{name(n.name)}({un.join(n.args)})")

_on(a.Negation)(lambda un, n: "not " + operand(un, n.expr, 2))
_on(a.AndExpr)(lambda un, n: " and ".join(operand(un, x, 2) for x in n.items))
_on(a.OrExpr)(lambda un, n: " or ".join(operand(un, x, 1) for x in n.items))
_on(a.Fallback)(lambda un, n: f"else {un(n.expr)} for {un(n.credit)}")
_on(a.Expectation)(lambda un, n: " ".join(expectation_parts(n, long_indent=un.long_indent)))


# ------------------------------------------------------------ statements --

_on(a.SuiteStmt)(lambda un, n: "suite " + un(n.name))
_on(a.DescriptionStmt)(lambda un, n: "description " + un(n.text))
_on(a.UseStmt)(lambda un, n: "use " + un(n.path))
_on(a.TagsStmt)(lambda un, n: "tags " + un.join(n.tags))
_on(a.RepeatStmt)(lambda un, n: "repeat " + un(n.count))
_on(a.PassRateStmt)(lambda un, n: "pass rate at least " + un(n.rate))
_on(a.TimeoutStmt)(lambda un, n: "timeout " + un(n.duration))
_on(a.SystemStmt)(lambda un, n: "system " + un(n.text))
_on(a.ModeStmt)(lambda un, n: "mode " + n.mode)
_on(a.MaxTurnsStmt)(lambda un, n: "max turns " + un(n.count))
_on(a.SkipStmt)(lambda un, n: "skip" + un.opt(" ", n.reason))
_on(a.XfailStmt)(lambda un, n: "xfail" + un.opt(" ", n.reason))
_on(a.CaseStmt, a.Case)(lambda un, n: "case " + un(n.name))
_on(a.PromptStmt)(lambda un, n: "prompt " + un(n.text))
_on(a.SetupStmt)(lambda un, n: "setup " + un(n.value))
_on(a.ExpectStmt)(lambda un, n: "expect " + un(n.expectation))
_on(a.TableRow)(lambda un, n: "| " + un.join(n.cells, " | ") + " |")
_on(a.ExamplesStmt)(lambda un, n: "examples" + un.opt(" from ", n.source))
_on(a.SimpleType)(lambda un, n: n.name)
_on(a.ArrayType)(lambda un, n: "array" + un.opt(" of ", n.of))
_on(a.ToolStmt, a.Tool)(lambda un, n: f"tool {un(n.name)}{un.opt(' ', n.description)}")
_on(a.WhenStmt)(lambda un, n: f"when {call_args(un, n.args)} {n.action} {un(n.text)}{_then(un, n)}")
_on(a.OtherwiseStmt)(lambda un, n: f"otherwise {n.action} {un(n.text)}{_then(un, n)}")

# v2: conversations, tool answers, worlds
_on(a.WorldState)(lambda un, n: "world " + pattern_operand(un, n.pattern, 2))
_on(a.UserStmt)(lambda un, n: "user " + un(n.text))
_on(a.SimulatedUserStmt)(lambda un, n: "simulated user " + un(n.text))
_on(a.UserTurnsStmt)(lambda un, n: "user turns " + un(n.count))
_on(a.ToolsStmt)(lambda un, n: "tools " + un.join(n.tools))
_on(a.WorldStmt)(lambda un, n: "world " + un(n.path))
_on(a.AnswerStep)(lambda un, n: f"then {n.action} {un(n.text)}")


@_on(a.GivenStmt)
def _given(un: _Unparser, n: a.GivenStmt) -> str:
    given_args = with_args(un, n.args)
    return f"given {un(n.tool)}{given_args} {n.action} {un(n.text)}{_then(un, n)}"


def _then(un: _Unparser, n: Any) -> str:
    """A sequence's later steps. A step without a verb takes the verb of the step before; the
    canonical text leaves out only a `returns` after a `returns`, so every failing step reads
    `fails` (`fails "down" then fails "still down"`, never `fails "down" then "still down"`)."""
    out, action = [], n.action
    for step in n.then:
        quiet = step.action == action == "returns"
        out.append(f" then {un(step.text)}" if quiet else f" then {step.action} {un(step.text)}")
        action = step.action
    return "".join(out)


@_on(a.ParamStmt)
def _param(un: _Unparser, n: a.ParamStmt) -> str:
    optional = "?" if n.optional else ""
    return f"param {key(n.name)}{optional}: {un(n.type)}{un.opt(' ', n.description)}"


@_on(a.Suite)
def _suite(un: _Unparser, n: a.Suite) -> str:
    raise TypeError("a whole file is laid out by the formatter (`evaldsl.format`, "
                    "`_format.format_suite`), not by `unparse`")


__all__ = [  # with the spelling of `_unparse_words`, which its importers find here
    "KEYWORDS",
    "QUOTED_WORDS",
    "Hook",
    "call_args",
    "expectation_parts",
    "key",
    "long_block",
    "name",
    "quote",
    "render",
    "unparse",
]
