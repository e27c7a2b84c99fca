"""Lever (1) of issue 28's runner target, tried and not kept: a case's record line written without pydantic.

`case_line` writes a `CaseResult`'s line of the record from each model's ``__dict__`` with pydantic-core's
JSON rules, to the byte (keys in ``__dict__`` order, every field, compact; strings as `json`'s C encoder
writes them without ``ensure_ascii``; floats as Python's shortest repr with the exponent unpadded,
``1e-7``, and 1e-05 ... 9.99e-05 written out, ``0.00001``). Anything it does not know exactly (a subclass,
an ``int`` where a float is declared, a non-finite float, a lone surrogate) raises `Unwritten`.

It is correct on a run's cases and on 300,000 random floats, and three times slower than what it would
replace: pydantic-core's ``to_json`` of bench_run.py's failing case (1.5 KB) takes about 5 us, this
writer about 16 us (bench/README.md, issue 28, "second pass"). Kept here so the figure can be checked:

    python bench/bench_case_line.py [CASES]
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any

from evaldsl.artifacts import RunArtifacts, ToolCall
from evaldsl.run._record import (
    CaseResult,
    ConversationResult,
    ErrorInfo,
    ExpectationResult,
    Interval,
    RunResult,
    TurnResult,
)


class Unwritten(Exception):
    """A value `case_line` does not write itself: the caller asks pydantic."""


def _order(cls: type) -> list[str]:
    return list(cls.model_fields)  # type: ignore[attr-defined]


_CASE, _RUN, _EXPECTATION = _order(CaseResult), _order(RunResult), _order(ExpectationResult)
_ARTIFACTS, _CALL, _ERROR = _order(RunArtifacts), _order(ToolCall), _order(ErrorInfo)
_INTERVAL, _CONVERSATION, _TURN = _order(Interval), _order(ConversationResult), _order(TurnResult)
_float_repr = float.__repr__


def _fields(model: Any, cls: type, order: list[str]) -> dict[str, Any]:
    """The model's fields, when it is exactly a ``cls`` with every field in declaration order."""
    if type(model) is not cls:
        raise Unwritten
    fields = model.__dict__
    if list(fields) != order or model.__pydantic_extra__:
        raise Unwritten
    return fields


def _str(value: Any) -> str:
    if type(value) is not str:
        raise Unwritten
    return encode_basestring(value)


def _opt_str(value: Any) -> str:
    return "null" if value is None else _str(value)


def _float(value: Any) -> str:
    """A float as pydantic-core writes it (a non-finite one is left to pydantic)."""
    if type(value) is not float:
        raise Unwritten
    text = _float_repr(value)
    if "e" not in text:
        if text[-1] in "fn":  # inf, nan
            raise Unwritten
        return text
    mantissa, _, power = text.partition("e")
    exponent = int(power)
    if exponent == -5:  # pydantic writes 1e-05 ... 9.99e-05 out in full
        sign, digits = ("-", mantissa[1:]) if mantissa[0] == "-" else ("", mantissa)
        return f"{sign}0.0000{digits.replace('.', '')}"
    return f"{mantissa}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


def _opt_float(value: Any) -> str:
    return "null" if value is None else _float(value)


def _int(value: Any) -> str:
    if type(value) is not int:
        raise Unwritten
    return str(value)  # past 4,300 digits a ValueError: left to pydantic


def _opt_int(value: Any) -> str:
    return "null" if value is None else _int(value)


