"""The .evl abstract syntax tree: frozen pydantic models, one per grammar rule.

Every node carries a `span` (where it stands in the source). The span is an
attribute, not content: it is left out of `model_dump()` and of equality, so
two parses of differently laid out but equivalent text compare equal. Each
concrete node has a `kind` tag, which makes the tree round-trip through JSON
and gives `evaldsl schema` a discriminated JSON Schema.

Class names follow the grammar's rule names (`called` -> `Called`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field

_M = TypeVar("_M", bound=BaseModel)


def make(cls: type[_M], **fields: Any) -> _M:
    """Build a node without validation, fast: the parser already guarantees its shape.

    Equivalent to `cls.model_construct(**fields)` for our models (every field
    given or defaulted to a constant), at a fraction of the cost, which
    matters when a file has hundreds of thousands of nodes.
    """
    obj = object.__new__(cls)
    defaults = _DEFAULTS.get(cls)
    _set(obj, "__dict__", {**(_defaults(cls) if defaults is None else defaults), **fields})  # as dict().update()
    key = (cls, *fields)
    given = _FIELDS_SET.get(key)
    if given is None:
        given = _FIELDS_SET[key] = set(fields)
    _set(obj, "__pydantic_fields_set__", given)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def make_spanned(cls: type[_M], fields: dict[str, Any], file: str, line: Any, column: Any, end_line: Any,
                 end_column: Any) -> _M:
    """``make(cls, span=span(file, line, column, end_line, end_column), **fields)`` in one call: the same
    node, with `span` and `make` written out inline (a file makes one such node per rule it reduces; the
    two calls and the unpacking of ``fields`` again cost `check` about 1 % of its instructions)."""
    where = object.__new__(Span)  # `span(...)`, inline
    _set(where, "__dict__", {"file": file, "line": line, "column": column, "end_line": end_line,
                             "end_column": end_column})
    _set(where, "__pydantic_fields_set__", _SPAN_FIELDS)
    _set(where, "__pydantic_extra__", None)
    _set(where, "__pydantic_private__", None)
    obj = object.__new__(cls)
    defaults = _DEFAULTS.get(cls)
    _set(obj, "__dict__", {**(_defaults(cls) if defaults is None else defaults), "span": where, **fields})
    key = (cls, "span", *fields)
    given = _FIELDS_SET.get(key)
    if given is None:
        given = _FIELDS_SET[key] = {"span", *fields}
    _set(obj, "__pydantic_fields_set__", given)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def replaced(node: _M, **changes: Any) -> _M:
    """``node.model_copy(update=changes)``, fast: a case filled from each of many rows makes many."""
    obj = object.__new__(type(node))
    values = dict(node.__dict__)
    values.update(changes)
    _set(obj, "__dict__", values)
    given = node.__pydantic_fields_set__
    if not given.issuperset(changes):
        given = given | set(changes)
    _set(obj, "__pydantic_fields_set__", given)  # shared when unchanged: nodes are frozen (see _FIELDS_SET)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


_set = object.__setattr__
_FIELDS_SET: dict[tuple, set[str]] = {}
"""One fields-set per class and given fields, shared by its nodes (a set each
was about half of the tree's memory). Safe because nodes are frozen: pydantic
changes a fields-set only in `__setattr__`, and copies it in `model_copy`."""
_DEFAULTS: dict[type, dict[str, Any]] = {}


def _defaults(cls: type) -> dict[str, Any]:
    found = _DEFAULTS.get(cls)
    if found is None:
        found = {}
        for name, field in cls.model_fields.items():  # type: ignore[attr-defined]
            if field.default_factory is not None:
                found[name] = field.default_factory()  # only immutable () defaults here
            elif not field.is_required():
                found[name] = field.default
        _DEFAULTS[cls] = found
    return found


def span(file: str, line: Any, column: Any, end_line: Any, end_column: Any) -> Span:
    """`make(Span, ...)` with every field given, faster: a file has a span per node."""
    obj = object.__new__(Span)
    _set(obj, "__dict__", {"file": file, "line": line, "column": column, "end_line": end_line,
                           "end_column": end_column})
    _set(obj, "__pydantic_fields_set__", _SPAN_FIELDS)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


_SPAN_FIELDS = {"file", "line", "column", "end_line", "end_column"}
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def walk(node: Any) -> Iterator[Any]:
    """Every AST node under `node` (itself included), depth first, without recursion."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, tuple):
            stack.extend(current)
            continue
        cls = type(current)
        fields = _CHILD_FIELDS.get(cls)
        if fields is None:
            if not issubclass(cls, Node):
                continue
            fields = _CHILD_FIELDS[cls] = tuple(
                f for f in cls.model_fields if f not in ("span", "kind", "comments")
            )
        yield current
        values = current.__dict__
        for f in fields:
            child = values[f]
            if isinstance(child, (Node, tuple)):
                stack.append(child)


class Span(BaseModel):
    """A region of a source file; lines and columns count from 1, end exclusive."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    file: str = "<string>"
    line: int = 1
    column: int = 1
    end_line: int = 1
    end_column: int = 1


class Node(BaseModel):
    """Base of every AST node. Equality ignores spans."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    span: Span | None = Field(default=None, exclude=True, repr=False)
    """Where the node stands in the source (not part of equality)."""

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other):
            return NotImplemented
        assert isinstance(other, Node)
        return self.model_dump() == other.model_dump()

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self.model_dump())))


