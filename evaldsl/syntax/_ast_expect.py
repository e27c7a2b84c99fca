"""The AST's predicates and expectation expressions (LANGUAGE.md 4); `_ast` re-exports them."""

from typing import Annotated, Literal, Union

from pydantic import Field

from ._ast_base import Node
from ._ast_values import (
    Args,
    CompareOp,
    Duration,
    Entry,
    Num,
    Pattern,
    Regex,
    Text,
    ToolRef,
)

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
    expr: "Expr"


class AndExpr(Node):
    kind: Literal["and_expr"] = "and_expr"
    items: tuple["Expr", ...]


class OrExpr(Node):
    kind: Literal["or_expr"] = "or_expr"
    items: tuple["Expr", ...]


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

__all__ = [
    "Count",
    "Step",
    "Called",
    "CalledAny",
    "CalledSequence",
    "CallsAre",
    "OnlyCalled",
    "FirstCall",
    "LastCall",
    "EveryCall",
    "CalledAnyOrder",
    "CallsAreAnyOrder",
    "ValidArguments",
    "NoToolCalls",
    "NoError",
    "TextContains",
    "TextIs",
    "TextEmpty",
    "TextStartsWith",
    "TextEndsWith",
    "TextMatches",
    "NumberIs",
    "NumberCompare",
    "NumberBetween",
    "FinalJson",
    "TokensAtMost",
    "DurationAtMost",
    "Judge",
    "CustomPredicate",
    "WorldState",
    "Negation",
    "AndExpr",
    "OrExpr",
    "Predicate",
    "Expr",
    "Fallback",
    "Expectation",
]
