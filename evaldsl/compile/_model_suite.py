"""The compiled suite, its cases (settings, turns) and its declared tools with their answers.

Nothing here knows how an agent is run or how results are reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ._model_check import CompiledExpectation, quick_state


@dataclass(frozen=True)
class CaseSettings:
    """A case's settings after suite defaults and case overrides are merged."""

    repeat: int = 1
    pass_rate: float = 1.0
    timeout_s: float = 60.0
    system: str | None = None
    mode: str = "agent"
    max_turns: int = 10
    skip: str | None = None
    """The skip reason ('' when none was given); None when not skipped."""
    xfail: str | None = None
    """The xfail reason ('' when none was given); None when not xfail."""
    tags: tuple[str, ...] = ()
    user_turns: int = 10
    """`user turns N` (v2): the bound on a simulated user's messages, 1 to 100."""
    tools: tuple[str, ...] | None = None
    """`tools T1, T2` (v2): the declared tools offered to the case, in that order; None: every one."""


@dataclass(frozen=True)
class ToolAnswer:
    """What a mock tool answered to one call."""

    ok: bool
    text: str


@dataclass(frozen=True)
class AnswerRule:
    """One `when`, `otherwise` or `given` line (v2: with its answer sequence).

    The n-th call this line answers in a run gets ``steps[n]``, and every call
    past the last step the last one (`step`); the runner's `ToolAnswerer`
    counts the calls, per run.
    """

    matcher: Callable[[Any], str | None] | None
    """Whether it answers a call's arguments (None on a match); None answers every call."""
    steps: tuple[ToolAnswer, ...]
    tool: str = ""
    """The tool it answers (the `given` lines of a case name theirs)."""
    file: str = "<string>"
    line: int = 0

    def step(self, n: int) -> ToolAnswer:
        """The answer to the n-th call (from 0) this line answers."""
        steps = self.steps
        return steps[n] if n < len(steps) else steps[-1]


@dataclass(frozen=True)
class CompiledTool:
    """A declared tool: its JSON Schema for a model, and its canned answers."""

    name: str
    description: str
    parameters: dict[str, Any]
    """JSON Schema of the arguments object."""
    answer: Callable[[Any], ToolAnswer]
    """Checks a call's arguments against the params, then answers from the
    first matching `when`, the `otherwise`, or an error naming the tool."""
    file: str = "<string>"
    line: int = 0
    answers: int = 0
    """How many `when` / `otherwise` lines it has (0: it only declares a schema)."""
    rules: tuple[AnswerRule, ...] = ()
    """Its `when` lines in order, then its `otherwise` (matcher None), for the `ToolAnswerer`."""
    prepare: Callable[[Any], Any] | None = None
    """Decodes and checks a call's arguments against the params: the arguments object,
    or the error `ToolAnswer` a real tool would give. None: taken as they are."""
    method: str | None = None
    """For a world's tool (v2): the method of the world class that answers it."""

    def schema(self) -> dict[str, Any]:
        """The tool in chat-completions `tools` format."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass(frozen=True)
class CompiledTurn:
    """One scripted `user` line of a conversation (v2, LANGUAGE.md 11); turn number = index + 1."""

    message: str
    """The user message, `{{ }}` and `$name` filled in."""
    expectations: tuple[CompiledExpectation, ...]
    """The `expect` lines under it: they judge this turn only."""
    line: int
    """The `user` line's line number."""