# ---------------------------------------------------------------- values --


class String(Node):
    """A string: `"..."`, or a long `\"\"\"...\"\"\"` string (already dedented)."""

    kind: Literal["string"] = "string"
    value: str
    long: bool = False


class Word(Node):
    """A bare word in a value position: means the string of that name."""

    kind: Literal["word"] = "word"
    value: str


class Number(Node):
    """A JSON number; `raw` keeps its spelling for the formatter."""

    kind: Literal["number"] = "number"
    value: int | float
    raw: str


class Constant(Node):
    """`true`, `false` or `null`."""

    kind: Literal["constant"] = "constant"
    value: bool | None


class Placeholder(Node):
    """`$name`: stands for an examples cell's value."""

    kind: Literal["placeholder"] = "placeholder"
    name: str


class Entry(Node):
    """`key: value` inside an object value."""

    kind: Literal["entry"] = "entry"
    key: str
    value: Value


class ArrayValue(Node):
    kind: Literal["array_value"] = "array_value"
    items: tuple[Value, ...] = ()


class ObjectValue(Node):
    kind: Literal["object_value"] = "object_value"
    entries: tuple[Entry, ...] = ()


Literal_ = Annotated[Union[String, Word, Number, Constant], Field(discriminator="kind")]
Value = Annotated[
    Union[String, Word, Number, Constant, Placeholder, ArrayValue, ObjectValue],
    Field(discriminator="kind"),
]
Text = Annotated[Union[String, Placeholder], Field(discriminator="kind")]
Num = Annotated[Union[Number, Placeholder], Field(discriminator="kind")]


class Regex(Node):
    """`/pattern/flags`."""

    kind: Literal["regex"] = "regex"
    pattern: str
    flags: str = ""


class Duration(Node):
    """`500ms`, `30s`, `2m`, `1h`."""

    kind: Literal["duration"] = "duration"
    amount: int
    unit: Literal["ms", "s", "m", "h"]

    @property
    def seconds(self) -> float:
        return self.amount * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[self.unit]


class ToolName(Node):
    """A tool's name as written (bare or quoted)."""

    kind: Literal["tool_name"] = "tool_name"
    name: str


ToolRef = Annotated[Union[ToolName, Placeholder], Field(discriminator="kind")]


# -------------------------------------------------------------- patterns --


class EqualsPattern(Node):
    """A literal (or `$name`): an equal value; optionally compared casefolded."""

    kind: Literal["equals_pattern"] = "equals_pattern"
    value: Value
    ignore_case: bool = False


class WithinPattern(Node):
    """`X within E`: a number within E of X."""

    kind: Literal["within_pattern"] = "within_pattern"
    value: Value
    tolerance: Num


class KeyPattern(Node):
    """`key: PATTERN` inside an object pattern."""

    kind: Literal["key_pattern"] = "key_pattern"
    key: str
    pattern: Pattern


class ObjectPattern(Node):
    """`<key: PATTERN, ...>` (or `{...}`): a subset match on an object."""

    kind: Literal["object_pattern"] = "object_pattern"
    entries: tuple[KeyPattern, ...] = ()


class ArrayPattern(Node):
    """`[p1, p2]`: an array of exactly that length, elements in order."""

    kind: Literal["array_pattern"] = "array_pattern"
    items: tuple[Pattern, ...] = ()


class AnyPattern(Node):
    kind: Literal["any_pattern"] = "any_pattern"


