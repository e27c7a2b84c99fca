"""The run record: what a run of cases produced, as versioned pydantic models.

`EvalReport` is both the return value of `run_suite` and the JSON file that
`evaldsl run --json/--out` writes; reports, `--lf`, `--resume` and
dashboards read only this. It carries ``schema_version`` from the first
release so that a reader can tell an old record from a new one.

How the numbers are defined:

- A *run* is one call of the agent; a case with ``repeat N`` has N runs.
- A run's *score* is the product of its expectations' credits, 0 for an
  error. It *passes* when it is no error and every credit is above 0.
- A case's ``pass_rate`` is passed runs / runs; ``score`` the mean of its
  runs' scores; ``wilson_95`` the Wilson score 95% interval of the pass rate.
  A skipped case has none of these (null) and counts in no average.
- ``summary.accuracy`` = (passed + xpassed) / (total - skipped): the share of
  the cases that ran whose runs met their pass-rate gate. ``xfail`` marks
  change the exit code, not the measurement, so two agents compare fairly
  whatever the suite expects of them. Null when no case ran.
- ``summary.average_score`` = the mean case score over the cases that ran
  (error cases count as 0); null when no case ran.
- Latency is over every run that ran, errors included (a run that timed out
  counts as the time until it was abandoned); p50 and p95 by nearest rank.
- Tokens are over the runs that reported a count; both are null when none
  did, so a summary never shows a misleading 0.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..artifacts import RunArtifacts

SCHEMA_VERSION = 3
"""2 added ``ErrorInfo.kind``; 3 added conversations (``RunResult.conversation``, ``ExpectationResult.turn``)
and ``CaseResult.tools``. Records of versions 1 and 2 still read (their errors have no kind; their runs no
conversation; their cases no tools)."""
READABLE_SCHEMA_VERSIONS = (1, 2, 3)
"""The record versions this evaldsl reads (`report`, `compare`, `rescore`, `merge`, `--resume`)."""

ErrorKind = Literal[
    "timeout", "agent_raised", "agent_error", "invalid_artifacts", "agent_protocol",
    "backend_http", "backend_overloaded", "backend_connection", "backend_protocol", "max_turns",
    "regex_timeout", "predicate_timeout", "judge_unreadable", "judge_missing", "scoring_error",
    "cancelled", "executor", "world_error",
]
"""Why a run is an error, for programs (`--resume`, `--lf`, dashboards): never parse the message.

- ``timeout``: the run took longer than the case's ``timeout``;
- ``agent_raised``: the agent raised an exception; ``agent_error``: it returned artifacts with
  ``error`` set (no more precise kind given); ``invalid_artifacts``: it returned something that is
  not `RunArtifacts`; ``agent_protocol``: an agent reached over a protocol broke it;
- ``backend_http``: the model endpoint answered with an HTTP error status that asking again cannot
  fix (a 4xx); ``backend_overloaded``: it kept answering 429 or 5xx through every retry;
  ``backend_connection``: it could not be reached, or did not answer in time, through every retry;
  ``backend_protocol``: its reply could not be read; ``max_turns``: the model made ``max turns`` calls
  without a final answer;
- ``regex_timeout``: a regex (an expectation's or a mock tool's) ran past its time limit;
  ``predicate_timeout``: user code called while scoring (a custom predicate) did not return within
  the case's timeout; ``judge_unreadable``: the judge's reply could not be read after a retry;
  ``judge_missing``: a `judge` expectation ran without a judge; ``scoring_error``: an expectation
  raised while it was evaluated;
- ``cancelled``: the run was cancelled (``-x`` stopped the run while it was in flight, or the agent
  cancelled itself); ``executor``: the executor could not run it (a Ray worker died);
- ``world_error``: the suite's world failed: its constructor, ``state()`` or ``close()`` raised (v2).
"""
ERROR_KINDS: tuple[str, ...] = ErrorKind.__args__  # type: ignore[attr-defined]

Status = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


class _Model(BaseModel):
    # The docstring under each field documents it; `record_schema` puts them into the JSON Schema.
    # (pydantic's ``use_attribute_docstrings`` would read this file's source at every import: a
    # fifth of importing the record models, paid by every `evaldsl run`.)
    model_config = ConfigDict(extra="forbid")


class ErrorInfo(_Model):
    """Why a run is an error."""

    type: str
    """The exception's class name (``TimeoutError`` for a timeout, ``AgentError``
    when the agent reported ``error`` in its artifacts)."""
    message: str
    """The exception's message, or the artifacts' ``error`` text (cut at 65,536
    characters, saying so; an unreadable message is replaced by its repr)."""
    traceback: str | None = None
    """The formatted traceback, when an exception was raised (cut likewise)."""
    kind: ErrorKind | None = None
    """Why the run is an error, as one word for programs (see `ErrorKind`); null in records made
    before version 2."""


class ExpectationResult(_Model):
    """One expectation evaluated on one run."""

    label: str
    """The expectation's canonical source text, e.g. ``final number is 4``."""
    passed: bool
    """True when its credit is above 0."""
    credit: float
    """1 when the main expression held, a fallback's credit, else 0."""
    detail: str | None = None
    """What was expected and what happened, when it did not fully hold."""
    file: str
    """The file the expectation was written in."""
    line: int
    """Its line in that file."""
    turn: int | None = None
    """The turn (from 1) of a conversation whose `user` line it stands under; null for an expectation
    that judges the whole run (or conversation). Null in records made before version 3."""


