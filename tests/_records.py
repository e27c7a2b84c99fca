"""Hand-built run records for the report tests: every field chosen, nothing run."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from evaldsl.artifacts import RunArtifacts
from evaldsl.run._record import CaseResult, EvalReport, ExpectationResult, RunMeta, RunResult
from evaldsl.run._stats import case_status, summarize, wilson_interval

STARTED = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def run(passed: bool = True, *, score: float | None = None, latency: float = 0.5, index: int = 0,
        error: tuple[str, str] | None = None, failed: list[tuple[str, str | None]] | None = None,
        text: str = "4") -> RunResult:
    """A run; ``failed`` lists (label, detail) of expectations that did not hold."""
    from evaldsl.run._record import ErrorInfo

    if not passed and not failed and error is None:
        failed = [("final number is 4", "expected the last number to be 4, got 5")]
    exps = [ExpectationResult(label="no error", passed=True, credit=1.0, file="suites/m.evl", line=3)]
    for label, detail in failed or []:
        exps.append(ExpectationResult(label=label, passed=False, credit=0.0, detail=detail, file="suites/m.evl",
                                      line=4))
    ok = passed and not failed and error is None
    return RunResult(
        index=index, passed=ok, score=(1.0 if ok else 0.0) if score is None else score, latency_s=latency,
        error=ErrorInfo(type=error[0], message=error[1]) if error else None,
        expectations=[] if error else exps,
        artifacts=None if error else RunArtifacts(final_text=text, tokens=10),
    )


def case(name: str, *runs: RunResult, suite: str = "Math", file: str = "suites/m.evl", prompt: str | None = None,
         required: float = 1.0, skip: str | None = None, xfail: str | None = None, line: int = 2,
         **extra: Any) -> CaseResult:
    """A case with its status and statistics computed from ``runs`` as the runner does."""
    base: dict[str, Any] = dict(suite=suite, name=name, file=file, line=line, prompt=prompt or f"prompt of {name}",
                                required_pass_rate=required, repeat=max(1, len(runs)), skip=skip, xfail=xfail,
                                **extra)
    if skip is not None:
        return CaseResult(status="skipped", **base)
    n, ok = len(runs), sum(r.passed for r in runs)
    return CaseResult(
        status=case_status(list(runs), required, xfail is not None),
        score=sum(r.score for r in runs) / n, pass_rate=ok / n, wilson_95=wilson_interval(ok, n),
        latency_s=sum(r.latency_s for r in runs) / n, runs=list(runs), **base,
    )


def record(*cases: CaseResult, agent: str = "agent-a", started: datetime = STARTED) -> EvalReport:
    meta = RunMeta(evaldsl_version="0.1.0", agent=agent, started_at=started, finished_at=started, complete=True,
                   suites=list(dict.fromkeys(c.file for c in cases)))
    return EvalReport(meta=meta, summary=summarize(list(cases)), cases=list(cases))


def outcomes(pattern: str, agent: str = "a") -> EvalReport:
    """A record of one case per character: ``p`` passed, ``f`` failed, ``e`` error, ``s`` skipped."""
    made = []
    for i, ch in enumerate(pattern):
        name = f"c{i:03d}"
        if ch == "s":
            made.append(case(name, skip=""))
        elif ch == "e":
            made.append(case(name, run(error=("RuntimeError", "boom"))))
        else:
            made.append(case(name, run(ch == "p")))
    return record(*made, agent=agent)
