"""The compiled suite: what `compile()` returns and the runner executes.

A compiled expectation is a plain callable over an `EvalContext`; it was
built once by the compiler and a run only calls it. Nothing here knows how
an agent is run or how results are reported.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, Protocol

from ..artifacts import RunArtifacts
from ._positions import ByPosition


@dataclass(frozen=True)
class JudgeVerdict:
    """A judge's grade of one run: its score and why."""

    score: float
    """From 0 (the rubric is not met at all) to 1 (fully met)."""
    reasoning: str = ""
    """The judge's explanation, shown in the expectation's detail."""


class JudgeFn(Protocol):
    """Grades a run against a rubric.

    Returns a score in [0, 1], a ``(score, reasoning)`` pair or a
    `JudgeVerdict` (or an awaitable of one of these: an ``async def`` judge).
    Raises an exception when the judge's reply cannot be read: the run is
    then an error, never given a default score.
    """

    def __call__(
        self, *, rubric: str, prompt: str, artifacts: RunArtifacts
    ) -> float | tuple[float, str] | JudgeVerdict | Awaitable[float | tuple[float, str] | JudgeVerdict]: ...


PredicateFn = Callable[..., Any]
"""A custom predicate: ``fn(artifacts, world, **kwargs)`` returning a bool,
a credit in [0, 1], or a ``(bool, detail)`` pair."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of one expectation (or sub-expression) on one run."""

    credit: float
    """1.0 when it holds fully, a fallback's credit, or 0.0."""
    detail: str | None = None
    """What was expected and what happened, when it did not fully hold (a
    judge's score and reasoning, always)."""

    @property
    def passed(self) -> bool:
        return self.credit > 0


class _NoState:
    """The type of `NO_STATE`."""

    _instance: _NoState | None = None

    def __new__(cls) -> _NoState:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_STATE"

    def __bool__(self) -> bool:
        return False


NO_STATE: Any = _NoState()
"""`EvalContext.world_state` when the runner set none (a world's state may itself be ``null``)."""


@dataclass
class EvalContext:
    """What an expectation sees: the run's artifacts and its surroundings."""

    artifacts: RunArtifacts
    prompt: str = ""
    world: Any = None
    """A harness's world (what its `setup` built), or the case's world instance (LANGUAGE.md 14)."""
    duration_s: float | None = None
    judge: JudgeFn | None = None
    predicates: Mapping[str, PredicateFn] = field(default_factory=dict)
    world_state: Any = NO_STATE
    """The world's state as JSON, for `expect world` (v2). The runner sets it: for a turn's
    expectation, the state after that turn; for a whole-run (or whole-conversation) one, the
    state at the end of the run. Left `NO_STATE`, `expect world` asks ``world.state()`` of a
    harness's world when it has that method, and fails otherwise, saying why."""
    tools: Sequence[Any] | None = None
    """The `CompiledTool`s the run was offered (v2: the case's `tools` setting, else every declared
    tool), for `valid arguments`; None when the scorer does not know them."""


Check = Callable[[EvalContext], Outcome]


@dataclass(frozen=True, slots=True)
class CompiledExpectation:
    """One `expect` line, compiled."""

    label: str
    """Its canonical source text, e.g. ``called calculator with <op: add>``."""
    file: str
    line: int
    check: Check
    """Evaluates the expectation (partial credit included) on one run."""
    needs_judge: bool = False
    from_suite: bool = False
    """True for a suite-wide expectation (written in the suite's head)."""

    def __call__(self, ctx: EvalContext) -> Outcome:
        return self.check(ctx)

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


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


class _MadeWhenRead(ByPosition[CompiledCase]):
    """Cases that a sequence makes when they are read (`LazyCases`, `SuiteCases`)."""

    what = "case"