def _bool(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    raise Unwritten


def _strs(values: Any) -> str:
    if type(values) is not list:
        raise Unwritten
    return "[" + ",".join([_str(v) for v in values]) + "]"


# ---- plain JSON (the ``Any`` / ``JsonValue`` fields) --------------------------------------------------

def _json_dict(value: dict[Any, Any]) -> str:
    parts = []
    for key, item in value.items():
        if type(key) is not str:
            raise Unwritten
        parts.append(f"{encode_basestring(key)}:{_JSON[type(item)](item)}")
    return "{" + ",".join(parts) + "}"


def _json_list(value: list[Any]) -> str:
    return "[" + ",".join([_JSON[type(item)](item) for item in value]) + "]"


_JSON: dict[type, Any] = {
    str: encode_basestring, int: str, float: _float, dict: _json_dict, list: _json_list,
    bool: _bool, type(None): lambda _: "null",
}


def _plain(value: Any) -> str:
    """Any plain JSON value; another type is left to pydantic."""
    writer = _JSON.get(type(value))
    if writer is None:
        raise Unwritten
    return writer(value)


# ---- the record's models --------------------------------------------------------------------------------

def _call(call: Any) -> str:
    f = _fields(call, ToolCall, _CALL)
    return f'{{"name":{_str(f["name"])},"args":{_plain(f["args"])},"result":{_plain(f["result"])}}}'


def _artifacts(artifacts: Any) -> str:
    if artifacts is None:
        return "null"
    f = _fields(artifacts, RunArtifacts, _ARTIFACTS)
    calls, transcript = f["tool_calls"], f["transcript"]
    if type(calls) is not list or type(transcript) is not list:
        raise Unwritten
    return (f'{{"tool_calls":[{",".join([_call(c) for c in calls])}],"final_text":{_opt_str(f["final_text"])},'
            f'"tokens":{_opt_int(f["tokens"])},"input_tokens":{_opt_int(f["input_tokens"])},'
            f'"output_tokens":{_opt_int(f["output_tokens"])},"error":{_opt_str(f["error"])},'
            f'"error_kind":{_opt_str(f["error_kind"])},"transcript":{_json_list(transcript)},'
            f'"duration_s":{_opt_float(f["duration_s"])}}}')


def _expectation(result: Any) -> str:
    f = _fields(result, ExpectationResult, _EXPECTATION)
    return (f'{{"label":{_str(f["label"])},"passed":{_bool(f["passed"])},"credit":{_float(f["credit"])},'
            f'"detail":{_opt_str(f["detail"])},"file":{_str(f["file"])},"line":{_int(f["line"])},'
            f'"turn":{_opt_int(f["turn"])}}}')


def _error(error: Any) -> str:
    if error is None:
        return "null"
    f = _fields(error, ErrorInfo, _ERROR)
    return (f'{{"type":{_str(f["type"])},"message":{_str(f["message"])},"traceback":{_opt_str(f["traceback"])},'
            f'"kind":{_opt_str(f["kind"])}}}')


def _turn(turn: Any) -> str:
    f = _fields(turn, TurnResult, _TURN)
    return (f'{{"turn":{_int(f["turn"])},"message":{_str(f["message"])},"simulated":{_bool(f["simulated"])},'
            f'"artifacts":{_artifacts(f["artifacts"])},"latency_s":{_float(f["latency_s"])},'
            f'"world_state":{_plain(f["world_state"])}}}')


def _conversation(conversation: Any) -> str:
    if conversation is None:
        return "null"
    f = _fields(conversation, ConversationResult, _CONVERSATION)
    turns = f["turns"]
    if type(turns) is not list:
        raise Unwritten
    return (f'{{"turns":[{",".join([_turn(t) for t in turns])}],"ended_by":{_str(f["ended_by"])},'
            f'"user_tokens":{_opt_int(f["user_tokens"])}}}')


def _run(run: Any) -> str:
    f = _fields(run, RunResult, _RUN)
    expectations = f["expectations"]
    if type(expectations) is not list:
        raise Unwritten
    return (f'{{"index":{_int(f["index"])},"passed":{_bool(f["passed"])},"score":{_float(f["score"])},'
            f'"latency_s":{_float(f["latency_s"])},"error":{_error(f["error"])},'
            f'"expectations":[{",".join([_expectation(e) for e in expectations])}],'
            f'"artifacts":{_artifacts(f["artifacts"])},"warnings":{_strs(f["warnings"])},'
            f'"conversation":{_conversation(f["conversation"])}}}')


def _interval(interval: Any) -> str:
    if interval is None:
        return "null"
    f = _fields(interval, Interval, _INTERVAL)
    return f'{{"low":{_float(f["low"])},"high":{_float(f["high"])}}}'


def case_line(case: Any) -> bytes:
    """``case``'s line of the record, the bytes of ``CaseResult.__pydantic_serializer__.to_json(case)``;
    `Unwritten` (or the error of a value no writer takes) for anything it does not write itself."""
    f = _fields(case, CaseResult, _CASE)
    runs, tools = f["runs"], f["tools"]
    if type(runs) is not list:
        raise Unwritten
    return (f'{{"suite":{_str(f["suite"])},"name":{_str(f["name"])},"file":{_str(f["file"])},'
            f'"line":{_int(f["line"])},"prompt":{_str(f["prompt"])},"status":{_str(f["status"])},'
            f'"score":{_opt_float(f["score"])},"pass_rate":{_opt_float(f["pass_rate"])},'
            f'"wilson_95":{_interval(f["wilson_95"])},"required_pass_rate":{_float(f["required_pass_rate"])},'
            f'"repeat":{_int(f["repeat"])},"latency_s":{_opt_float(f["latency_s"])},"tags":{_strs(f["tags"])},'
            f'"skip":{_opt_str(f["skip"])},"xfail":{_opt_str(f["xfail"])},'
            f'"runs":[{",".join([_run(r) for r in runs])}],'
            f'"tools":{"null" if tools is None else _strs(tools)}}}').encode("utf-8")


def main(count: int) -> None:
    """Check the writer against pydantic on a run of ``count`` cases, then time both on one case."""
    import timeit

    from bench_run import InstantAsync, suite_text

    import evaldsl
    from evaldsl.report._json import case_json
    from evaldsl.run._api import run_suite

    report = run_suite(InstantAsync(), evaldsl.compile(suite_text(count), filename="overhead.evl"))
    assert all(case_line(case) == case_json(case) for case in report.cases), "a line differs from pydantic's"
    case = report.cases[min(3, count - 1)]
    for name, write in (("pydantic-core to_json", case_json), ("case_line (Python)", case_line)):
        best = min(timeit.repeat(lambda write=write: write(case), number=5000, repeat=5)) / 5000
        print(f"{name:24} {best * 1e6:6.2f} us a case ({len(case_json(case))} bytes)")


if __name__ == "__main__":
    import sys

    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
