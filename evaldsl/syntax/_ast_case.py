"""AST: a `case` block and its lines: prompt, setup, expect, examples, conversations, `given`.

A case's body may also hold any setting (`SettingStmt`, from `_ast_settings`).
`ExpectStmt` stands in a suite's head too (a suite-wide expectation).
Re-exported by `_ast`.
"""

from typing import Annotated, Literal, Union

from pydantic import Field

from ._ast_base import Node
from ._ast_expect import Expectation
from ._ast_settings import SettingStmt
from ._ast_tools import AnswerStep
from ._ast_values import Args, String, Text, ToolRef, Value


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


class UserStmt(Node):
    """`user "..."` (v2): one user message of a conversation."""

    kind: Literal["user_stmt"] = "user_stmt"
    text: Text


class SimulatedUserStmt(Node):
    """`simulated user "..."` (v2): a model plays the user with these instructions."""

    kind: Literal["simulated_user_stmt"] = "simulated_user_stmt"
    text: Text


class GivenStmt(Node):
    """`given TOOL [with ARGS] returns/fails "..." [then ...]` (v2): this case's own answer."""

    kind: Literal["given_stmt"] = "given_stmt"
    tool: ToolRef
    args: Args | None = None
    action: Literal["returns", "fails"]
    text: Text
    then: tuple[AnswerStep, ...] = ()


CaseBodyStmt = Annotated[
    Union[SettingStmt, PromptStmt, SetupStmt, ExpectStmt, ExamplesStmt, UserStmt, SimulatedUserStmt, GivenStmt],
    Field(discriminator="kind"),
]


class Case(Node):
    """A `case` block: its name and its statements in source order."""

    kind: Literal["case"] = "case"
    name: Text
    body: tuple[CaseBodyStmt, ...] = ()