class AbsentPattern(Node):
    kind: Literal["absent_pattern"] = "absent_pattern"


class ContainsPattern(Node):
    """`contains P`: a string containing P's string, or an array with an element matching P."""

    kind: Literal["contains_pattern"] = "contains_pattern"
    pattern: Pattern


class StartsWithPattern(Node):
    kind: Literal["starts_with_pattern"] = "starts_with_pattern"
    text: Text
    ignore_case: bool = False


class EndsWithPattern(Node):
    kind: Literal["ends_with_pattern"] = "ends_with_pattern"
    text: Text
    ignore_case: bool = False


class MatchesPattern(Node):
    kind: Literal["matches_pattern"] = "matches_pattern"
    regex: Regex


class OneOfPattern(Node):
    kind: Literal["one_of_pattern"] = "one_of_pattern"
    values: tuple[OneOfItem, ...] = ()
    """Values, each maybe `"s" loosely` (v2)."""


CompareOp = Literal["at least", "at most", "above", "below"]


class ComparePattern(Node):
    kind: Literal["compare_pattern"] = "compare_pattern"
    op: CompareOp
    value: Num


class BetweenPattern(Node):
    kind: Literal["between_pattern"] = "between_pattern"
    low: Num
    high: Num


# v2: precise matching (LANGUAGE.md 5) --------------------------------------


class OnlyPattern(Node):
    """`only <...>` (v2): a closed object pattern, no key besides those named (this level only)."""

    kind: Literal["only_pattern"] = "only_pattern"
    pattern: Pattern
    """The object pattern it closes (another pattern is kept only to be reported as an error)."""


class LooselyPattern(Node):
    """`"s" loosely` (v2): equal once both are casefolded and stripped of white space,
    punctuation and symbols (Unicode categories Z, P, S)."""

    kind: Literal["loosely_pattern"] = "loosely_pattern"
    value: Value


OneOfItem = Annotated[
    Union[String, Word, Number, Constant, Placeholder, ArrayValue, ObjectValue, LooselyPattern],
    Field(discriminator="kind"),
]
"""An item of `one of [...]` in a pattern: a value, or (v2) `"s" loosely`."""

# ---- end of v2: precise matching


class PatternNegation(Node):
    kind: Literal["pattern_negation"] = "pattern_negation"
    pattern: Pattern


class PatternAnd(Node):
    kind: Literal["pattern_and"] = "pattern_and"
    patterns: tuple[Pattern, ...]


class PatternOr(Node):
    kind: Literal["pattern_or"] = "pattern_or"
    patterns: tuple[Pattern, ...]


Pattern = Annotated[
    Union[
        EqualsPattern, WithinPattern, ObjectPattern, ArrayPattern, AnyPattern,
        AbsentPattern, ContainsPattern, StartsWithPattern, EndsWithPattern,
        MatchesPattern, OneOfPattern, ComparePattern, BetweenPattern,
        PatternNegation, PatternAnd, PatternOr, OnlyPattern, LooselyPattern,
    ],
    Field(discriminator="kind"),
]
Args = Annotated[
    Union[
        ObjectPattern, OnlyPattern, PatternNegation, PatternAnd, PatternOr, Placeholder,
        EqualsPattern, WithinPattern, ArrayPattern, AnyPattern, AbsentPattern, ContainsPattern,
        StartsWithPattern, EndsWithPattern, MatchesPattern, OneOfPattern, ComparePattern,
        BetweenPattern, LooselyPattern,
    ],
    Field(discriminator="kind"),
]
"""After `with` (v2): a pattern over object patterns (`<...>`, `only <...>`, and `or` / `and` /
`not` and parentheses over them), or `$name`. The parser also lets any other pattern stand in
parentheses (`with (any)`), for the compiler to report (E255)."""


# ------------------------------------------------------------ predicates --


class Count(Node):
    """How many calls: `once`, `twice`, `N times`, `at least N times`, ..."""

    kind: Literal["count"] = "count"
    form: Literal["once", "twice", "times", "at least", "at most", "between"]
    n: Num | None = None
    m: Num | None = None


class Step(Node):
    """One step of a call chain: `T`, `T with ARGS`, or `any tool` (tool None)."""

    kind: Literal["step"] = "step"
    tool: ToolRef | None = None
    args: Args | None = None


class Called(Node):
    """`called T [with ARGS] [COUNT]`."""

    kind: Literal["called"] = "called"
    tool: ToolRef
    args: Args | None = None
    count: Count | None = None