class TurnResult(_Model):
    """One turn of a conversation: a user message and what the agent did in answer."""

    turn: int
    """Its number, from 1."""
    message: str
    """The user message sent."""
    simulated: bool = False
    """True when a simulated user wrote the message (LANGUAGE.md 12)."""
    artifacts: RunArtifacts | None = None
    """What the agent returned for this turn (its calls, its reply as the final text, its tokens); null
    when it raised or timed out."""
    latency_s: float = 0.0
    """Wall-clock seconds of the agent's answer to this message."""
    world_state: Any = None
    """The world's state (JSON) after this turn; null when the suite has no world (or the state was null)."""


class ConversationResult(_Model):
    """How a run's conversation went (every run of a case with `user` lines, a simulated user or a world)."""

    turns: list[TurnResult] = Field(default_factory=list)
    """Every turn sent, in order; a turn the agent failed is the last."""
    ended_by: Literal["script", "user", "bound", "error"] = "script"
    """``script``: every scripted message was answered; ``user``: the simulated user said it was done;
    ``bound``: the simulated user reached ``user turns N``; ``error``: an agent error (or timeout) ended it."""
    user_tokens: int | None = None
    """Tokens the simulated user's model used, kept apart from the agent's; null when none reported."""


class RunResult(_Model):
    """One run (one repeat) of a case."""

    index: int
    """Which repeat this is, from 0."""
    passed: bool
    """No error and every expectation's credit above 0."""
    score: float
    """The product of the expectations' credits; 0 for an error."""
    latency_s: float
    """Wall-clock seconds of the agent's run (the harness's setup excluded)."""
    error: ErrorInfo | None = None
    """Set when the agent raised, timed out, returned something that is not
    artifacts, reported an error, or an expectation could not be evaluated."""
    expectations: list[ExpectationResult] = Field(default_factory=list)
    """Each expectation's result, in case order (empty when the agent raised or timed out)."""
    artifacts: RunArtifacts | None = None
    """What the agent returned; null when it raised or timed out."""
    warnings: list[str] = Field(default_factory=list)
    """What the runner had to change to record the artifacts: each value JSON
    cannot hold (recorded as its repr), lone surrogates (escaped), NaN and the
    infinities (kept as strings), with where it was; empty for plain JSON."""
    conversation: ConversationResult | None = None
    """The turns of a conversation (or of a run against a world), each with its message, artifacts and the
    world's state after it; null for a single-prompt run without a world. ``artifacts`` then holds the whole
    conversation: every turn's calls in order, the last reply, the tokens summed, every message."""


class Interval(_Model):
    """A confidence interval."""

    low: float
    """Lower bound."""
    high: float
    """Upper bound."""


class CaseResult(_Model):
    """One case: its status, statistics and runs."""

    suite: str
    """The suite's display name."""
    name: str
    """The case's name (unique within its suite)."""
    file: str
    """The .evl file the case comes from."""
    line: int
    """The line of its ``case`` statement."""
    prompt: str
    """The instruction sent to the agent."""
    status: Status
    """passed, failed, error, skipped, xfailed or xpassed (docs/language.md 6.6)."""
    score: float | None = None
    """Mean of the runs' scores; null when skipped."""
    pass_rate: float | None = None
    """Passed runs / runs; null when skipped."""
    wilson_95: Interval | None = None
    """Wilson score 95% interval of the pass rate; null when skipped."""
    required_pass_rate: float = 1.0
    """The case's ``pass rate at least`` gate."""
    repeat: int = 1
    """How many runs the case asked for."""
    latency_s: float | None = None
    """Mean latency of its runs; null when skipped."""
    tags: list[str] = Field(default_factory=list)
    """The case's tags, suite tags included."""
    skip: str | None = None
    """The skip reason ('' when none was given); null when not skipped."""
    xfail: str | None = None
    """The xfail reason ('' when none was given); null when not marked xfail."""
    runs: list[RunResult] = Field(default_factory=list)
    """One entry per run, in repeat order; empty when skipped."""
    tools: list[str] | None = None
    """The names of the tools each of its runs was offered, in order (v2: its `tools` setting, else every
    declared tool); null when the suite declares none (or in a record before version 3)."""

    @property
    def id(self) -> str:
        """``file::name``, as in pytest node ids."""
        return f"{self.file}::{self.name}"


