"""The .evl abstract syntax tree: frozen pydantic models, one per grammar rule.

Every node carries a `span` (where it stands in the source). The span is an
attribute, not content: it is left out of `model_dump()` and of equality, so
two parses of differently laid out but equivalent text compare equal. Each
concrete node has a `kind` tag, which makes the tree round-trip through JSON
and gives `evaldsl schema` a discriminated JSON Schema.

Class names follow the grammar's rule names (`called` -> `Called`). The
nodes live in modules by meaning, all re-exported here (the rest of
evaldsl writes ``a.Called``): `_ast_base` (`Node`, `Span`, `make`, `walk`),
`_ast_values` (values and patterns), `_ast_expect` (predicates and
expressions), `_ast_settings` (the suite's head lines and the settings),
`_ast_tools` (a `tool` block and its lines), `_ast_case` (a `case` block
and its lines); this one holds the file: `Suite`, its items and comments,
and the unions of statements.

None of these modules uses ``from __future__ import annotations``: pydantic
would then evaluate the text of every field's annotation as each class is
made, at every start of every process (about 21 M instructions of a
one-case `check`, bench/README.md). A name used before its class is made is
quoted (``expr: "Expr"``).
"""

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
from ._ast_case import (
    Case,
    CaseBodyStmt,
    CaseStmt,
    ExamplesStmt,
    ExpectStmt,
    GivenStmt,
    PromptStmt,
    SetupStmt,
    SimulatedUserStmt,
    TableRow,
    UserStmt,
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
from ._ast_settings import (
    DescriptionStmt,
    MaxTurnsStmt,
    ModeStmt,
    PassRateStmt,
    RepeatStmt,
    SettingStmt,
    SkipStmt,
    SuiteStmt,
    SystemStmt,
    TagsStmt,
    TimeoutStmt,
    ToolsStmt,
    UserTurnsStmt,
    UseStmt,
    WorldStmt,
    XfailStmt,
)
from ._ast_tools import (
    AnswerStep,
    ArrayType,
    OneOfType,
    OtherwiseStmt,
    ParamStmt,
    SimpleType,
    Tool,
    ToolBodyStmt,
    ToolStmt,
    Type,
    WhenStmt,
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

# ------------------------------------------------------ statement unions --

HeadStmt = Annotated[
    Union[SettingStmt, SuiteStmt, DescriptionStmt, UseStmt, ExpectStmt, WorldStmt],
    Field(discriminator="kind"),
]

Statement = Union[
    SettingStmt, SuiteStmt, DescriptionStmt, UseStmt, ExpectStmt, CaseStmt,
    PromptStmt, SetupStmt, ExamplesStmt, TableRow, ToolStmt, ParamStmt, WhenStmt,
    OtherwiseStmt, UserStmt, SimulatedUserStmt, UserTurnsStmt, WorldStmt, GivenStmt,
]


# ------------------------------------------------------------- the file --


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
