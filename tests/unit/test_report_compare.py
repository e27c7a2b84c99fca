"""compare_records: flips, deltas, the exact McNemar test and the paired bootstrap, by hand-computed values."""

from __future__ import annotations

import math

import pytest
from _records import case, outcomes, record, run
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.report._compare import compare_records, mcnemar_p, paired_bootstrap


@pytest.mark.parametrize(("regressed", "fixed", "p"), [
    (1, 8, 0.0390625),        # 2 * (C(9,0) + C(9,1)) / 2^9 = 2 * 10 / 512
    (8, 1, 0.0390625),
    (0, 0, 1.0),
    (3, 3, 1.0),              # capped at 1
    (0, 6, 0.03125),          # 2 / 64
    (0, 5, 0.0625),           # 2 / 32: five flips one way is not enough at 0.05
    (2, 10, 2 * (1 + 12 + 66) / 4096),
])
def test_mcnemar_exact_p_matches_hand_computed_values(regressed: int, fixed: int, p: float) -> None:
    assert mcnemar_p(regressed, fixed) == pytest.approx(p, abs=1e-15)


def test_mcnemar_stays_exact_for_many_flips() -> None:
    # 600 against 400: the normal approximation gives z = 200 / sqrt(1000) = 6.32, p about 2.5e-10
    p = mcnemar_p(400, 600)
    assert 1e-11 < p < 1e-9
    assert not math.isnan(p)


def test_flips_deltas_and_verdict() -> None:
    a = outcomes("pppfffffffffff")  # 3 of 14 pass
    b = outcomes("fppppppppppfff")  # c000 regressed; c003..c010 fixed (8)
    cmp = compare_records(a, b)
    assert [d.name for d in cmp.regressed] == ["c000"]
    assert [d.name for d in cmp.fixed] == [f"c{i:03d}" for i in range(3, 11)]
    assert (cmp.mcnemar.regressed, cmp.mcnemar.fixed) == (1, 8)
    assert cmp.mcnemar.p_value == pytest.approx(0.0390625)
    assert cmp.verdict == "better"
    assert cmp.paired == 14 and cmp.both_passed == 2 and cmp.both_failed == 3
    assert cmp.accuracy.a == pytest.approx(3 / 14) and cmp.accuracy.b == pytest.approx(10 / 14)
    assert cmp.accuracy.delta == pytest.approx(7 / 14)
    assert cmp.score.delta == pytest.approx(7 / 14)
    assert cmp.bootstrap is not None
    assert cmp.bootstrap.mean_difference == pytest.approx(0.5)
    assert cmp.bootstrap.low < 0.5 < cmp.bootstrap.high
    assert cmp.bootstrap.low > 0  # 8 fixed against 1 regressed: the interval excludes 0
    assert compare_records(b, a).verdict == "worse"


def test_errors_count_as_failures_and_xpassed_as_passes() -> None:
    a = record(case("x", run(error=("TimeoutError", "slow"))), case("y", run(True), xfail="known"))
    b = record(case("x", run(True)), case("y", run(False), xfail="known"))
    cmp = compare_records(a, b)
    assert [d.name for d in cmp.fixed] == ["x"] and [d.name for d in cmp.regressed] == ["y"]
    assert cmp.fixed[0].status_a == "error" and cmp.regressed[0].status_b == "xfailed"


def test_cases_in_one_record_skipped_or_reworded_are_listed_not_compared() -> None:
    a = record(case("both", run()), case("gone", run()), case("skipped", skip="later"),
               case("reworded", run(), prompt="old words"))
    b = record(case("both", run(False)), case("new", run()), case("skipped", run()),
               case("reworded", run(False), prompt="new words"))
    cmp = compare_records(a, b)
    assert cmp.paired == 1 and [d.name for d in cmp.regressed] == ["both"]
    assert [c.name for c in cmp.only_in_a] == ["gone"] and [c.name for c in cmp.only_in_b] == ["new"]
    assert {(c.name, c.reason) for c in cmp.not_compared} == {
        ("skipped", "skipped in A"), ("reworded", "the prompt differs")}
    assert cmp.only_in_a[0].id == "suites/m.evl::gone"


def test_cases_match_by_normalized_path() -> None:
    a = record(case("x", run(), file="./suites/m.evl"))
    b = record(case("x", run(False), file="suites/m.evl"))
    assert compare_records(a, b).paired == 1


