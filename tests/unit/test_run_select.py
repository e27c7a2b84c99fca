"""Selection: pytest-style -k and -m expressions, --tag, --lf."""

from __future__ import annotations

import os
from typing import Any

import pytest

from evaldsl.compile._model import CaseSettings, CompiledCase
from evaldsl.run._record import CaseResult, EvalReport
from evaldsl.run._select import SelectionError, case_key, parse_expression, select_cases


def case(name: str, suite: str = "Arithmetic", file: str = "suites/math.evl", tags: tuple[str, ...] = ()) -> CompiledCase:
    return CompiledCase(suite=suite, name=name, file=file, line=1, prompt=name,
                        settings=CaseSettings(tags=tags), expectations=())


CASES = [
    case("adds two numbers", tags=("math", "smoke")),
    case("divides", tags=("math",)),
    case("says hello", suite="Chat", file="suites/chat.evl", tags=("smoke",)),
    case("Refuses politely", suite="Chat", file="suites/chat.evl"),
]


def names(**kw: Any) -> list[str]:
    return [c.name for c in select_cases(CASES, **kw)]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("adds", ["adds two numbers"]),
        ("ADDS", ["adds two numbers"]),  # case-insensitive, as pytest
        ("chat", ["says hello", "Refuses politely"]),  # suite name and file name
        ("math.evl", ["adds two numbers", "divides"]),
        ("smoke", ["adds two numbers", "says hello"]),  # tags
        ("not chat", ["adds two numbers", "divides"]),
        ("math and not smoke", ["divides"]),
        ("divides or hello", ["divides", "says hello"]),
        ("not adds and not divides or refuses", ["says hello", "Refuses politely"]),
        ("not chat and not divides or refuses", ["adds two numbers", "Refuses politely"]),
        ("not (adds or divides)", ["says hello", "Refuses politely"]),
        ("(chat or math) and smoke", ["adds two numbers", "says hello"]),
        ('"two numbers"', ["adds two numbers"]),
        ("'says hello' or divides", ["divides", "says hello"]),
        ("nothing", []),
        ("", [c.name for c in CASES]),
    ],
)
def test_keyword_expressions(expr: str, expected: list[str]) -> None:
    assert names(keyword=expr) == expected


def test_precedence_not_then_and_then_or() -> None:
    pred = parse_expression("a or b and not c")
    truth = lambda *words: (lambda w: w in words)  # noqa: E731
    assert pred(truth("a", "c")) is True  # a or (b and not c)
    assert pred(truth("b", "c")) is False
    assert pred(truth("b")) is True


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("adds and", "expected a word at column 9, found the end"),
        ("(adds", "expected ')' at column 6"),
        ("adds divides", "expected the end at column 6, found 'divides'"),
        ('"adds', "unclosed quote at column 1"),
        ("and adds", "expected a word at column 1, found 'and'"),
    ],
)
def test_bad_expressions_say_where(expr: str, message: str) -> None:
    with pytest.raises(SelectionError, match="-k") as info:
        select_cases(CASES, keyword=expr)
    assert message in str(info.value)


def test_words_meant_as_a_phrase_get_a_hint_to_quote_them() -> None:
    with pytest.raises(SelectionError) as info:
        select_cases(CASES, keyword="adds 1 and")
    assert """quote it: -k '"adds 1 and"'""" in str(info.value)
    with pytest.raises(SelectionError) as info:
        select_cases(CASES, markers="smoke math")
    assert "quote it" not in str(info.value)  # -m names exact tags: no phrases there


def test_markers_match_tags_exactly() -> None:
    assert names(markers="smoke and not math") == ["says hello"]
    assert names(markers="smo") == []  # exact, unlike -k
    with pytest.raises(SelectionError, match="-m"):
        select_cases(CASES, markers="or")


def test_tags_keep_cases_with_any_of_them() -> None:
    assert names(tags=["math"]) == ["adds two numbers", "divides"]
    assert names(tags=["math", "smoke"]) == ["adds two numbers", "divides", "says hello"]
    assert names(tags=["Math"]) == []


def test_criteria_combine() -> None:
    assert names(keyword="s", tags=["smoke"], markers="not math") == ["says hello"]


def record(*pairs: tuple[str, str], file: str = "suites/math.evl") -> EvalReport:
    return EvalReport(cases=[CaseResult(suite="Arithmetic", name=n, file=file, line=1, prompt=n, status=s)  # type: ignore[arg-type]
                             for n, s in pairs])


def test_last_failed_keeps_failed_and_errored_cases() -> None:
    last = record(("adds two numbers", "passed"), ("divides", "error"), ("says hello", "xfailed"))
    assert names(last_failed=last) == ["divides"]
    last = record(("adds two numbers", "failed"), ("divides", "skipped"))
    assert names(last_failed=last) == ["adds two numbers"]
    assert names(last_failed=record()) == []


def test_case_identity_normalises_paths() -> None:
    assert case_key("./suites/../suites/math.evl", "x") == case_key("suites/math.evl", "x")
    assert case_key(os.path.abspath("suites/math.evl"), "x") == case_key("suites/math.evl", "x")
    assert case_key("suites/math.evl", "x") != case_key("suites/other.evl", "x")
    absolute = record(("divides", "failed"), file=os.path.abspath("suites/math.evl"))
    assert names(last_failed=absolute) == ["divides"]
