"""Statistics: Wilson interval, nearest-rank percentiles, case status, summary definitions."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaldsl.artifacts import RunArtifacts
from evaldsl.run._record import CaseResult, ErrorInfo, RunResult
from evaldsl.run._stats import case_status, nearest_rank, summarize, wilson_interval


def run(passed: bool = True, *, error: bool = False, latency: float = 1.0, tokens: int | None = None) -> RunResult:
    return RunResult(
        index=0, passed=passed and not error, score=1.0 if passed and not error else 0.0, latency_s=latency,
        error=ErrorInfo(type="E", message="m") if error else None,
        artifacts=RunArtifacts(tokens=tokens),
    )


def result(status: str, score: float | None = 1.0, runs: list[RunResult] | None = None) -> CaseResult:
    return CaseResult(suite="s", name=status, file="f.evl", line=1, prompt="p", status=status,  # type: ignore[arg-type]
                      score=None if status == "skipped" else score, runs=runs if runs is not None else [run()])


@pytest.mark.parametrize(
    ("passed", "n", "low", "high"),
    [(0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (10, 10, 0.7225, 1.0), (1, 1, 0.2065, 1.0), (81, 263, 0.2553, 0.3662)],
)
def test_wilson_interval_known_values(passed: int, n: int, low: float, high: float) -> None:
    ci = wilson_interval(passed, n)
    assert ci.low == pytest.approx(low, abs=1e-4) and ci.high == pytest.approx(high, abs=1e-4)


def test_wilson_with_no_runs_is_everything() -> None:
    ci = wilson_interval(0, 0)
    assert (ci.low, ci.high) == (0.0, 1.0)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_rate_and_stays_in_unit_interval(pair: tuple[int, int]) -> None:
    passed, n = pair
    ci = wilson_interval(passed, n)
    assert 0.0 <= ci.low <= passed / n + 1e-12 and passed / n - 1e-12 <= ci.high <= 1.0


def test_nearest_rank() -> None:
    values = [float(v) for v in range(20, 0, -1)]  # unsorted on purpose
    assert nearest_rank(values, 50) == 10 and nearest_rank(values, 95) == 19 and nearest_rank(values, 100) == 20
    assert nearest_rank([3.0], 95) == 3.0
    assert nearest_rank([1.0, 2.0], 50) == 1.0  # ceil(0.5 * 2) = rank 1
    assert nearest_rank([], 50) is None


@pytest.mark.parametrize(
    ("runs", "required", "xfail", "expected"),
    [
        ([run()], 1.0, False, "passed"),
        ([run(False)], 1.0, False, "failed"),
        ([run(error=True)], 1.0, False, "error"),
        ([run(error=True), run(False)], 1.0, False, "failed"),  # not every run errored
        ([run(error=True), run()], 0.5, False, "passed"),
        ([run(), run(), run(False)], 0.67, False, "failed"),
        ([run(), run(), run(False)], 0.66, False, "passed"),
        ([run()] * 3 + [run(False)] * 7, 0.3, False, "passed"),  # 3/10 meets 0.3 despite float rounding
        ([run(False)], 1.0, True, "xfailed"),
        ([run(error=True)], 1.0, True, "xfailed"),
        ([run()], 1.0, True, "xpassed"),
    ],
)
def test_case_status(runs: list[RunResult], required: float, xfail: bool, expected: str) -> None:
    assert case_status(runs, required, xfail) == expected


def test_summary_definitions() -> None:
    cases = [
        result("passed", 1.0, [run(latency=1.0, tokens=10)]),
        result("failed", 0.5, [run(False, latency=2.0, tokens=30)]),
        result("error", 0.0, [run(error=True, latency=4.0)]),
        result("skipped", runs=[]),
        result("xfailed", 0.0, [run(False, latency=3.0)]),
        result("xpassed", 1.0, [run(latency=5.0)]),
    ]
    s = summarize(cases)
    assert (s.total, s.passed, s.failed, s.errors, s.skipped, s.xfailed, s.xpassed, s.runs) == (6, 1, 1, 1, 1, 1, 1, 5)
    assert s.accuracy == pytest.approx(2 / 5)
    assert s.average_score == pytest.approx((1.0 + 0.5 + 0 + 0 + 1.0) / 5)
    assert s.latency_mean_s == pytest.approx(3.0)
    assert (s.latency_p50_s, s.latency_p95_s) == (3.0, 5.0)
    assert (s.tokens_total, s.tokens_mean) == (40, 20.0)


def test_summary_of_nothing_run_is_null_not_zero() -> None:
    s = summarize([result("skipped", runs=[])])
    assert s.accuracy is None and s.average_score is None and s.latency_mean_s is None
    assert s.tokens_total is None and s.tokens_mean is None
    assert summarize([]).total == 0


def test_repeat_latency_counts_every_run() -> None:
    s = summarize([result("passed", 1.0, [run(latency=1.0), run(latency=3.0)])])
    assert s.runs == 2 and s.latency_mean_s == 2.0 and not math.isnan(s.latency_mean_s)
