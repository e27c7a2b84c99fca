"""Record models built from values the runner made itself, without pydantic's validation.

Why: validating a run's results cost more than scoring them. Validating one
`ExpectationResult` from its fields takes about 1.5-2.4 us, so a run of five
expectations, its `RunResult` and its case's `CaseResult` cost 12-17 us a
case, where building the same objects directly takes about a third of that
(bench/README.md, "Record models built directly").

Each builder checks that every value already has the exact type validation
would return it as (a ``float`` credit, a ``bool``, a ``str``, ...), and
only then builds the model directly: its ``__dict__`` in the order the
fields are declared (pydantic serializes a model in its dict's order), its
fields-set as validation would set it. Any other value (an ``int`` credit a
custom predicate returned, a ``str`` subclass) goes through
``model_validate`` as before, so what a builder returns is always what
validation would have returned: equal, with the same fields set and the
same JSON bytes (tests/properties/test_trusted_props.py checks it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from ..artifacts import RunArtifacts
from ._record import STATUSES, CaseResult, ConversationResult, ErrorInfo, ExpectationResult, Interval, RunResult

M = TypeVar("M", bound=BaseModel)
_new_object = object.__new__
# The four slots every pydantic model has, set through their own descriptors: `object.__setattr__` looks each
# name up in the class's MRO and checks the call first, a fifth of a model's making (bench/README.md, issue 28).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_STATUS_SET = frozenset(STATUSES)
_EXPECTATION_FIELDS = frozenset(ExpectationResult.model_fields)
_EXPECTATION_FIELDS_NO_TURN = _EXPECTATION_FIELDS - {"turn"}  # validation leaves an absent turn unset
_RUN_FIELDS = frozenset(RunResult.model_fields)
# the fields a run sets, by (warnings given, conversation given): validation leaves an empty one unset
_RUN_FIELDS_SET = {(w, c): _RUN_FIELDS - ({"warnings"} if not w else set()) - ({"conversation"} if not c else set())
                   for w in (False, True) for c in (False, True)}
_CASE_FIELDS = frozenset(CaseResult.model_fields)
_INTERVAL_FIELDS = frozenset(Interval.model_fields)
# "every item is exactly one of these": set(map(type, items)) <= ONLY (true of no items), one C-level pass
_ONLY_STR, _ONLY_EXPECTATIONS, _ONLY_RUNS = frozenset({str}), frozenset({ExpectationResult}), frozenset({RunResult})


def made(cls: type[M], fields: dict[str, Any], given: set[str]) -> M:
    """A ``cls`` (a model without extras or private attributes) holding ``fields`` (every field, in
    declaration order), ``given`` its fields-set (a set of its own: assigning a field adds to it), as
    `model_construct` leaves one, without its loops over the fields."""
    model = _new_object(cls)
    _set_dict(model, fields)
    _set_fields(model, given)
    _set_extra(model, None)  # extra="forbid" or "ignore": validation leaves None
    _set_private(model, None)  # no private attributes
    return model


def _built(cls: type[M], fields: dict[str, Any], given: frozenset[str]) -> M:
    """A ``cls`` holding ``fields`` (every field, in declaration order), as validation leaves one."""
    return made(cls, fields, set(given))


def expectation(label: str, passed: bool, credit: float, detail: str | None, file: str,
                line: int, turn: int | None = None) -> ExpectationResult:
    """`ExpectationResult(label=..., ...)`: every field given. (`_built` written out: a run makes several.)"""
    fields = {"label": label, "passed": passed, "credit": credit, "detail": detail, "file": file, "line": line,
              "turn": turn}
    if (type(credit) is float and type(passed) is bool and type(label) is type(file) is str and type(line) is int
            and (detail is None or type(detail) is str) and (turn is None or type(turn) is int)):
        model = _new_object(ExpectationResult)
        _set_dict(model, fields)
        _set_fields(model, set(_EXPECTATION_FIELDS if turn is not None else _EXPECTATION_FIELDS_NO_TURN))
        _set_extra(model, None)
        _set_private(model, None)
        return model
    if turn is None:
        del fields["turn"]
    return ExpectationResult.model_validate(fields)


def run_result(index: int, passed: bool, score: float, latency: float, error: ErrorInfo | None,
               expectations: list[ExpectationResult], artifacts: RunArtifacts | None,
               warnings: Sequence[str], conversation: ConversationResult | None = None) -> RunResult:
    """`RunResult.model_validate` of these fields; ``warnings`` is left unset when empty (as `_scoring`
    has always left it). ``expectations`` is the result's own list from here on."""
    fields: dict[str, Any] = {"index": index, "passed": passed, "score": score, "latency_s": latency,
                              "error": error, "expectations": expectations, "artifacts": artifacts,
                              "warnings": list(warnings), "conversation": conversation}
    if (type(index) is int and type(passed) is bool and type(score) is type(latency) is float
            and (error is None or type(error) is ErrorInfo)
            and (conversation is None or type(conversation) is ConversationResult)
            and (artifacts is None or isinstance(artifacts, RunArtifacts))
            and set(map(type, expectations)) <= _ONLY_EXPECTATIONS and set(map(type, warnings)) <= _ONLY_STR):
        return _built(RunResult, fields, _RUN_FIELDS_SET[bool(warnings), conversation is not None])
    if not warnings:
        del fields["warnings"]
    if conversation is None:
        del fields["conversation"]
    return RunResult.model_validate(fields)