@quick_state
@dataclass(frozen=True, slots=True)
class CompiledCase:
    """One runnable case (one row of an examples table is one case)."""

    suite: str
    name: str
    file: str
    line: int
    prompt: str
    settings: CaseSettings
    expectations: tuple[CompiledExpectation, ...]
    setup: Any = None
    """The `setup` value (JSON) for `Harness.setup`; None when absent."""
    tools: tuple[CompiledTool, ...] = ()
    """The suite's declared tools (own and imported), for model runs; a world's tools after them."""
    turns: tuple[CompiledTurn, ...] = ()
    """A conversation's scripted `user` lines (v2); empty for a single-`prompt` case, which the
    runner treats as one turn of `prompt`. For a conversation, `prompt` is the first user message
    ("" when a simulated user opens it). Expectations above the first `user` line, after a
    `simulated user` line and suite-wide ones are in `expectations`: they judge the whole."""
    simulated_user: str | None = None
    """`simulated user` (v2): its instructions, `{{ }}` filled in; None when there is none."""
    given: tuple[AnswerRule, ...] = ()
    """The case's `given` lines (v2), in order: tried before the tools' own answers."""
    world: Any = None
    """The suite's `world` (v2): a `WorldClass` (compile/_world.py), one instance per run; None without."""

    @property
    def is_conversation(self) -> bool:
        """Whether the case has `user` lines or a simulated user (v2)."""
        return bool(self.turns) or self.simulated_user is not None

    @property
    def id(self) -> str:
        return f"{self.file}::{self.name}"

    @property
    def needs_judge(self) -> bool:
        return any(e.needs_judge for e in self.expectations) or any(
            e.needs_judge for turn in self.turns for e in turn.expectations)


@dataclass(frozen=True)
class CompiledSuite:
    """One compiled .evl file."""

    name: str
    file: str
    cases: Sequence[CompiledCase]
    """A tuple; a `SuiteCases` (a sequence whose `examples from` rows are made when read) when the
    suite reads examples from a file."""
    description: str | None = None
    tools: tuple[CompiledTool, ...] = ()
    warnings: tuple[Any, ...] = ()
    """Diagnostics of severity warning found while compiling."""
    world: Any = None
    """The suite's `world` (v2): a `WorldClass`, loaded, or (`check` without --import-worlds) known
    by name only (``world.loaded`` False: its tools' names were not checked); None without one."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready description of the suite (callables left out)."""
        return {
            "name": self.name,
            "file": self.file,
            "description": self.description,
            "tools": [
                {**t.schema()["function"], "line": t.line} for t in self.tools
            ],
            "cases": [
                {
                    "name": c.name,
                    "line": c.line,
                    "prompt": c.prompt,
                    "setup": c.setup,
                    "settings": {
                        "repeat": c.settings.repeat,
                        "pass_rate": c.settings.pass_rate,
                        "timeout_s": c.settings.timeout_s,
                        "system": c.settings.system,
                        "mode": c.settings.mode,
                        "max_turns": c.settings.max_turns,
                        "skip": c.settings.skip,
                        "xfail": c.settings.xfail,
                        "tags": list(c.settings.tags),
                        "tools": None if c.settings.tools is None else list(c.settings.tools),
                    },
                    "expectations": [
                        {"label": e.label, "line": e.line, "from_suite": e.from_suite}
                        for e in c.expectations
                    ],
                    **_v2_json(c),
                }
                for c in self.cases
            ],
            **({"world": {"spec": self.world.spec, "file": self.world.file, "class": self.world.name,
                          "imported": self.world.loaded}} if self.world is not None else {}),
        }


def _v2_json(case: CompiledCase) -> dict[str, Any]:
    """A case's conversation and `given` lines for `to_json` (v2); nothing for a v1 case, whose
    JSON stays as it was."""
    out: dict[str, Any] = {}
    if case.turns:
        out["turns"] = [{"message": t.message, "line": t.line,
                         "expectations": [{"label": e.label, "line": e.line} for e in t.expectations]}
                        for t in case.turns]
    if case.simulated_user is not None:
        out["simulated_user"] = {"instructions": case.simulated_user, "user_turns": case.settings.user_turns}
    if case.given:
        out["given"] = [{"tool": g.tool, "line": g.line, "answers": [{"ok": s.ok, "text": s.text} for s in g.steps]}
                        for g in case.given]
    return out