class CalledAny(Node):
    """`called any tool [COUNT]`."""

    kind: Literal["called_any"] = "called_any"
    count: Count | None = None


class CalledSequence(Node):
    """`called S1 then S2 ...`: a subsequence. `count` is kept only to be reported as an error."""

    kind: Literal["called_sequence"] = "called_sequence"
    steps: tuple[Step, ...]
    count: Count | None = None


class CallsAre(Node):
    """`calls are S1 then S2 ...`: exactly this sequence."""

    kind: Literal["calls_are"] = "calls_are"
    steps: tuple[Step, ...]


class OnlyCalled(Node):
    kind: Literal["only_called"] = "only_called"
    tools: tuple[ToolRef, ...]


class FirstCall(Node):
    kind: Literal["first_call"] = "first_call"
    tool: ToolRef
    args: Args | None = None


class LastCall(Node):
    kind: Literal["last_call"] = "last_call"
    tool: ToolRef
    args: Args | None = None


class EveryCall(Node):
    kind: Literal["every_call"] = "every_call"
    tool: ToolRef
    args: Args


class CalledAnyOrder(Node):
    """`called [S1, S2, ...] in any order` (v2): each step matched by a call of its own.
    `count` is kept only to be reported as an error."""

    kind: Literal["called_any_order"] = "called_any_order"
    steps: tuple[Step, ...] = ()
    count: Count | None = None


class CallsAreAnyOrder(Node):
    """`calls are [S1, S2, ...] in any order` (v2): the calls are exactly these steps, in some order."""

    kind: Literal["calls_are_any_order"] = "calls_are_any_order"
    steps: tuple[Step, ...] = ()


class ValidArguments(Node):
    """`valid arguments` (v2): every call was to a declared tool, its arguments valid for its params."""

    kind: Literal["valid_arguments"] = "valid_arguments"


class NoToolCalls(Node):
    kind: Literal["no_tool_calls"] = "no_tool_calls"


class NoError(Node):
    kind: Literal["no_error"] = "no_error"


class TextContains(Node):
    kind: Literal["text_contains"] = "text_contains"
    text: Text
    ignore_case: bool = False


class TextIs(Node):
    kind: Literal["text_is"] = "text_is"
    text: Text
    ignore_case: bool = False


class TextEmpty(Node):
    kind: Literal["text_empty"] = "text_empty"


class TextStartsWith(Node):
    kind: Literal["text_starts_with"] = "text_starts_with"
    text: Text
    ignore_case: bool = False


class TextEndsWith(Node):
    kind: Literal["text_ends_with"] = "text_ends_with"
    text: Text
    ignore_case: bool = False


class TextMatches(Node):
    kind: Literal["text_matches"] = "text_matches"
    regex: Regex


class NumberIs(Node):
    kind: Literal["number_is"] = "number_is"
    value: Num
    within: Num | None = None


class NumberCompare(Node):
    kind: Literal["number_compare"] = "number_compare"
    op: CompareOp
    value: Num


class NumberBetween(Node):
    kind: Literal["number_between"] = "number_between"
    low: Num
    high: Num


class FinalJson(Node):
    kind: Literal["final_json"] = "final_json"
    pattern: Pattern


class TokensAtMost(Node):
    kind: Literal["tokens_at_most"] = "tokens_at_most"
    limit: Num


class DurationAtMost(Node):
    kind: Literal["duration_at_most"] = "duration_at_most"
    limit: Duration


class Judge(Node):
    kind: Literal["judge"] = "judge"
    rubric: Text
    threshold: Num | None = None


class CustomPredicate(Node):
    """`NAME(key: VALUE, ...)`: a predicate registered by a harness."""

    kind: Literal["custom_predicate"] = "custom_predicate"
    name: str
    args: tuple[Entry, ...] = ()


class WorldState(Node):
    """`world PATTERN` (v2): the world's state (its `state()`, else its public fields) matches PATTERN."""

    kind: Literal["world_state"] = "world_state"
    pattern: Pattern


class Negation(Node):
    kind: Literal["negation"] = "negation"
    expr: Expr


class AndExpr(Node):
    kind: Literal["and_expr"] = "and_expr"
    items: tuple[Expr, ...]


class OrExpr(Node):
    kind: Literal["or_expr"] = "or_expr"
    items: tuple[Expr, ...]


