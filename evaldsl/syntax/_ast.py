"""The .evl abstract syntax tree: frozen pydantic models, one per grammar rule.

Every node carries a `span` (where it stands in the source). The span is an
attribute, not content: it is left out of `model_dump()` and of equality, so
two parses of differently laid out but equivalent text compare equal. Each
concrete node has a `kind` tag, which makes the tree round-trip through JSON
and gives `evaldsl schema` a discriminated JSON Schema.

Class names follow the grammar's rule names (`called` -> `Called`). The
nodes live in three modules by meaning, all re-exported here (the rest of
evaldsl writes ``a.Called``): `_ast_base` (`Node`, `Span`, `make`, `walk`),
`_ast_values` (values and patterns), `_ast_expect` (predicates and
expressions); this one holds the statements and blocks.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, Field

from ._ast_base import (
    Node,
    Span,
    make,
    make_spanned,
    replaced,
    span,
    walk,
)
from ._ast_expect import (
    AndExpr,
    Called,
    CalledAny,
    CalledAnyOrder,
    CalledSequence,
    CallsAre,
    CallsAreAnyOrder,
    Count,
    CustomPredicate,
    DurationAtMost,
    EveryCall,
    Expectation,
    Expr,
    Fallback,
    FinalJson,
    FirstCall,
    Judge,
    LastCall,
    Negation,
    NoError,
    NoToolCalls,
    NumberBetween,
    NumberCompare,
    NumberIs,
    OnlyCalled,
    OrExpr,
    Predicate,
    Step,
    TextContains,
    TextEmpty,
    TextEndsWith,
    TextIs,
    TextMatches,
    TextStartsWith,
    TokensAtMost,
    ValidArguments,
    WorldState,
)
from ._ast_values import (
    AbsentPattern,
    AnyPattern,
    Args,
    ArrayPattern,
    ArrayValue,
    BetweenPattern,
    CompareOp,
    ComparePattern,
    Constant,
    ContainsPattern,
    Duration,
    EndsWithPattern,
    Entry,
    EqualsPattern,
    KeyPattern,
    Literal_,
    LooselyPattern,
    MatchesPattern,
    Num,
    Number,
    ObjectPattern,
    ObjectValue,
    OneOfItem,
    OneOfPattern,
    OnlyPattern,
    Pattern,
    PatternAnd,
    PatternNegation,
    PatternOr,
    Placeholder,
    Regex,
    StartsWithPattern,
    String,
    Text,
    ToolName,
    ToolRef,
    Value,
    WithinPattern,
    Word,
)

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

__all__ = [
    "AbsentPattern",
    "AndExpr",
    "AnswerStep",
    "AnyPattern",
    "Args",
    "ArrayPattern",
    "ArrayType",
    "ArrayValue",
    "BetweenPattern",
    "Called",
    "CalledAny",
    "CalledAnyOrder",
    "CalledSequence",
    "CallsAre",
    "CallsAreAnyOrder",
    "Case",
    "CaseBodyStmt",
    "CaseStmt",
    "Comment",
    "CompareOp",
    "ComparePattern",
    "Constant",
    "ContainsPattern",
    "Count",
    "CustomPredicate",
    "DescriptionStmt",
    "Duration",
    "DurationAtMost",
    "EndsWithPattern",
    "Entry",
    "EqualsPattern",
    "EveryCall",
    "ExamplesStmt",
    "ExpectStmt",
    "Expectation",
    "Expr",
    "Fallback",
    "FinalJson",
    "FirstCall",
    "GivenStmt",
    "HeadStmt",
    "Item",
    "Judge",
    "KeyPattern",
    "LastCall",
    "Literal_",
    "LooselyPattern",
    "MatchesPattern",
    "MaxTurnsStmt",
    "ModeStmt",
    "Negation",
    "NoError",
    "NoToolCalls",
    "Node",
    "Num",
    "Number",
    "NumberBetween",
    "NumberCompare",
    "NumberIs",
    "ObjectPattern",
    "ObjectValue",
    "OneOfItem",
    "OneOfPattern",
    "OneOfType",
    "OnlyCalled",
    "OnlyPattern",
    "OrExpr",
    "OtherwiseStmt",
    "ParamStmt",
    "PassRateStmt",
    "Pattern",
    "PatternAnd",
    "PatternNegation",
    "PatternOr",
    "Placeholder",
    "Predicate",
    "PromptStmt",
    "Regex",
    "RepeatStmt",
    "SettingStmt",
    "SetupStmt",
    "SimpleType",
    "SimulatedUserStmt",
    "SkipStmt",
    "Span",
    "StartsWithPattern",
    "Statement",
    "Step",
    "String",
    "Suite",
    "SuiteStmt",
    "SystemStmt",
    "TableRow",
    "TagsStmt",
    "Text",
    "TextContains",
    "TextEmpty",
    "TextEndsWith",
    "TextIs",
    "TextMatches",
    "TextStartsWith",
    "TimeoutStmt",
    "TokensAtMost",
    "Tool",
    "ToolBodyStmt",
    "ToolName",
    "ToolRef",
    "ToolStmt",
    "ToolsStmt",
    "Type",
    "UseStmt",
    "UserStmt",
    "UserTurnsStmt",
    "ValidArguments",
    "Value",
    "WhenStmt",
    "WithinPattern",
    "Word",
    "WorldState",
    "WorldStmt",
    "XfailStmt",
    "make",
    "make_spanned",
    "replaced",
    "span",
    "walk",
]
