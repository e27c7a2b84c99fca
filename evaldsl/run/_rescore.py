"""Rescoring: today's expectations over the artifacts a stored record kept.

A record keeps what the agent returned for every run (`RunResult.artifacts`),
so a changed or added expectation can be measured without calling the agent
(or the model) again: compile the current `.evl` files, and for each case of
the record, evaluate the current case's expectations on each stored run with
`evaluate`, the runner's own evaluation (the same closures, the same
error handling, the same score and status rules).

Rules, so that a rescored record never mixes two questions:

- A case is matched by `case_key` (file and name). A case that no longer
  exists, or whose prompt changed (the stored answers answer another
  question), is *stale*: listed, and left out of the new record.
- A case the current suite skips is recorded as skipped. A case the record
  skipped (no stored runs) that the suite no longer skips cannot be rescored
  without running it: stale too.
- A run with no artifacts (the agent raised or timed out) keeps its error;
  a run whose artifacts report an error stays an ``AgentError``, as in a run.
- `judge` expectations call the judge passed in, and the result counts how
  many judge calls were made; without a judge they are errors saying so
  (``NoJudge``), never a default score.
- A harness's world is not stored, so a custom predicate sees ``world=None``.
- A conversation's run (record v3) is judged again turn by turn from its stored turns: each turn's
  expectations on that turn, `expect world` on the state stored after it, the whole conversation's
  on the turns merged. A case whose scripted `user` messages changed is stale ("the conversation
  changed"); an agent error that ended the conversation stays the run's error.
- Cases of the current suites that the record does not hold are counted in
  ``not_in_record``; run them to measure them.

The new record keeps the old one's metadata (agent, backend, suites, git
commit, selection) except ``started_at``/``finished_at`` (the rescore's own
times, so its upload key differs from the original's), ``evaldsl_version``
and ``command``. The old record is only read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..compile._model import CompiledCase, CompiledSuite, EvalContext, JudgeFn, PredicateFn
from ._builder import now
from ._record import CaseResult, ErrorInfo, EvalReport, RunResult
from ._scoring import evaluate
from ._select import case_key
from ._stats import case_result, summarize
from ._threads import DaemonPool


@dataclass(frozen=True)
class StaleCase:
    """A case of the record that was not rescored, and why."""

    file: str
    name: str
    suite: str
    reason: str
    """``no longer exists``, ``the prompt changed`` or ``not run in the record``."""


@dataclass
class Rescored:
    """What `rescore` made."""

    report: EvalReport
    """The new record: the rescored cases only."""
    stale: list[StaleCase] = field(default_factory=list)
    """Cases of the old record left out, in record order."""
    judge_calls: int = 0
    """Judge expectations evaluated with the judge."""
    needs_judge: int = 0
    """Judge expectations that could not be evaluated: no judge was given."""
    not_in_record: int = 0
    """Cases of the suites that the record does not hold (not run, so not scored)."""


def rescore(
    record: EvalReport,
    suites: Iterable[CompiledSuite | CompiledCase],
    *,
    judge: JudgeFn | None = None,
    predicates: Mapping[str, PredicateFn] | None = None,
    command: str | None = None,
) -> Rescored:
    """Re-evaluate ``suites``' expectations over the artifacts stored in ``record``.

    Args:
        record: the stored record (not modified).
        suites: the current compiled suites (or cases).
        judge: called by `judge` expectations; without it they are errors.
        predicates: custom predicates (a harness's), when the suites use them.
        command: the command line to note in the new record's metadata.
    """
    from ._api import run_async

    return run_async(arescore(record, suites, judge=judge, predicates=predicates, command=command))


async def arescore(
    record: EvalReport,
    suites: Iterable[CompiledSuite | CompiledCase],
    *,
    judge: JudgeFn | None = None,
    predicates: Mapping[str, PredicateFn] | None = None,
    command: str | None = None,
) -> Rescored:
    """`rescore`, in a running event loop."""
    from .. import __version__

    current: dict[tuple[str, str], CompiledCase] = {}
    for item in suites:
        for case in item.cases if isinstance(item, CompiledSuite) else (item,):
            current.setdefault(case_key(case.file, case.name), case)
    out = Rescored(report=EvalReport())
    pool = DaemonPool("evaldsl-rescore")
    cases: list[CaseResult] = []
    seen: set[tuple[str, str]] = set()
    for old in record.cases:
        key = case_key(old.file, old.name)
        seen.add(key)
        new = current.get(key)
        reason = _stale(old, new)
        if reason:
            out.stale.append(StaleCase(old.file, old.name, old.suite, reason))
            continue
        assert new is not None
        runs = [] if new.settings.skip is not None else [
            await _rescore_run(run, new, out, pool, judge, predicates or {}) for run in old.runs]
        cases.append(case_result(new, runs))
    out.not_in_record = sum(1 for key in current if key not in seen)
    when = now()
    meta = record.meta.model_copy(update={
        "started_at": when, "finished_at": when, "evaldsl_version": __version__, "command": command,
    })
    out.report = EvalReport(meta=meta, summary=summarize(cases), cases=cases)
    return out


def _stale(old: CaseResult, new: CompiledCase | None) -> str | None:
    if new is None:
        return "no longer exists"
    if new.prompt != old.prompt:
        return "the prompt changed"
    scripted = [t.message for t in new.turns]
    for run in old.runs:
        sent = [t.message for t in run.conversation.turns if not t.simulated] if run.conversation else []
        if run.conversation is not None and scripted and sent != scripted[:len(sent)]:
            return "the conversation changed"
    if new.settings.skip is None and not old.runs:
        return "not run in the record"
    return None


async def _rescore_run(
    run: RunResult,
    case: CompiledCase,
    out: Rescored,
    pool: DaemonPool,
    judge: JudgeFn | None,
    predicates: Mapping[str, PredicateFn],
) -> RunResult:
    if run.conversation is not None:
        return await _rescore_conversation(run, case, out, pool, judge, predicates)
    artifacts = run.artifacts
    if artifacts is None:  # the agent raised or timed out: nothing to evaluate
        return run.model_copy(update={"expectations": [], "passed": False, "score": 0.0})
    judged = sum(1 for e in case.expectations if e.needs_judge)
    if judge is None:
        out.needs_judge += judged
    else:
        out.judge_calls += judged
    ctx = EvalContext(artifacts=artifacts, prompt=case.prompt, world=None, duration_s=run.latency_s,
                      judge=judge, predicates=predicates, tools=case.tools)
    results, eval_error = await evaluate(case.expectations, ctx, pool=pool, timeout=case.settings.timeout_s)
    error = ErrorInfo(type="AgentError", message=artifacts.error,
                      kind=artifacts.error_kind or "agent_error") if artifacts.error else eval_error
    score = 0.0
    if error is None:
        score = 1.0
        for r in results:
            score *= r.credit
    return RunResult(
        index=run.index, passed=error is None and all(r.passed for r in results), score=score,
        latency_s=run.latency_s, error=error, expectations=results, artifacts=artifacts,
    )


async def _rescore_conversation(run: RunResult, case: CompiledCase, out: Rescored, pool: DaemonPool,
                                judge: JudgeFn | None, predicates: Mapping[str, PredicateFn]) -> RunResult:
    """A conversation's run: its turns judged again as `score_turns` judged them in the run (the world's
    state after each turn included); an agent error that ended it stays."""
    from ._turns import recorded_turns, score_turns

    conversation = run.conversation
    assert conversation is not None
    turns = recorded_turns(conversation, case)
    judged = sum(1 for e in case.expectations if e.needs_judge) + sum(
        1 for t in case.turns[:len(turns)] for e in t.expectations if e.needs_judge)
    if judge is None:
        out.needs_judge += judged
    else:
        out.judge_calls += judged
    results, eval_error, _ = await score_turns(case, turns, None, judge=judge, predicates=predicates, pool=pool)
    error = run.error if conversation.ended_by == "error" else eval_error
    score = 0.0 if error is not None else 1.0
    for r in results:
        score *= r.credit
    return run.model_copy(update={"expectations": results, "error": error, "score": score,
                                  "passed": error is None and all(r.passed for r in results)})