Predicate = Union[
    Called, CalledAny, CalledSequence, CallsAre, OnlyCalled, FirstCall, LastCall,
    EveryCall, NoToolCalls, NoError, TextContains, TextIs, TextEmpty, TextStartsWith,
    TextEndsWith, TextMatches, NumberIs, NumberCompare, NumberBetween, FinalJson,
    TokensAtMost, DurationAtMost, Judge, CustomPredicate, WorldState,
    CalledAnyOrder, CallsAreAnyOrder, ValidArguments,
]
Expr = Annotated[Union[Predicate, Negation, AndExpr, OrExpr], Field(discriminator="kind")]


class Fallback(Node):
    """`else EXPR for N`: partial credit when the main expression fails."""

    kind: Literal["fallback"] = "fallback"
    expr: Expr
    credit: Num


class Expectation(Node):
    kind: Literal["expectation"] = "expectation"
    expr: Expr
    fallbacks: tuple[Fallback, ...] = ()


# ------------------------------------------------------------ statements --


class SuiteStmt(Node):
    kind: Literal["suite_stmt"] = "suite_stmt"
    name: Text


class DescriptionStmt(Node):
    kind: Literal["description_stmt"] = "description_stmt"
    text: Text


class UseStmt(Node):
    kind: Literal["use_stmt"] = "use_stmt"
    path: String


class TagsStmt(Node):
    kind: Literal["tags_stmt"] = "tags_stmt"
    tags: tuple[Union[Word, String, Placeholder], ...]


class RepeatStmt(Node):
    kind: Literal["repeat_stmt"] = "repeat_stmt"
    count: Num


class PassRateStmt(Node):
    kind: Literal["pass_rate_stmt"] = "pass_rate_stmt"
    rate: Num


class TimeoutStmt(Node):
    kind: Literal["timeout_stmt"] = "timeout_stmt"
    duration: Duration


class SystemStmt(Node):
    kind: Literal["system_stmt"] = "system_stmt"
    text: Text


class ModeStmt(Node):
    kind: Literal["mode_stmt"] = "mode_stmt"
    mode: str


class MaxTurnsStmt(Node):
    kind: Literal["max_turns_stmt"] = "max_turns_stmt"
    count: Num


class SkipStmt(Node):
    kind: Literal["skip_stmt"] = "skip_stmt"
    reason: Text | None = None


class XfailStmt(Node):
    kind: Literal["xfail_stmt"] = "xfail_stmt"
    reason: Text | None = None


class CaseStmt(Node):
    kind: Literal["case_stmt"] = "case_stmt"
    name: Text


class PromptStmt(Node):
    kind: Literal["prompt_stmt"] = "prompt_stmt"
    text: Text


class SetupStmt(Node):
    kind: Literal["setup_stmt"] = "setup_stmt"
    value: Value


class ExpectStmt(Node):
    kind: Literal["expect_stmt"] = "expect_stmt"
    expectation: Expectation


class TableRow(Node):
    """`| a | b |`: one row of an examples table (the first row names the columns)."""

    kind: Literal["table_row"] = "table_row"
    cells: tuple[Value, ...]


class ExamplesStmt(Node):
    """`examples` with its table rows, or `examples from "file"`."""

    kind: Literal["examples_stmt"] = "examples_stmt"
    source: String | None = None
    rows: tuple[TableRow, ...] = ()


class SimpleType(Node):
    kind: Literal["simple_type"] = "simple_type"
    name: str


class ArrayType(Node):
    kind: Literal["array_type"] = "array_type"
    of: Type | None = None


class OneOfType(Node):
    kind: Literal["one_of_type"] = "one_of_type"
    values: tuple[Value, ...] = ()


Type = Annotated[Union[SimpleType, ArrayType, OneOfType], Field(discriminator="kind")]


class ToolStmt(Node):
    kind: Literal["tool_stmt"] = "tool_stmt"
    name: ToolRef
    description: Text | None = None


class ParamStmt(Node):
    kind: Literal["param_stmt"] = "param_stmt"
    name: str
    optional: bool = False
    type: Type
    description: Text | None = None


class AnswerStep(Node):
    """`then [returns|fails] "..."` (v2): a later answer of a sequence; its verb, when left
    out, is the step's before (kept resolved here, so `action` is always set)."""

    kind: Literal["answer_step"] = "answer_step"
    action: Literal["returns", "fails"]
    text: Text


