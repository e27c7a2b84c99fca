"""AST: a `tool` block and its lines: the declaration, `param` types, `when` / `otherwise` answers.

`AnswerStep` (a `then` of an answer sequence) is also what a case's `given`
line (in `_ast_case`) ends with. Re-exported by `_ast`.
"""

from typing import Annotated, Literal, Union

from pydantic import Field

from ._ast_base import Node
from ._ast_values import Args, Text, ToolRef, Value


class SimpleType(Node):
    kind: Literal["simple_type"] = "simple_type"
    name: str


class ArrayType(Node):
    kind: Literal["array_type"] = "array_type"
    of: "Type | None" = None


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


ToolBodyStmt = Annotated[
    Union[ParamStmt, WhenStmt, OtherwiseStmt], Field(discriminator="kind")
]


class Tool(Node):
    """A `tool` block: its declaration line and its param / when / otherwise lines."""

    kind: Literal["tool"] = "tool"
    name: ToolRef
    description: Text | None = None
    body: tuple[ToolBodyStmt, ...] = ()
