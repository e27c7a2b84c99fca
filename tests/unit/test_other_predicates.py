"""Other predicates (docs/language.md section 6.3): errors, tokens, duration, judge, custom."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evaldsl.artifacts import RunArtifacts
from evaldsl.compile._errors import CompileProblem
from evaldsl.compile._model import EvalContext, Outcome
from evaldsl.compile._other import compile_other
from evaldsl.syntax import _ast as a


def num(value: int | float) -> a.Number:
    return a.Number(value=value, raw=json.dumps(value))


def ctx(**fields: Any) -> EvalContext:
    artifacts = RunArtifacts(**fields.pop("artifacts", {}))
    return EvalContext(artifacts=artifacts, **fields)


# ------------------------------------------------------- error, budgets --


def test_no_error() -> None:
    check = compile_other(a.NoError())
    assert check(ctx()) == Outcome(1.0)
    assert check(ctx(artifacts={"error": "backend 500"})) == Outcome(
        0.0, "the run reported an error: backend 500"
    )


def test_tokens_at_most() -> None:
    check = compile_other(a.TokensAtMost(limit=num(1000)))
    assert check(ctx(artifacts={"tokens": 1000})) == Outcome(1.0)
    assert check(ctx(artifacts={"tokens": 1001})) == Outcome(
        0.0, "the run used 1001 tokens, more than 1000"
    )


def test_tokens_at_most_fails_without_a_count() -> None:
    check = compile_other(a.TokensAtMost(limit=num(1000)))
    assert check(ctx()) == Outcome(0.0, "the run reported no token count")


def test_tokens_limit_cannot_be_negative() -> None:
    with pytest.raises(CompileProblem):
        compile_other(a.TokensAtMost(limit=num(-1)))


def test_duration_at_most() -> None:
    check = compile_other(a.DurationAtMost(limit=a.Duration(amount=500, unit="ms")))
    assert check(ctx(duration_s=0.5)) == Outcome(1.0)
    outcome = check(ctx(duration_s=0.75))
    assert outcome.credit == 0.0
    assert outcome.detail == "the run took 0.75s, more than 500ms"


def test_duration_reads_the_artifacts_when_the_context_has_none() -> None:
    check = compile_other(a.DurationAtMost(limit=a.Duration(amount=2, unit="s")))
    assert check(ctx(artifacts={"duration_s": 1.0})) == Outcome(1.0)
    assert not check(ctx(artifacts={"duration_s": 3.0})).passed


def test_duration_fails_when_unknown() -> None:
    check = compile_other(a.DurationAtMost(limit=a.Duration(amount=1, unit="m")))
    assert check(ctx()) == Outcome(0.0, "the run's duration is unknown")


# ----------------------------------------------------------------- judge --


class FakeJudge:
    def __init__(self, score: Any) -> None:
        self.score = score
        self.seen: list[dict[str, Any]] = []

    def __call__(self, *, rubric: str, prompt: str, artifacts: RunArtifacts) -> Any:
        self.seen.append({"rubric": rubric, "prompt": prompt, "artifacts": artifacts})
        if isinstance(self.score, Exception):
            raise self.score
        return self.score


def test_judge_holds_at_half_by_default() -> None:
    check = compile_other(a.Judge(rubric=a.String(value="polite")))
    assert check(ctx(judge=FakeJudge(0.5))) == Outcome(1.0, "judge scored 0.50, at least 0.5")
    outcome = check(ctx(judge=FakeJudge(0.3)))
    assert outcome.credit == 0.0
    assert outcome.detail is not None
    assert "0.30" in outcome.detail and "0.5" in outcome.detail and "polite" in outcome.detail


def test_judge_with_a_threshold() -> None:
    check = compile_other(a.Judge(rubric=a.String(value="r"), threshold=num(0.8)))
    assert check(ctx(judge=FakeJudge(0.8))).passed
    assert check(ctx(judge=FakeJudge(1))).passed
    outcome = check(ctx(judge=FakeJudge(0.79)))
    assert not outcome.passed and "0.79" in (outcome.detail or "")


def test_judge_sees_rubric_prompt_and_artifacts() -> None:
    judge = FakeJudge(1.0)
    context = ctx(judge=judge, prompt="what is 2+2?", artifacts={"final_text": "4"})
    compile_other(a.Judge(rubric=a.String(value="correct")))(context)
    assert judge.seen == [
        {"rubric": "correct", "prompt": "what is 2+2?", "artifacts": context.artifacts}
    ]


def test_judge_without_a_judge_is_an_error() -> None:
    check = compile_other(a.Judge(rubric=a.String(value="polite")))
    with pytest.raises(RuntimeError, match="^no judge configured: "):
        check(ctx())


@pytest.mark.parametrize("score", [1.5, -0.1, float("nan"), "0.9", None, True])
def test_judge_reply_that_is_not_a_score_is_an_error(score: Any) -> None:
    check = compile_other(a.Judge(rubric=a.String(value="r")))
    with pytest.raises(ValueError, match="not a score"):
        check(ctx(judge=FakeJudge(score)))


def test_judge_exceptions_propagate() -> None:
    check = compile_other(a.Judge(rubric=a.String(value="r")))
    with pytest.raises(KeyError):
        check(ctx(judge=FakeJudge(KeyError("unreadable"))))


def test_judge_threshold_must_be_a_score() -> None:
    with pytest.raises(CompileProblem):
        compile_other(a.Judge(rubric=a.String(value="r"), threshold=num(2)))
    with pytest.raises(CompileProblem) as caught:
        compile_other(a.Judge(rubric=a.Placeholder(name="rubric")))
    assert caught.value.code == "E201"


# ------------------------------------------------------ custom predicates --


def custom(**kwargs: Any) -> a.CustomPredicate:
    entries = tuple(a.Entry(key=k, value=v) for k, v in kwargs.items())
    return a.CustomPredicate(name="file_exists", args=entries)


def test_custom_predicate_gets_artifacts_world_and_kwargs() -> None:
    seen: list[Any] = []

    def file_exists(artifacts: RunArtifacts, world: Any, **kwargs: Any) -> bool:
        seen.append((artifacts, world, kwargs))
        return True

    node = custom(
        path=a.String(value="a.txt"),
        mode=a.Word(value="text"),
        size=num(3),
        opts=a.ObjectValue(entries=(a.Entry(key="x", value=a.ArrayValue(
            items=(a.Constant(value=True), a.Constant(value=None)))),)),
    )
    context = ctx(world={"fs": {}}, predicates={"file_exists": file_exists})
    assert compile_other(node)(context) == Outcome(1.0)
    assert seen == [(context.artifacts, {"fs": {}}, {
        "path": "a.txt", "mode": "text", "size": 3, "opts": {"x": [True, None]},
    })]


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (True, Outcome(1.0)),
        (False, Outcome(0.0, "file_exists returned false")),
        (1.0, Outcome(1.0)),
        (0.5, Outcome(0.5, "file_exists gave credit 0.5")),
        (0, Outcome(0.0, "file_exists gave credit 0")),
        ((True, "fine"), Outcome(1.0)),
        ((False, "a.txt is missing"), Outcome(0.0, "a.txt is missing")),
    ],
)
def test_custom_predicate_results(result: Any, expected: Outcome) -> None:
    context = ctx(predicates={"file_exists": lambda artifacts, world: result})
    assert compile_other(custom())(context) == expected


@pytest.mark.parametrize("result", ["yes", None, [True], (1, "x")])
def test_custom_predicate_other_results_are_type_errors(result: Any) -> None:
    context = ctx(predicates={"file_exists": lambda artifacts, world: result})
    with pytest.raises(TypeError, match=type(result).__name__):
        compile_other(custom())(context)


def test_custom_predicate_credit_out_of_range() -> None:
    context = ctx(predicates={"file_exists": lambda artifacts, world: 1.5})
    with pytest.raises(ValueError):
        compile_other(custom())(context)


def test_unknown_custom_predicate_lists_known_names() -> None:
    context = ctx(predicates={"b_check": print, "a_check": print})
    with pytest.raises(LookupError, match="known: a_check, b_check"):
        compile_other(custom())(context)


def test_custom_predicate_placeholder_is_a_compile_problem() -> None:
    with pytest.raises(CompileProblem):
        compile_other(custom(path=a.Placeholder(name="p")))
