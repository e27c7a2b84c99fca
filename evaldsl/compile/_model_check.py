"""What a compiled expectation is, sees and gives: `CompiledExpectation`, `EvalContext`, `Outcome`.

A compiled expectation is a plain callable over an `EvalContext`; it was
built once by the compiler and a run only calls it. The judge and custom
predicates it may call are handed in through the context (`JudgeFn`,
`PredicateFn`), so compile never imports the code that runs them.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from ..artifacts import RunArtifacts


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
C = TypeVar("C", bound=type)


def quick_state(cls: C) -> C:
    """``cls`` (a frozen dataclass with slots) pickled as the tuple of its fields and read back through its
    slots' descriptors: the suite cache reads back a case and five expectations a case, and the state
    dataclasses give such a class (`dataclasses._dataclass_setstate`) lists its fields again for every
    object read (13 -> 7.6 us a case of bench_run.py's suite, the collector off as the cache has it).
    The reading is written out a field a line (made by `exec`, as dataclasses makes ``__init__``): a
    loop over the fields costs a sixth more."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    scope: dict[str, Any] = {f"_set{i}": cls.__dict__[name].__set__ for i, name in enumerate(names)}
    scope["__name__"] = cls.__module__
    values = ", ".join(f"v{i}" for i in range(len(names)))
    lines = "".join(f"\n    _set{i}(self, v{i})" for i in range(len(names)))
    exec(f"def __setstate__(self, values):\n    {values}, = values{lines}", scope)  # noqa: S102 (our own text)
    state = operator.attrgetter(*names)  # (a tuple: every such class has two fields or more)

    def __getstate__(self: Any) -> tuple[Any, ...]:
        return state(self)  # type: ignore[no-any-return]

    cls.__getstate__ = __getstate__  # type: ignore[attr-defined]
    scope["__setstate__"].__qualname__ = f"{cls.__qualname__}.__setstate__"
    cls.__setstate__ = scope["__setstate__"]  # type: ignore[attr-defined]
    return cls


@quick_state
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
