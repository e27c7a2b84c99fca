"""Record models built directly (`run._trusted`) are what validation builds (hypothesis).

For any values, valid or only coercible (an ``int`` or ``bool`` credit, a
``str`` subclass, an ``int`` pass rate), each builder's model is compared
with ``model_validate`` of the same fields: equal, the same fields set, the
same type of every attribute, the same JSON bytes (indented, as the record
writes them); a field assigned afterwards joins that model's fields set only.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from evaldsl.artifacts import RunArtifacts, ToolCall
from evaldsl.run import _trusted
from evaldsl.run._record import STATUSES, CaseResult, ErrorInfo, ExpectationResult, RunResult


class Text(str):
    """A str subclass: validation turns it into a plain str."""


texts = st.one_of(st.text(max_size=20), st.text(max_size=5).map(Text))
numbers = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-3, 3), st.booleans())
credits = st.one_of(st.sampled_from([0.0, 1.0, 0.5, -0.0]), numbers)
details = st.one_of(st.none(), texts)
lines = st.one_of(st.integers(0, 10_000), st.booleans())


def same(built: BaseModel, validated: BaseModel) -> None:
    assert type(built) is type(validated)
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump_json(indent=2) == validated.model_dump_json(indent=2)
    for name in type(validated).model_fields:
        assert type(getattr(built, name)) is type(getattr(validated, name)), name


@st.composite
def expectations(draw: Any) -> tuple[dict[str, Any], ExpectationResult]:
    credit = draw(credits)
    fields = {"label": draw(texts), "passed": draw(st.one_of(st.booleans(), st.just(credit > 0))),
              "credit": credit, "detail": draw(details), "file": draw(texts), "line": draw(lines)}
    turn = draw(st.one_of(st.none(), st.integers(1, 5)))
    if turn is not None:  # a conversation turn's result (absent: a whole run's, as validation leaves it)
        fields["turn"] = turn
    return fields, _trusted.expectation(**fields)


@settings(max_examples=300, deadline=None)
@given(expectations())
def test_an_expectation_is_what_validation_makes(item: tuple[dict[str, Any], ExpectationResult]) -> None:
    fields, built = item
    validated = ExpectationResult.model_validate(fields)
    same(built, validated)
    assert type(built.credit) is float  # an int credit is recorded as 1.0, never 1
    built.detail = "changed"
    assert "detail" in built.model_fields_set and validated.detail == fields["detail"]


ARTIFACTS = RunArtifacts(tool_calls=[ToolCall(name="t", args={"a": 1}, result="r")], final_text="x", tokens=3)


class MoreArtifacts(RunArtifacts):
    pass


@st.composite
def runs(draw: Any) -> tuple[dict[str, Any], RunResult]:
    made = draw(st.lists(expectations(), max_size=4))
    fields = {
        "index": draw(st.one_of(st.integers(0, 5), st.booleans())),
        "passed": draw(st.booleans()),
        "score": draw(numbers),
        "latency_s": draw(numbers),
        "error": draw(st.sampled_from([None, ErrorInfo(type="E", message="m")])),
        "expectations": [e for _, e in made],
        "artifacts": draw(st.sampled_from([None, ARTIFACTS, MoreArtifacts(final_text="y")])),
        "warnings": draw(st.lists(texts, max_size=2)),
    }
    return fields, _trusted.run_result(fields["index"], fields["passed"], fields["score"], fields["latency_s"],
                                       fields["error"], list(fields["expectations"]), fields["artifacts"],
                                       fields["warnings"])


@settings(max_examples=200, deadline=None)
@given(runs())
def test_a_run_is_what_validation_makes(item: tuple[dict[str, Any], RunResult]) -> None:
    fields, built = item
    if not fields["warnings"]:  # the scoring leaves warnings unset when there are none
        fields = {k: v for k, v in fields.items() if k != "warnings"}
    same(built, RunResult.model_validate(fields))


@settings(max_examples=200, deadline=None)
@given(runs=st.lists(runs(), max_size=3), status=st.sampled_from(STATUSES), rate=st.one_of(st.just(1.0), numbers),
       low=numbers, xfail=st.one_of(st.none(), texts), tags=st.lists(texts, max_size=2),
       latency=st.one_of(st.none(), numbers), line=lines, name=texts,
       tools=st.one_of(st.none(), st.lists(texts, max_size=2)))
def test_a_case_is_what_validation_makes(runs: list[tuple[dict[str, Any], RunResult]], status: str, rate: Any,
                                         low: Any, xfail: Any, tags: list[str], latency: Any, line: Any,
                                         name: str, tools: Any) -> None:
    fields: dict[str, Any] = {
        "suite": "s", "name": name, "file": "f.evl", "line": line, "prompt": "p", "status": status, "score": 0.5,
        "pass_rate": rate, "wilson_95": (low, 1.0), "required_pass_rate": rate, "repeat": 1, "latency_s": latency,
        "tags": tags, "skip": None, "xfail": xfail, "runs": [r for _, r in runs], "tools": tools,
    }
    built = _trusted.case_result(**fields)
    validated = CaseResult.model_validate({**fields, "wilson_95": {"low": low, "high": 1.0}})
    same(built, validated)
    same(built.wilson_95, validated.wilson_95)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(runs(), st.sampled_from(STATUSES), st.one_of(st.sampled_from([1.0, 0.5]), st.integers(0, 1)),
       st.one_of(st.none(), texts), st.lists(texts, max_size=3), st.lists(st.text(max_size=5), max_size=2),
       st.booleans(), st.one_of(st.floats(0, 1), st.integers(0, 1)))
def test_a_case_of_one_run_built_from_its_compiled_case_is_what_validation_makes(
        run: tuple[dict[str, Any], RunResult], status: str, rate: Any, xfail: Any, tags: list[str],
        tools: list[str], passed: bool, latency: Any) -> None:
    """`one_run_case` (the `CompiledCase` read directly) against `CaseResult.model_validate` of the values
    `_stats.case_result` hands it; None (the general path) is fine for values it does not trust."""
    from evaldsl.compile._model import CaseSettings, CompiledCase, CompiledTool

    result = run[1].model_copy(update={"latency_s": latency})
    settings_ = CaseSettings(pass_rate=rate, tags=tuple(tags), xfail=xfail)
    offered = tuple(CompiledTool(name=t, description="", parameters={}, answer=lambda a: None) for t in tools)
    case = CompiledCase(suite="s", name=Text("n") if passed else "n", file="f.evl", line=3, prompt="p",
                        settings=settings_, expectations=(), tools=offered)
    built = _trusted.one_run_case(case, result, status, 0.5, int(passed), (0.25, 0.75))
    if built is None:
        assert type(result) is not RunResult or passed or type(rate) is not float or type(latency) is not float \
            or any(type(t) is not str for t in tags) or (xfail is not None and type(xfail) is not str), \
            "trusted values left to validation"
        return
    validated = CaseResult.model_validate({
        "suite": "s", "name": "n", "file": "f.evl", "line": 3, "prompt": "p", "status": status, "score": 0.5,
        "pass_rate": float(int(passed)), "wilson_95": {"low": 0.25, "high": 0.75}, "required_pass_rate": rate,
        "repeat": 1, "latency_s": latency, "tags": tags, "skip": None, "xfail": xfail, "runs": [result],
        "tools": tools or None})
    same(built, validated)
    assert built.runs[0] is result