def case_result(*, suite: str, name: str, file: str, line: int, prompt: str, status: str, score: float,
                pass_rate: float, wilson_95: tuple[float, float], required_pass_rate: float, repeat: int,
                latency_s: float | None, tags: list[str], skip: str | None, xfail: str | None,
                runs: list[RunResult], tools: list[str] | None = None) -> CaseResult:
    """`CaseResult.model_validate` of a case that ran, every field given (``wilson_95`` as (low, high))."""
    low, high = wilson_95
    if (type(suite) is type(name) is type(file) is type(prompt) is str and type(line) is type(repeat) is int
            and type(status) is str and status in _STATUS_SET
            and type(score) is type(pass_rate) is type(low) is type(high) is type(required_pass_rate) is float
            and (latency_s is None or type(latency_s) is float)
            and type(tags) is list and set(map(type, tags)) <= _ONLY_STR
            and (skip is None or type(skip) is str) and (xfail is None or type(xfail) is str)
            and type(runs) is list and set(map(type, runs)) <= _ONLY_RUNS
            and (tools is None or type(tools) is list and set(map(type, tools)) <= _ONLY_STR)):
        interval: Any = _built(Interval, {"low": low, "high": high}, _INTERVAL_FIELDS)
    else:
        interval = None
    fields = {"suite": suite, "name": name, "file": file, "line": line, "prompt": prompt, "status": status,
              "score": score, "pass_rate": pass_rate, "wilson_95": interval, "required_pass_rate": required_pass_rate,
              "repeat": repeat, "latency_s": latency_s, "tags": tags, "skip": skip, "xfail": xfail, "runs": runs,
              "tools": tools}
    if interval is not None:
        return _built(CaseResult, fields, _CASE_FIELDS)
    fields["wilson_95"] = {"low": low, "high": high}
    return CaseResult.model_validate(fields)


_FLOAT_OR_NONE = (float, type(None))


def one_run_case(case: Any, run: RunResult, status: str, score: float, passed: int,
                 wilson_95: tuple[float, float]) -> CaseResult | None:
    """`case_result` of a case that ran once (most cases), its values read from the `CompiledCase` here; None
    when a value is not of the type validation keeps (the caller then takes `case_result`)."""
    s = case.settings
    suite, name, file, prompt, line = case.suite, case.name, case.file, case.prompt, case.line
    tags, xfail = s.tags, s.xfail
    latency = run.latency_s + 0.0
    if not (type(suite) is type(name) is type(file) is type(prompt) is str and type(line) is int
            and type(run) is RunResult and type(status) is str and status in _STATUS_SET and type(score) is float
            and type(latency) is float and type(s.pass_rate) is float and type(s.repeat) is int
            and (xfail is None or type(xfail) is str) and (not tags or set(map(type, tags)) <= _ONLY_STR)):
        return None
    tools = [tool.name for tool in case.tools] if case.tools else None
    if tools is not None and not set(map(type, tools)) <= _ONLY_STR:
        return None
    low, high = wilson_95
    fields = {"suite": suite, "name": name, "file": file, "line": line, "prompt": prompt, "status": status,
              "score": score, "pass_rate": passed / 1, "wilson_95": made(Interval, {"low": low, "high": high},
                                                                         set(_INTERVAL_FIELDS)),
              "required_pass_rate": s.pass_rate, "repeat": s.repeat, "latency_s": latency, "tags": list(tags),
              "skip": None, "xfail": xfail, "runs": [run], "tools": tools}
    return made(CaseResult, fields, set(_CASE_FIELDS))
