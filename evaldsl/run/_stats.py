"""Statistics: from runs to a case's status, and from cases to a summary.

Kept apart from the scheduler so every number in a report is a pure
function of the runs, tested on its own. The definitions are those of
docs/language.md section 6.6 and the `_record` module docstring.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._record import CaseResult, Interval, RunResult, Status, Summary
from ._trusted import case_result as trusted_case
from ._trusted import one_run_case

Z_95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95% interval."""

if TYPE_CHECKING:  # only a type: reports can use this module without the compiler
    from ..compile._model import CompiledCase

_EPSILON = 1e-9


def wilson_interval(passed: int, runs: int, z: float = Z_95) -> Interval:
    """The Wilson score interval for ``passed`` successes in ``runs`` trials.

    Unlike the normal approximation it stays inside [0, 1] and is sensible
    for the small N of repeated agent runs (1 of 1 passed gives about
    [0.21, 1], not [1, 1]). With no runs it is the whole of [0, 1].
    """
    low, high = wilson_bounds(passed, runs, z)
    return Interval(low=low, high=high)


def wilson_bounds(passed: int, runs: int, z: float = Z_95) -> tuple[float, float]:
    """`wilson_interval`'s (low, high), without the model."""
    if runs <= 0:
        return 0.0, 1.0
    p = passed / runs
    z2 = z * z
    denom = 1 + z2 / runs
    centre = (p + z2 / (2 * runs)) / denom
    half = z * math.sqrt(p * (1 - p) / runs + z2 / (4 * runs * runs)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def nearest_rank(values: Sequence[float], percent: float) -> float | None:
    """The nearest-rank percentile: the smallest value with at least ``percent``% at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(percent / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def case_status(runs: Sequence[RunResult], required: float, xfail: bool) -> Status:
    """A run case's status per docs/language.md 6.6 (skips are decided before running)."""
    if runs and all(r.error is not None for r in runs):
        status: Status = "error"
    else:
        passed = sum(r.passed for r in runs)
        status = "passed" if runs and passed >= required * len(runs) - _EPSILON else "failed"
    if xfail:
        return "xpassed" if status == "passed" else "xfailed"
    return status


def case_result(case: CompiledCase, runs: Sequence[RunResult]) -> CaseResult:
    """The `CaseResult` of a case from its runs (or of a skipped case, with no runs)."""
    s = case.settings
    if s.skip is not None:
        return CaseResult(status="skipped", suite=case.suite, name=case.name, file=case.file, line=case.line,
                          prompt=case.prompt, required_pass_rate=s.pass_rate, repeat=s.repeat, tags=list(s.tags),
                          skip=s.skip, xfail=s.xfail, tools=_offered(case))
    n = len(runs)
    latency: float | None
    if n == 1:  # most cases run once: no sums over generators, `case_status` written out
        run = runs[0]
        passed, score, latency = int(run.passed), run.score + 0.0, run.latency_s + 0.0  # + 0.0: as sum() gives -0.0
        if run.error is not None:
            status: Status = "error"
        else:
            status = "passed" if passed >= s.pass_rate - _EPSILON else "failed"
        if s.xfail is not None:
            status = "xpassed" if status == "passed" else "xfailed"
        made = one_run_case(case, run, status, score, passed, _wilson_95(passed, 1))  # built at once (`_trusted`)
        if made is not None:
            return made
    else:
        passed = sum(r.passed for r in runs)
        score = sum(r.score for r in runs) / n if n else 0.0
        latency = sum(r.latency_s for r in runs) / n if n else None
        status = case_status(runs, s.pass_rate, s.xfail is not None)
    return trusted_case(  # built directly when every value has its type (`_trusted`)
        suite=case.suite,
        name=case.name,
        file=case.file,
        line=case.line,
        prompt=case.prompt,
        status=status,
        score=score,
        pass_rate=passed / n if n else 0.0,
        wilson_95=_wilson_95(passed, n),
        required_pass_rate=s.pass_rate,
        repeat=s.repeat,
        latency_s=latency,
        tags=list(s.tags),
        skip=None,
        xfail=s.xfail,
        runs=list(runs),
        tools=_offered(case),
    )


def _offered(case: CompiledCase) -> list[str] | None:
    """The names of the tools the case's runs are offered (`tools` in the record); None without any."""
    return [tool.name for tool in case.tools] if case.tools else None


@functools.lru_cache(maxsize=256)
def _wilson_95(passed: int, runs: int) -> tuple[float, float]:
    """`wilson_bounds` at 95%, kept: a suite's cases share a few (passed, runs) pairs."""
    return wilson_bounds(passed, runs)


CaseStats = tuple[str, "float | None", tuple[float, ...], tuple[int, ...]]
"""What a summary needs of a case: (status, score, its runs' latencies, the token counts its runs reported)."""


def case_stats(case: CaseResult) -> CaseStats:
    """The `CaseStats` of a case result (what `summarize` reads of it)."""
    runs = case.runs
    if len(runs) == 1:  # most cases run once: no generators over the runs
        run = runs[0]
        artifacts = run.artifacts
        tokens = artifacts.tokens if artifacts is not None else None
        return case.status, case.score, (run.latency_s,), () if tokens is None else (tokens,)
    return (
        case.status,
        case.score,
        tuple(r.latency_s for r in runs),
        tuple(r.artifacts.tokens for r in runs if r.artifacts is not None and r.artifacts.tokens is not None),
    )


def summarize(cases: Sequence[CaseResult]) -> Summary:
    """The `Summary` of a list of case results."""
    return summarize_stats([case_stats(c) for c in cases])


def summarize_stats(cases: Sequence[CaseStats]) -> Summary:
    """The `Summary` of cases given by their `CaseStats` (a run that keeps no case results in memory)."""
    counts = {status: 0 for status in ("passed", "failed", "error", "skipped", "xfailed", "xpassed")}
    for case in cases:
        counts[case[0]] += 1
    ran = [c for c in cases if c[0] != "skipped"]
    latencies = [x for c in ran for x in c[2]]
    tokens = [x for c in ran for x in c[3]]
    return Summary(
        total=len(cases),
        passed=counts["passed"],
        failed=counts["failed"],
        errors=counts["error"],
        skipped=counts["skipped"],
        xfailed=counts["xfailed"],
        xpassed=counts["xpassed"],
        runs=len(latencies),
        accuracy=(counts["passed"] + counts["xpassed"]) / len(ran) if ran else None,
        average_score=sum(c[1] or 0.0 for c in ran) / len(ran) if ran else None,
        latency_mean_s=sum(latencies) / len(latencies) if latencies else None,
        latency_p50_s=nearest_rank(latencies, 50),
        latency_p95_s=nearest_rank(latencies, 95),
        tokens_total=sum(tokens) if tokens else None,
        tokens_mean=sum(tokens) / len(tokens) if tokens else None,
    )
