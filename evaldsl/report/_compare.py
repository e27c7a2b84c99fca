"""Comparing two run records: what flipped, by how much, and is it real.

`compare_records(a, b)` is a pure function of two `EvalReport`s; the
`compare` command, the Markdown summary and the HTML dashboard all render
its `Comparison`. Everything is "B relative to A": a positive delta means B
did better.

Which cases are compared: a case is matched across the records by
`case_key` (its normalized file and its name, as `--resume` and `--lf`
match). A *paired* case is in both records, ran in both (skipped in
neither), and was asked the same prompt in both; only paired cases enter
the statistics. The others are listed, never dropped: ``only_in_a``,
``only_in_b``, and ``not_compared`` with the reason (skipped, or the prompt
differs, which makes it another question).

The statistics, over paired cases:

- A case *passes* when its status is passed or xpassed (it met its pass-rate
  gate; xfail marks change the exit code, not the measurement, as in
  ``summary.accuracy``). *fixed*: failed in A, passed in B; *regressed*: the
  reverse.
- ``accuracy``: the share of paired cases that passed, in A, in B, and B - A.
  ``score``: the mean case score likewise (an error counts as 0).
- ``mcnemar``: the exact McNemar test, i.e. the two-sided exact binomial
  test of the discordant pairs: with r regressed and f fixed (n = r + f),
  p = min(1, 2 * sum_{k <= min(r, f)} C(n, k) / 2^n); p = 1 when n = 0. It
  asks whether flips one way are likelier than the other; it ignores cases
  that did not flip, which is what makes it the paired test.
- ``bootstrap``: a paired percentile bootstrap of the mean of the per-case
  score differences (B - A): `RESAMPLES` resamples of the paired cases with
  replacement, from a `random.Random` seeded with `SEED`, so one pair of
  records always gives one interval. The 95% interval is the 2.5th and 97.5th
  percentiles, taken at mirrored positions so that swapping A and B exactly
  negates it. Null when no case is paired.
- ``verdict`` (of B against A): ``better`` or ``worse`` when McNemar's p is
  below 0.05, in the direction of the flips; else ``no_significant_difference``.
- ``pass_rate_changes``: paired cases run more than once (in either record)
  whose pass rate differs, whether or not their status flipped.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..run._record import CaseResult, EvalReport, Status
from ..run._select import case_key

COMPARISON_VERSION = 1
RESAMPLES = 10_000
"""Bootstrap resamples. At this count an endpoint's Monte Carlo error (how far another seed moves it)
is about 3% of the bootstrap's standard error: e.g. 0.003 when the difference's standard error is 0.1."""
SEED = 20_240_601
"""The bootstrap's seed: the same two records always give the same interval."""
ALPHA = 0.05
"""The significance level of the verdict."""
_PASSING = ("passed", "xpassed")