class Summary(_Model):
    """Totals and statistics over the cases of a report."""

    total: int = 0
    """Cases in the report, skipped ones included."""
    passed: int = 0
    """Cases whose status is passed."""
    failed: int = 0
    """Cases whose status is failed."""
    errors: int = 0
    """Cases whose status is error (every run errored)."""
    skipped: int = 0
    """Cases whose status is skipped."""
    xfailed: int = 0
    """Cases marked xfail that failed or errored."""
    xpassed: int = 0
    """Cases marked xfail that passed."""
    runs: int = 0
    """Runs made, over all cases."""
    accuracy: float | None = None
    """(passed + xpassed) / (total - skipped); null when no case ran."""
    average_score: float | None = None
    """Mean case score over the cases that ran; null when none ran."""
    latency_mean_s: float | None = None
    """Mean run latency in seconds, over every run."""
    latency_p50_s: float | None = None
    """Median run latency (nearest rank)."""
    latency_p95_s: float | None = None
    """95th percentile run latency (nearest rank)."""
    tokens_total: int | None = None
    """Sum of the token counts of the runs that reported one; null when none did."""
    tokens_mean: float | None = None
    """tokens_total / the number of runs that reported a count; null when none did."""


class RunMeta(_Model):
    """Where a report comes from."""

    evaldsl_version: str = ""
    """The evaldsl version that made the record."""
    agent: str = ""
    """The agent's or model's name (``--model-name``, else the agent's own name)."""
    backend: str = "agent"
    """How the cases were run: ``agent``, ``harness`` or ``model`` (``evaldsl run --model``)."""
    started_at: datetime | None = None
    """When the run started (UTC)."""
    finished_at: datetime | None = None
    """When the record was last written (UTC)."""
    complete: bool = False
    """False while running, and in a record of an interrupted or ``-x`` stopped run."""
    suites: list[str] = Field(default_factory=list)
    """The suite files, in run order."""
    git_commit: str | None = None
    """The commit checked out where the suites live, when they are in a git repository."""
    command: str | None = None
    """The command line, for runs made by ``evaldsl run``."""
    concurrency: int | None = None
    """The bound on runs in flight."""
    selection: dict[str, str | list[str] | bool | None] = Field(default_factory=dict)
    """The selection options used (keyword, markers, tags, last_failed)."""
    model: dict[str, Any] | None = None
    """A model run's endpoint: provider, model, base_url, sampling (never a key)."""
    judge: dict[str, Any] | None = None
    """The judge's provider, model, base_url and template (null: the shipped one), when one was named."""
    user_model: dict[str, Any] | None = None
    """The simulated user's provider, model, base_url and template (null: the shipped one), when
    ``--user-model`` named one (v3)."""
    cache: dict[str, Any] | None = None
    """The response cache of a run that called models: directory, hits, misses (null: off or unused)."""
    suite_version: str | None = None
    """A fingerprint of the loaded cases (`run._shard.suite_version`); `evaldsl merge` joins
    only records with the same one. Null in records made before it existed."""
    shard: str | None = None
    """``I/N`` when the run was one shard of N (``--shard``); null otherwise."""


class EvalReport(_Model):
    """The result of running cases against an agent: the JSON run record."""

    schema_version: int = SCHEMA_VERSION
    """The record format's version; bumped on any incompatible change."""
    meta: RunMeta = Field(default_factory=RunMeta)
    """Where the report comes from."""
    summary: Summary = Field(default_factory=Summary)
    """Totals and statistics over ``cases``."""
    cases: list[CaseResult] = Field(default_factory=list)
    """Every case, in file and case order."""

    @property
    def ok(self) -> bool:
        """True when no case failed or errored (xfailed, xpassed and skipped do not count)."""
        return self.summary.failed == 0 and self.summary.errors == 0

    def failures(self) -> list[CaseResult]:
        """The cases that failed or errored, in order."""
        return [c for c in self.cases if c.status in ("failed", "error")]


def record_schema() -> dict[str, Any]:
    """The JSON Schema of a record (`evaldsl schema --record`): `EvalReport`'s, each field described
    by the docstring under it in this file."""
    from pydantic.json_schema import GenerateJsonSchema

    from .._docstrings import field_docstrings

    schema = EvalReport.model_json_schema()
    documented = field_docstrings(__file__)
    for name, fields in documented.items():
        target = schema if name == "EvalReport" else schema.get("$defs", {}).get(name)
        for field, prop in (target or {}).get("properties", {}).items():
            if field in fields and "description" not in prop:
                prop["description"] = fields[field]
    return GenerateJsonSchema().sort(schema)  # the keys in pydantic's order, descriptions included
