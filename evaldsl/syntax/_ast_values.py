"""The AST's values and argument patterns (LANGUAGE.md 2 and 5); `_ast` re-exports them."""

from typing import Annotated, Literal, Union

from pydantic import Field

from ._ast_base import Node

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
    value: "Value"


class ArrayValue(Node):
    kind: Literal["array_value"] = "array_value"
    items: tuple["Value", ...] = ()


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
    pattern: "Pattern"


class ObjectPattern(Node):
    """`<key: PATTERN, ...>` (or `{...}`): a subset match on an object."""

    kind: Literal["object_pattern"] = "object_pattern"
    entries: tuple[KeyPattern, ...] = ()


class ArrayPattern(Node):
    """`[p1, p2]`: an array of exactly that length, elements in order."""

    kind: Literal["array_pattern"] = "array_pattern"
    items: tuple["Pattern", ...] = ()


class AnyPattern(Node):
    kind: Literal["any_pattern"] = "any_pattern"


class AbsentPattern(Node):
    kind: Literal["absent_pattern"] = "absent_pattern"


class ContainsPattern(Node):
    """`contains P`: a string containing P's string, or an array with an element matching P."""

    kind: Literal["contains_pattern"] = "contains_pattern"
    pattern: "Pattern"


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
    values: tuple["OneOfItem", ...] = ()
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
    pattern: "Pattern"
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
    pattern: "Pattern"


class PatternAnd(Node):
    kind: Literal["pattern_and"] = "pattern_and"
    patterns: tuple["Pattern", ...]


class PatternOr(Node):
    kind: Literal["pattern_or"] = "pattern_or"
    patterns: tuple["Pattern", ...]


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

__all__ = [
    "String",
    "Word",
    "Number",
    "Constant",
    "Placeholder",
    "Entry",
    "ArrayValue",
    "ObjectValue",
    "Literal_",
    "Value",
    "Text",
    "Num",
    "Regex",
    "Duration",
    "ToolName",
    "ToolRef",
    "EqualsPattern",
    "WithinPattern",
    "KeyPattern",
    "ObjectPattern",
    "ArrayPattern",
    "AnyPattern",
    "AbsentPattern",
    "ContainsPattern",
    "StartsWithPattern",
    "EndsWithPattern",
    "MatchesPattern",
    "OneOfPattern",
    "CompareOp",
    "ComparePattern",
    "BetweenPattern",
    "OnlyPattern",
    "LooselyPattern",
    "OneOfItem",
    "PatternNegation",
    "PatternAnd",
    "PatternOr",
    "Pattern",
    "Args",
]