def test_pass_rate_changes_of_repeated_cases() -> None:
    a = record(case("flaky", run(True), run(True), run(False), required=0.6), case("once", run(True)))
    b = record(case("flaky", run(True), run(False), run(False), required=0.6), case("once", run(True)))
    cmp = compare_records(a, b)
    [change] = cmp.pass_rate_changes
    assert change.name == "flaky" and change.change == "regressed"
    assert (change.pass_rate_a, change.pass_rate_b) == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert (change.runs_a, change.runs_b) == (3, 3)


def test_nothing_paired_gives_no_interval_and_no_verdict() -> None:
    cmp = compare_records(outcomes("pp"), record(case("other", run())))
    assert cmp.paired == 0 and cmp.bootstrap is None
    assert cmp.accuracy.delta is None and cmp.mcnemar.p_value == 1.0
    assert cmp.verdict == "no_significant_difference"


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    diffs = [1.0, 0.0, 0.0, 0.5, -0.25, 1.0, 0.0, 0.0]
    one = paired_bootstrap(diffs, resamples=2000, seed=7)
    assert one == paired_bootstrap(diffs, resamples=2000, seed=7)
    assert one.mean_difference == pytest.approx(sum(diffs) / len(diffs))
    assert -0.25 <= one.low < one.mean_difference < one.high <= 1.0
    assert one.resamples == 2000 and one.seed == 7


def test_bootstrap_of_constant_differences_is_a_point() -> None:
    point = paired_bootstrap([0.25] * 5, resamples=100)
    assert point.low == point.high == pytest.approx(0.25)


def test_comparison_round_trips_through_json() -> None:
    cmp = compare_records(outcomes("pfpe"), outcomes("ppfp"))
    assert type(cmp).model_validate_json(cmp.model_dump_json()) == cmp


PATTERNS = st.text(alphabet="pfes", min_size=0, max_size=25)


@settings(max_examples=60, deadline=None)
@given(PATTERNS, PATTERNS)
def test_swapping_a_and_b_flips_every_sign(pa: str, pb: str) -> None:
    ab, ba = compare_records(outcomes(pa), outcomes(pb), resamples=200), compare_records(
        outcomes(pb), outcomes(pa), resamples=200)
    assert 0.0 <= ab.mcnemar.p_value <= 1.0 and ab.mcnemar.p_value == ba.mcnemar.p_value
    assert [d.name for d in ab.fixed] == [d.name for d in ba.regressed]
    assert ab.paired == ba.paired
    if ab.accuracy.delta is not None:
        assert ab.accuracy.delta == -ba.accuracy.delta  # type: ignore[operator]
        assert ab.score.delta == -ba.score.delta  # type: ignore[operator]
    if ab.bootstrap is not None:
        assert ba.bootstrap is not None
        assert (ab.bootstrap.low, ab.bootstrap.high) == (-ba.bootstrap.high, -ba.bootstrap.low)
        assert ab.bootstrap.low <= ab.bootstrap.mean_difference <= ab.bootstrap.high
    flip = {"better": "worse", "worse": "better", "no_significant_difference": "no_significant_difference"}
    assert ba.verdict == flip[ab.verdict]


@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_p_is_a_probability_and_symmetric(r: int, f: int) -> None:
    p = mcnemar_p(r, f)
    assert 0.0 < p <= 1.0 and p == mcnemar_p(f, r)


def test_an_incomplete_record_is_flagged() -> None:
    from evaldsl.report._compare_text import format_comparison

    a, b = outcomes("pp"), outcomes("p")
    b.meta.complete = False
    cmp = compare_records(a, b)
    assert cmp.a.complete and not cmp.b.complete
    text = format_comparison(cmp)
    assert "B: a, started 2026-03-01 12:00:00, 1 case(s) (incomplete:" in text
    assert "ONLY IN A (1)" in text


def test_the_text_says_regressions_and_significance_plainly() -> None:
    from evaldsl.report._compare_text import format_comparison

    text = format_comparison(compare_records(outcomes("pppp"), outcomes("fffp")))  # 3 regressed, p = 0.25
    assert "flipped: 3 regressed, 0 fixed, exact McNemar p = 0.25, not significant at 0.05" in text
    assert "verdict: 3 case(s) regressed, but the difference is not significant at 0.05" in text
    assert "no significant difference" not in text
    better = format_comparison(compare_records(outcomes("pppfffffffffff"), outcomes("fppppppppppfff")))
    assert "1 regressed, 8 fixed, exact McNemar p = 0.0391, significant at 0.05" in better
