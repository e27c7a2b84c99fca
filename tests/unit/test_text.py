"""Final-answer predicates (docs/language.md section 6.2), last_number and extract_json."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evaldsl.artifacts import RunArtifacts
from evaldsl.compile._errors import CompileProblem
from evaldsl.compile._model import EvalContext, Outcome
from evaldsl.compile._text import compile_final, extract_json, last_number
from evaldsl.syntax import _ast as a


def s(text: str) -> a.String:
    return a.String(value=text)


def num(value: int | float) -> a.Number:
    return a.Number(value=value, raw=json.dumps(value))


def run(node: Any, final_text: str | None) -> Outcome:
    return compile_final(node)(EvalContext(artifacts=RunArtifacts(final_text=final_text)))


def holds(node: Any, final_text: str | None) -> bool:
    outcome = run(node, final_text)
    assert outcome.credit in (0.0, 1.0)
    return outcome.credit == 1.0


# ----------------------------------------------------------- last_number --


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The answer is 5.", 5),
        ("2 + 2 = 4", 4),
        ("-1,024.50", -1024.5),
        ("total: 1,000,000 items", 1000000),
        ("3-4", 4),
        ("v2", None),
        ("x1.5", None),
        ("pi is 3.14", 3.14),
        ("version 1.2.3", 1.2),
        ("12,34", 34),
        ("-7 degrees", -7),
        ("no digits here", None),
        ("", None),
        ("5abc", 5),
        ("1,2345", 1234),
        ("(-3)", -3),
    ],
)
def test_last_number(text: str, expected: int | float | None) -> None:
    assert last_number(text) == expected


def test_last_number_types() -> None:
    assert type(last_number("it is 5")) is int
    assert type(last_number("it is 5.0")) is float


# ---------------------------------------------------------- extract_json --


def test_extract_json_from_the_trimmed_text() -> None:
    assert extract_json('  {"a": 1}\n') == (True, {"a": 1})
    assert extract_json("5") == (True, 5)
    assert extract_json("null") == (True, None)
    assert extract_json('"hi"') == (True, "hi")


def test_extract_json_from_one_fenced_block() -> None:
    text = 'Here you go:\n```json\n{"city": "Paris"}\n```\nAnything else?'
    assert extract_json(text) == (True, {"city": "Paris"})


def test_extract_json_fence_word_in_any_case() -> None:
    assert extract_json("```JSON\n[1, 2]\n```") == (True, [1, 2])
    assert extract_json("```Json\n[1]\n```") == (True, [1])


def test_extract_json_ignores_other_fenced_blocks() -> None:
    text = "```python\nprint('x')\n```\nand\n```json\n{\"ok\": true}\n```\n```\n[9]\n```"
    assert extract_json(text) == (True, {"ok": True})
    assert extract_json("```jsonl\n{}\n```")[0] is False


def test_extract_json_needs_exactly_one_json_block() -> None:
    ok, reason = extract_json("```json\n1\n```\n```json\n2\n```")
    assert ok is False
    assert "2 ```json blocks" in reason


def test_extract_json_block_that_does_not_parse() -> None:
    ok, reason = extract_json("```json\n{oops}\n```")
    assert ok is False
    assert "not valid JSON" in reason and "{oops}" in reason


def test_extract_json_rejects_nan_and_infinity() -> None:
    assert extract_json("NaN")[0] is False
    assert extract_json('{"a": Infinity}')[0] is False
    assert extract_json("```json\n[-Infinity]\n```")[0] is False


def test_extract_json_without_json() -> None:
    ok, reason = extract_json("The capital is Paris.")
    assert ok is False
    assert "not JSON" in reason


# ----------------------------------------------------------------- text --


def test_contains_is_case_sensitive_and_untrimmed() -> None:
    node = a.TextContains(text=s("4"))
    assert holds(node, "The answer is 4.")
    assert run(node, "The answer is 5.") == Outcome(
        0.0, 'final text "The answer is 5." does not contain "4"'
    )
    assert not holds(a.TextContains(text=s("Paris")), "paris")
    assert holds(a.TextContains(text=s(" x ")), "a x b")
    assert holds(a.TextContains(text=s("4\n")), "  4\n")
    assert not holds(a.TextContains(text=s("x\n")), "  x")


def test_contains_ignoring_case() -> None:
    node = a.TextContains(text=s("HELLO"), ignore_case=True)
    assert holds(node, "well, hello there")
    outcome = run(node, "bye")
    assert outcome.detail == 'final text "bye" does not contain "HELLO" (ignoring case)'


def test_is_compares_trimmed_texts() -> None:
    node = a.TextIs(text=s("Paris"))
    assert holds(node, "  Paris\n")
    assert holds(a.TextIs(text=s(" Paris ")), "Paris")
    assert not holds(node, "Paris.")
    assert run(node, "Lyon").detail == 'final text "Lyon" is not "Paris"'


def test_is_ignoring_case() -> None:
    assert holds(a.TextIs(text=s("PARIS"), ignore_case=True), "paris\n")
    assert not holds(a.TextIs(text=s("PARIS"), ignore_case=True), "paris!")


def test_starts_with_trims_the_final_text_only() -> None:
    assert holds(a.TextStartsWith(text=s("Hello")), "\n  Hello, world")
    assert not holds(a.TextStartsWith(text=s(" Hello")), "  Hello")
    detail = run(a.TextStartsWith(text=s("Hi")), "Hello").detail
    assert detail == 'final text "Hello" does not start with "Hi"'


def test_ends_with_trims_the_final_text_only() -> None:
    assert holds(a.TextEndsWith(text=s("done.")), "all done.\n")
    assert not holds(a.TextEndsWith(text=s("done.\n")), "all done.\n")
    assert run(a.TextEndsWith(text=s("!")), "ok").detail == 'final text "ok" does not end with "!"'


def test_starts_and_ends_with_ignoring_case() -> None:
    assert holds(a.TextStartsWith(text=s("HELLO"), ignore_case=True), "hello there")
    assert holds(a.TextEndsWith(text=s("THERE"), ignore_case=True), "hello there")
    assert not holds(a.TextEndsWith(text=s("THERE"), ignore_case=False), "hello there")


def test_matches_searches_the_untrimmed_text() -> None:
    assert holds(a.TextMatches(regex=a.Regex(pattern=r"\d{3}")), "code 123 ok")
    assert holds(a.TextMatches(regex=a.Regex(pattern=r"^\s")), " x")
    assert holds(a.TextMatches(regex=a.Regex(pattern="paris", flags="i")), "PARIS")
    detail = run(a.TextMatches(regex=a.Regex(pattern=r"\d")), "none").detail
    assert detail == 'final text "none" does not match /\\d/'


def test_matches_with_a_bad_regex_is_e202() -> None:
    with pytest.raises(CompileProblem) as caught:
        compile_final(a.TextMatches(regex=a.Regex(pattern="[a-")))
    assert caught.value.code == "E202"


def test_is_empty() -> None:
    assert holds(a.TextEmpty(), None)
    assert holds(a.TextEmpty(), "")
    assert holds(a.TextEmpty(), " \n\t")
    assert run(a.TextEmpty(), "x").detail == 'final text "x" is not empty'


def test_long_text_is_shortened_in_details() -> None:
    detail = run(a.TextContains(text=s("needle")), "hay " * 200).detail
    assert detail is not None and len(detail) < 200
    assert detail.endswith('does not contain "needle"')


_NEED_TEXT = [
    a.TextContains(text=s("x")),
    a.TextIs(text=s("")),
    a.TextStartsWith(text=s("")),
    a.TextEndsWith(text=s("")),
    a.TextMatches(regex=a.Regex(pattern=".*")),
    a.NumberIs(value=num(1)),
    a.NumberCompare(op="at least", value=num(0)),
    a.NumberBetween(low=num(0), high=num(1)),
    a.FinalJson(pattern=a.AnyPattern()),
]


@pytest.mark.parametrize("node", _NEED_TEXT, ids=lambda node: node.kind)
def test_every_final_form_but_is_empty_fails_without_text(node: Any) -> None:
    assert run(node, None) == Outcome(0.0, "no final text")


def test_an_empty_string_is_a_final_text() -> None:
    assert holds(a.TextIs(text=s("")), "")
    assert holds(a.TextStartsWith(text=s("")), "")


# --------------------------------------------------------------- numbers --


def test_number_is() -> None:
    node = a.NumberIs(value=num(4))
    assert holds(node, "2 + 2 = 4")
    assert holds(node, "It is 4.0")
    assert run(node, "The answer is 5.").detail == "last number 5 is not 4"
    assert not holds(node, "4 apples, no 5")


def test_number_is_within() -> None:
    node = a.NumberIs(value=num(3.14), within=num(0.01))
    assert holds(node, "pi is about 3.1416")
    assert holds(node, "3.15")
    assert run(node, "3.2").detail == "last number 3.2 is not 3.14 (within 0.01)"


def test_number_without_a_number() -> None:
    detail = run(a.NumberIs(value=num(4)), "hello").detail
    assert detail == 'no number in final text "hello"'


@pytest.mark.parametrize(
    ("op", "good", "bad"),
    [("at least", "10", "9.5"), ("at most", "10", "10.5"), ("above", "11", "10"),
     ("below", "9", "10")],
)
def test_number_compare(op: Any, good: str, bad: str) -> None:
    node = a.NumberCompare(op=op, value=num(10))
    assert holds(node, f"got {good}")
    assert run(node, f"got {bad}").detail == f"last number {bad} is not {op} 10"


def test_number_between_includes_both_bounds() -> None:
    node = a.NumberBetween(low=num(1), high=num(10))
    assert holds(node, "1")
    assert holds(node, "10")
    assert holds(node, "-1,000 then 5.5")
    assert run(node, "12").detail == "last number 12 is not between 1 and 10"


def test_number_between_reversed_is_a_compile_error() -> None:
    with pytest.raises(CompileProblem):
        compile_final(a.NumberBetween(low=num(10), high=num(1)))


def test_number_placeholder_is_a_compile_problem() -> None:
    with pytest.raises(CompileProblem) as caught:
        compile_final(a.NumberIs(value=a.Placeholder(name="sum")))
    assert caught.value.code == "E201"


# ------------------------------------------------------------------ json --


def _json_pattern() -> a.ObjectPattern:
    return a.ObjectPattern(entries=(
        a.KeyPattern(key="city", pattern=a.EqualsPattern(value=a.Word(value="Paris"))),
    ))


def test_final_json_matches_a_pattern() -> None:
    node = a.FinalJson(pattern=_json_pattern())
    assert holds(node, '{"city": "Paris", "country": "FR"}')
    assert holds(node, 'Sure!\n```json\n{"city": "Paris"}\n```')
    detail = run(node, '{"city": "Lyon"}').detail
    assert detail == 'final json {"city": "Lyon"}: city: expected "Paris", got "Lyon"'


def test_final_json_of_any_type() -> None:
    pattern = a.ArrayPattern(items=(a.EqualsPattern(value=num(1)), a.AnyPattern()))
    assert holds(a.FinalJson(pattern=pattern), "[1, null]")
    assert not holds(a.FinalJson(pattern=pattern), "[1]")
    assert holds(a.FinalJson(pattern=a.ComparePattern(op="above", value=num(1))), " 2 ")


def test_final_json_that_is_not_json() -> None:
    detail = run(a.FinalJson(pattern=a.AnyPattern()), "Paris").detail
    assert detail is not None
    assert "not JSON" in detail and '"Paris"' in detail


def test_not_a_final_predicate() -> None:
    with pytest.raises(CompileProblem):
        compile_final(a.NoError())