Change = Literal["fixed", "regressed", "same"]
Verdict = Literal["better", "worse", "no_significant_difference"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class RecordRef(_Model):
    """One side of the comparison, as its record describes itself."""

    agent: str
    """The agent's or model's name."""
    backend: str
    """How its cases were run."""
    started_at: datetime | None
    """When its run started."""
    cases: int
    """Cases in the record, skipped ones included."""
    accuracy: float | None
    """The record's own accuracy (over all its cases, not only the paired ones)."""
    average_score: float | None
    """The record's own average score."""
    complete: bool = True
    """False for the record of an interrupted or ``-x`` stopped run: its missing cases are only in the other."""


class CaseRef(_Model):
    """A case, by where it is written."""

    id: str
    """``file::name``, the file normalized as `case_key` does."""
    suite: str
    name: str
    file: str
    line: int


class NotCompared(CaseRef):
    """A case in both records that is left out of the statistics."""

    reason: str
    """``skipped in A``, ``skipped in B``, ``skipped in both`` or ``the prompt differs``."""


class CaseDelta(CaseRef):
    """A paired case: what it was in A and in B."""

    change: Change
    """fixed (failed in A, passed in B), regressed (the reverse) or same."""
    status_a: Status
    status_b: Status
    score_a: float
    score_b: float
    pass_rate_a: float
    pass_rate_b: float
    runs_a: int
    """How many runs A made of it."""
    runs_b: int


class Delta(_Model):
    """A statistic in A and in B, and B - A (null when either is)."""

    a: float | None
    b: float | None
    delta: float | None


class McNemar(_Model):
    """The exact McNemar test on the paired cases that flipped."""

    regressed: int
    """Passed in A, failed in B."""
    fixed: int
    """Failed in A, passed in B."""
    p_value: float
    """Two-sided exact binomial p of the split between the two (1 when nothing flipped)."""


class BootstrapInterval(_Model):
    """A paired bootstrap interval of the mean per-case score difference (B - A)."""

    mean_difference: float
    """The observed mean of score B - score A over the paired cases."""
    low: float
    high: float
    confidence: float = 0.95
    resamples: int
    seed: int


class Comparison(_Model):
    """Record B against record A (the `compare` command's result)."""

    schema_version: int = COMPARISON_VERSION
    """This format's version."""
    a: RecordRef
    b: RecordRef
    paired: int
    """Cases in both records, run in both, with the same prompt: the basis of every statistic."""
    accuracy: Delta
    """Share of the paired cases that passed."""
    score: Delta
    """Mean score of the paired cases."""
    fixed: list[CaseDelta] = Field(default_factory=list)
    """Paired cases that failed in A and passed in B, in A's order."""
    regressed: list[CaseDelta] = Field(default_factory=list)
    """Paired cases that passed in A and failed in B, in A's order."""
    pass_rate_changes: list[CaseDelta] = Field(default_factory=list)
    """Paired cases run more than once whose pass rate changed."""
    both_passed: int = 0
    both_failed: int = 0
    mcnemar: McNemar
    bootstrap: BootstrapInterval | None
    """Null when no case is paired."""
    verdict: Verdict
    """B against A, by McNemar at `ALPHA`."""
    only_in_a: list[CaseRef] = Field(default_factory=list)
    only_in_b: list[CaseRef] = Field(default_factory=list)
    not_compared: list[NotCompared] = Field(default_factory=list)
    """In both records but left out: skipped in one, or asked another prompt."""


def compare_records(
    a: EvalReport, b: EvalReport, *, resamples: int = RESAMPLES, seed: int = SEED
) -> Comparison:
    """Compare record ``b`` against record ``a`` (see the module docstring for every definition).

    Args:
        a: the reference record (the baseline, the older run).
        b: the record under test.
        resamples: bootstrap resamples.
        seed: the bootstrap's seed.
    """
    cases_a, cases_b = _by_key(a.cases), _by_key(b.cases)
    pairs: list[tuple[CaseResult, CaseResult]] = []
    not_compared: list[NotCompared] = []
    for key, ca in cases_a.items():
        cb = cases_b.get(key)
        if cb is None:
            continue
        reason = _excluded(ca, cb)
        if reason:
            not_compared.append(NotCompared(**_ref(ca).model_dump(), reason=reason))
        else:
            pairs.append((ca, cb))
    deltas = [_delta(ca, cb) for ca, cb in pairs]
    fixed = [d for d in deltas if d.change == "fixed"]
    regressed = [d for d in deltas if d.change == "regressed"]
    test = McNemar(regressed=len(regressed), fixed=len(fixed), p_value=mcnemar_p(len(regressed), len(fixed)))
    # The bootstrap draws in key order, so swapping A and B draws the same cases.
    diffs = [d.score_b - d.score_a for d in sorted(deltas, key=lambda d: _sort_key(d.file, d.name))]
    return Comparison(
        a=_record_ref(a),
        b=_record_ref(b),
        paired=len(deltas),
        accuracy=_mean_delta([float(_passes(d.status_a)) for d in deltas],
                             [float(_passes(d.status_b)) for d in deltas]),
        score=_mean_delta([d.score_a for d in deltas], [d.score_b for d in deltas]),
        fixed=fixed,
        regressed=regressed,
        pass_rate_changes=[d for d in deltas if max(d.runs_a, d.runs_b) > 1 and d.pass_rate_a != d.pass_rate_b],
        both_passed=sum(1 for d in deltas if d.change == "same" and _passes(d.status_a)),
        both_failed=sum(1 for d in deltas if d.change == "same" and not _passes(d.status_a)),
        mcnemar=test,
        bootstrap=paired_bootstrap(diffs, resamples=resamples, seed=seed) if diffs else None,
        verdict=_verdict(test),
        only_in_a=[_ref(c) for k, c in cases_a.items() if k not in cases_b],
        only_in_b=[_ref(c) for k, c in cases_b.items() if k not in cases_a],
        not_compared=not_compared,
    )


def mcnemar_p(regressed: int, fixed: int) -> float:
    """The exact two-sided McNemar p-value for ``regressed`` and ``fixed`` discordant pairs.

    The exact binomial test of ``min(regressed, fixed)`` out of ``n`` against
    p = 1/2, doubled and capped at 1; exact integer arithmetic until the one
    division, so it is right for any n.
    """
    if regressed < 0 or fixed < 0:
        raise ValueError("counts must be >= 0")
    n = regressed + fixed
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(regressed, fixed) + 1))
    return min(1.0, 2 * tail / 2**n)