class WhenStmt(Node):
    kind: Literal["when_stmt"] = "when_stmt"
    args: Args
    action: Literal["returns", "fails"]
    text: Text
    then: tuple[AnswerStep, ...] = ()
    """The sequence's later answers (v2), in order; empty for one answer."""


class OtherwiseStmt(Node):
    kind: Literal["otherwise_stmt"] = "otherwise_stmt"
    action: Literal["returns", "fails"]
    text: Text
    then: tuple[AnswerStep, ...] = ()


class UserStmt(Node):
    """`user "..."` (v2): one user message of a conversation."""

    kind: Literal["user_stmt"] = "user_stmt"
    text: Text


class SimulatedUserStmt(Node):
    """`simulated user "..."` (v2): a model plays the user with these instructions."""

    kind: Literal["simulated_user_stmt"] = "simulated_user_stmt"
    text: Text


class UserTurnsStmt(Node):
    """`user turns N` (v2): the bound on a simulated user's messages (a setting)."""

    kind: Literal["user_turns_stmt"] = "user_turns_stmt"
    count: Num


class WorldStmt(Node):
    """`world "FILE.py:NAME"` (v2, suite only): tools backed by a Python class."""

    kind: Literal["world_stmt"] = "world_stmt"
    path: String


class GivenStmt(Node):
    """`given TOOL [with ARGS] returns/fails "..." [then ...]` (v2): this case's own answer."""

    kind: Literal["given_stmt"] = "given_stmt"
    tool: ToolRef
    args: Args | None = None
    action: Literal["returns", "fails"]
    text: Text
    then: tuple[AnswerStep, ...] = ()


class ToolsStmt(Node):
    """`tools T1, T2, ...` (v2): the declared tools offered to a case (a setting)."""

    kind: Literal["tools_stmt"] = "tools_stmt"
    tools: tuple[ToolRef, ...]


SettingStmt = Union[
    TagsStmt, RepeatStmt, PassRateStmt, TimeoutStmt, SystemStmt, ModeStmt,
    MaxTurnsStmt, SkipStmt, XfailStmt, UserTurnsStmt, ToolsStmt,
]
HeadStmt = Annotated[
    Union[SettingStmt, SuiteStmt, DescriptionStmt, UseStmt, ExpectStmt, WorldStmt],
    Field(discriminator="kind"),
]
CaseBodyStmt = Annotated[
    Union[SettingStmt, PromptStmt, SetupStmt, ExpectStmt, ExamplesStmt, UserStmt, SimulatedUserStmt, GivenStmt],
    Field(discriminator="kind"),
]
ToolBodyStmt = Annotated[
    Union[ParamStmt, WhenStmt, OtherwiseStmt], Field(discriminator="kind")
]
Statement = Union[
    SettingStmt, SuiteStmt, DescriptionStmt, UseStmt, ExpectStmt, CaseStmt,
    PromptStmt, SetupStmt, ExamplesStmt, TableRow, ToolStmt, ParamStmt, WhenStmt,
    OtherwiseStmt, UserStmt, SimulatedUserStmt, UserTurnsStmt, WorldStmt, GivenStmt,
]


# ------------------------------------------------------------- blocks --


class Case(Node):
    """A `case` block: its name and its statements in source order."""

    kind: Literal["case"] = "case"
    name: Text
    body: tuple[CaseBodyStmt, ...] = ()


class Tool(Node):
    """A `tool` block: its declaration line and its param / when / otherwise lines."""

    kind: Literal["tool"] = "tool"
    name: ToolRef
    description: Text | None = None
    body: tuple[ToolBodyStmt, ...] = ()


class Comment(Node):
    """A `# ...` comment; kept for the formatter, not part of a suite's meaning."""

    kind: Literal["comment"] = "comment"
    text: str


Item = Annotated[Union[HeadStmt, Case, Tool], Field(discriminator="kind")]


class Suite(Node):
    """One parsed .evl file: head statements, tools and cases in source order."""

    kind: Literal["suite"] = "suite"
    items: tuple[Item, ...] = ()
    comments: tuple[Comment, ...] = Field(default=(), exclude=True, repr=False)
    """Every comment with its span (not part of equality)."""

    @property
    def cases(self) -> list[Case]:
        return [item for item in self.items if isinstance(item, Case)]

    @property
    def tools(self) -> list[Tool]:
        return [item for item in self.items if isinstance(item, Tool)]

    @property
    def head(self) -> list[BaseModel]:
        return [item for item in self.items if not isinstance(item, (Case, Tool))]


