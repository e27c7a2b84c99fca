"""AST: the suite's head lines (`suite`, `description`, `use`, `world`) and the settings.

A setting (`SettingStmt`: `tags`, `repeat`, `timeout`, `tools`, ...) may stand
in a suite's head, where it is every case's default, or in a case, where it
overrides that default. Re-exported by `_ast`.
"""

from typing import Literal, Union

from ._ast_base import Node
from ._ast_values import Duration, Num, Placeholder, String, Text, ToolRef, Word


class SuiteStmt(Node):
    kind: Literal["suite_stmt"] = "suite_stmt"
    name: Text


class DescriptionStmt(Node):
    kind: Literal["description_stmt"] = "description_stmt"
    text: Text


class UseStmt(Node):
    kind: Literal["use_stmt"] = "use_stmt"
    path: String


class WorldStmt(Node):
    """`world "FILE.py:NAME"` (v2, suite only): tools backed by a Python class."""

    kind: Literal["world_stmt"] = "world_stmt"
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


class UserTurnsStmt(Node):
    """`user turns N` (v2): the bound on a simulated user's messages (a setting)."""

    kind: Literal["user_turns_stmt"] = "user_turns_stmt"
    count: Num


class ToolsStmt(Node):
    """`tools T1, T2, ...` (v2): the declared tools offered to a case (a setting)."""

    kind: Literal["tools_stmt"] = "tools_stmt"
    tools: tuple[ToolRef, ...]


SettingStmt = Union[
    TagsStmt, RepeatStmt, PassRateStmt, TimeoutStmt, SystemStmt, ModeStmt,
    MaxTurnsStmt, SkipStmt, XfailStmt, UserTurnsStmt, ToolsStmt,
]