def paired_bootstrap(
    differences: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED, confidence: float = 0.95
) -> BootstrapInterval:
    """A percentile bootstrap interval of the mean of ``differences`` (one per paired case).

    Each resample draws ``len(differences)`` values with replacement
    (`random.Random.choices`, seeded); the interval's endpoints are the
    resample means at mirrored positions ``k`` and ``resamples - 1 - k``,
    ``k = floor(resamples * (1 - confidence) / 2)``.
    """
    n = len(differences)
    if n == 0:
        raise ValueError("no differences to resample")
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    values = list(differences)
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    k = min(int(resamples * (1 - confidence) / 2), (resamples - 1) // 2)
    return BootstrapInterval(
        mean_difference=sum(values) / n, low=means[k], high=means[resamples - 1 - k],
        confidence=confidence, resamples=resamples, seed=seed,
    )


def _by_key(cases: Sequence[CaseResult]) -> dict[tuple[str, str], CaseResult]:
    out: dict[tuple[str, str], CaseResult] = {}
    for case in cases:
        out.setdefault(case_key(case.file, case.name), case)
    return out


def _excluded(ca: CaseResult, cb: CaseResult) -> str | None:
    skipped_a, skipped_b = ca.status == "skipped", cb.status == "skipped"
    if skipped_a or skipped_b:
        return "skipped in both" if skipped_a and skipped_b else ("skipped in A" if skipped_a else "skipped in B")
    if ca.prompt != cb.prompt:
        return "the prompt differs"
    return None


def _passes(status: str) -> bool:
    return status in _PASSING


def _delta(ca: CaseResult, cb: CaseResult) -> CaseDelta:
    pa, pb = _passes(ca.status), _passes(cb.status)
    change: Change = "same" if pa == pb else ("fixed" if pb else "regressed")
    return CaseDelta(
        **_ref(ca).model_dump(),
        change=change,
        status_a=ca.status, status_b=cb.status,
        score_a=ca.score or 0.0, score_b=cb.score or 0.0,
        pass_rate_a=ca.pass_rate or 0.0, pass_rate_b=cb.pass_rate or 0.0,
        runs_a=len(ca.runs), runs_b=len(cb.runs),
    )


def _ref(case: CaseResult) -> CaseRef:
    path, name = case_key(case.file, case.name)
    return CaseRef(id=f"{path}::{name}", suite=case.suite, name=case.name, file=case.file, line=case.line)


def _sort_key(file: str, name: str) -> tuple[str, str]:
    return case_key(file, name)


def _record_ref(report: EvalReport) -> RecordRef:
    return RecordRef(
        agent=report.meta.agent, backend=report.meta.backend, started_at=report.meta.started_at,
        cases=len(report.cases), accuracy=report.summary.accuracy, average_score=report.summary.average_score,
        complete=report.meta.complete,
    )


def _mean_delta(a: Sequence[float], b: Sequence[float]) -> Delta:
    if not a:
        return Delta(a=None, b=None, delta=None)
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    return Delta(a=mean_a, b=mean_b, delta=mean_b - mean_a)


def _verdict(test: McNemar) -> Verdict:
    if test.p_value >= ALPHA:
        return "no_significant_difference"
    return "better" if test.fixed > test.regressed else "worse"