class LazyCases(_MadeWhenRead):
    """Cases made one at a time when asked for (the rows of an `examples from` file), never kept.

    ``len`` is free; ``cases[i]`` and iteration build each case anew from its
    row and the case's compiled template, so a file of 100,000 rows costs its
    rows' text, not 100,000 compiled cases. Two reads of one row give equal
    cases (not the same object): key cases by id or name, not by ``id()``.
    """

    def __init__(self, count: int, build: Callable[[int], CompiledCase],
                 keys: Sequence[tuple[str, str]] | None = None,
                 outline: Callable[[int, bool], CompiledCase] | None = None, *, one_case: bool = False) -> None:
        self._count, self._build, self._keys, self._outline = count, build, keys, outline
        self.one_case = one_case
        """Every row is made from one `case` block (the compiler's rows of an examples file): the rows share
        its shape (a conversation or not, a world or not), so its first row tells it for all."""

    def outlined(self, labels: bool = True) -> Sequence[CompiledCase]:
        """The same cases as outlines, made when read: what describes them, not what runs them (`outlined`)."""
        outline = self._outline
        if outline is None:
            return self
        return LazyCases(self._count, lambda i: outline(i, labels), self._keys, one_case=self.one_case)

    def keys(self) -> Iterator[tuple[str, str]]:
        """Each case's (file, name), in order, without making the cases when they are known."""
        if self._keys is not None:
            return iter(self._keys)
        return ((c.file, c.name) for c in self)

    def __len__(self) -> int:
        return self._count

    def _at(self, i: int) -> CompiledCase:
        return self._build(i)

    def __iter__(self) -> Iterator[CompiledCase]:
        build = self._build
        for i in range(self._count):
            yield build(i)

    def __repr__(self) -> str:
        return f"<{self._count} cases made from examples rows when asked for>"


def case_keys(cases: Iterable[CompiledCase]) -> Iterator[tuple[str, str]]:
    """Each case's (file, name), in order; for `LazyCases` and `SuiteCases`, without making them."""
    if isinstance(cases, (LazyCases, SuiteCases)):
        return cases.keys()
    return ((c.file, c.name) for c in cases)


def outlined(cases: Sequence[CompiledCase], labels: bool = True) -> Sequence[CompiledCase]:
    """The cases as far as a description of them goes, for passes that do not run them.

    Name, file, line, prompt, settings, setup and tools are the cases' own,
    and so are the expectations' labels, files and lines (none at all when
    ``labels`` is false), but an expectation made from an `examples from`
    row has no compiled check (calling it raises): such a row's outline
    costs about half of making its case. Cases held in memory are given as
    they are.
    """
    if isinstance(cases, (LazyCases, SuiteCases)):
        return cases.outlined(labels)
    return cases


class SuiteCases(_MadeWhenRead):
    """A suite's cases when some of them are `LazyCases`: the parts one after another, in order."""

    def __init__(self, parts: list[Sequence[CompiledCase]]) -> None:
        self._parts = [p for p in parts if len(p)]
        self._starts = list(accumulate((len(p) for p in self._parts), initial=0))

    def __len__(self) -> int:
        return self._starts[-1]

    def _at(self, i: int) -> CompiledCase:
        part = bisect_right(self._starts, i) - 1
        return self._parts[part][i - self._starts[part]]

    def __iter__(self) -> Iterator[CompiledCase]:
        for part in self._parts:
            yield from part

    @property
    def parts(self) -> list[Sequence[CompiledCase]]:
        """The parts, in order: cases held, or `LazyCases` (the rows of one case's examples file)."""
        return self._parts

    def keys(self) -> Iterator[tuple[str, str]]:
        """Each case's (file, name), in order (see `case_keys`)."""
        for part in self._parts:
            yield from case_keys(part)

    def outlined(self, labels: bool = True) -> Sequence[CompiledCase]:
        """The cases as outlines (see `outlined`), part by part."""
        return SuiteCases([outlined(part, labels) for part in self._parts])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (SuiteCases, tuple, list)):
            return len(self) == len(other) and all(x == y for x, y in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self)} cases, {sum(isinstance(p, LazyCases) for p in self._parts)} part(s) made when asked for>"


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
