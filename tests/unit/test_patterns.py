"""Argument patterns (docs/language.md section 7): every form matches and fails as written."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from evaldsl.compile._errors import CompileProblem
from evaldsl.compile._examples import from_python as lit
from evaldsl.compile._patterns import compile_args, compile_args_misses, compile_pattern
from evaldsl.syntax import _ast as a

# ------------------------------------------------------------- builders --


def eq(value: Any, *, ignore_case: bool = False) -> a.EqualsPattern:
    return a.EqualsPattern(value=lit(value), ignore_case=ignore_case)


def obj(**entries: Any) -> a.ObjectPattern:
    return keyed(entries)


def keyed(entries: dict[str, Any]) -> a.ObjectPattern:
    return a.ObjectPattern(
        entries=tuple(a.KeyPattern(key=k, pattern=p) for k, p in entries.items())
    )


def num(value: int | float) -> a.Number:
    return a.Number(value=value, raw=json.dumps(value))


def match(pattern: Any, value: Any) -> str | None:
    return compile_pattern(pattern)(value)


# ------------------------------------------------------------- literals --


def test_bare_word_matches_equal_string() -> None:
    pattern = obj(op=a.EqualsPattern(value=a.Word(value="add")))
    assert match(pattern, {"op": "add", "a": 2}) is None
    assert match(pattern, {"op": "sub"}) == 'op: expected "add", got "sub"'


def test_string_literal_is_case_sensitive() -> None:
    assert match(eq("Paris"), "Paris") is None
    assert match(eq("Paris"), "paris") == 'expected "Paris", got "paris"'


def test_numbers_compare_by_value() -> None:
    assert match(eq(2), 2.0) is None
    assert match(eq(2.0), 2) is None
    assert match(eq(2), 3) == "expected 2, got 3"


def test_booleans_never_equal_numbers() -> None:
    assert match(eq(True), 1) == "expected true, got 1"
    assert match(eq(1), True) == "expected 1, got true"
    assert match(eq(0), False) is not None
    assert match(eq(False), False) is None


def test_null_matches_only_null() -> None:
    assert match(eq(None), None) is None
    assert match(eq(None), 0) == "expected null, got 0"
    assert match(eq(None), "") is not None


def test_string_never_equals_number() -> None:
    assert match(eq("5"), 5) == 'expected "5", got 5'
    assert match(eq(5), "5") == 'expected 5, got "5"'


def test_ignoring_case_uses_unicode_casefold() -> None:
    pattern = eq("straße", ignore_case=True)
    assert match(pattern, "STRASSE") is None
    assert match(pattern, "Strasse") is None
    assert match(pattern, "strase") == 'expected "straße" ignoring case, got "strase"'


# ------------------------------------------------------- objects, arrays --


def test_object_is_a_subset_match() -> None:
    pattern = obj(to=eq("bob@example.com"))
    assert match(pattern, {"to": "bob@example.com", "subject": "hi", "cc": []}) is None


def test_object_missing_key_is_named() -> None:
    assert match(obj(to=eq("bob")), {"subject": "hi"}) == 'missing key "to"'


def test_object_reports_every_failing_key() -> None:
    reason = match(obj(op=eq("add"), a=eq(2)), {"op": "sub", "a": 3})
    assert reason == 'op: expected "add", got "sub"; a: expected 2, got 3'


def test_object_pattern_on_a_non_object() -> None:
    assert match(obj(x=eq(1)), [1]) == "expected an object, got [1]"
    assert match(obj(), "text") == 'expected an object, got "text"'


def test_empty_object_pattern_matches_any_object() -> None:
    assert match(obj(), {"anything": 1}) is None


def test_nested_object_paths() -> None:
    pattern = obj(options=obj(recursive=eq(True)))
    assert match(pattern, {"options": {"recursive": True, "depth": 3}}) is None
    assert match(pattern, {"options": {"recursive": False}}) == (
        "options.recursive: expected true, got false"
    )
    assert match(pattern, {"options": {}}) == 'options: missing key "recursive"'


def test_a_key_with_a_dot_is_one_key() -> None:
    pattern = keyed({"a.b": eq(1)})
    assert match(pattern, {"a.b": 1}) is None
    assert match(pattern, {"a": {"b": 1}}) == 'missing key "a.b"'
    assert match(pattern, {"a.b": 2}) == '"a.b": expected 1, got 2'


def test_quoted_key_shows_quoted_in_path() -> None:
    pattern = keyed({"content-type": eq("json")})
    assert match(pattern, {"content-type": "xml"}) == (
        '"content-type": expected "json", got "xml"'
    )


def test_array_matches_exact_length_in_order() -> None:
    pattern = a.ArrayPattern(items=(eq(1), eq("b")))
    assert match(pattern, [1, "b"]) is None
    assert match(pattern, [1.0, "b"]) is None
    assert match(pattern, ["b", 1]) == '[0]: expected 1, got "b"; [1]: expected "b", got 1'


def test_array_length_must_be_exact() -> None:
    pattern = a.ArrayPattern(items=(eq(1), eq(2)))
    assert match(pattern, [1, 2, 3]) == "expected an array of 2 elements, got 3: [1, 2, 3]"
    assert match(pattern, [1]) == "expected an array of 2 elements, got 1: [1]"
    assert match(pattern, {"0": 1}) == 'expected an array of 2 elements, got {"0": 1}'


def test_empty_array_pattern() -> None:
    assert match(a.ArrayPattern(), []) is None
    assert match(a.ArrayPattern(), [0]) == "expected an array of 0 elements, got 1: [0]"


def test_array_paths_inside_objects() -> None:
    pattern = obj(items=a.ArrayPattern(items=(a.AnyPattern(), obj(name=eq("x")))))
    assert match(pattern, {"items": [None, {"name": "x"}]}) is None
    assert match(pattern, {"items": [None, {"name": "y"}]}) == (
        'items[1].name: expected "x", got "y"'
    )


# ------------------------------------------------------------ any/absent --


def test_any_requires_the_key_only() -> None:
    pattern = obj(path=a.AnyPattern())
    assert match(pattern, {"path": None}) is None
    assert match(pattern, {"path": {"deep": [1]}}) is None
    assert match(pattern, {}) == 'missing key "path"'


def test_any_as_array_element_needs_the_element() -> None:
    pattern = a.ArrayPattern(items=(a.AnyPattern(),))
    assert match(pattern, ["x"]) is None
    assert match(pattern, []) is not None


def test_absent_as_a_keys_pattern() -> None:
    pattern = obj(cc=a.AbsentPattern())
    assert match(pattern, {"to": "bob"}) is None
    assert match(pattern, {"cc": "eve"}) == 'cc: expected no such key, got "eve"'
    assert match(pattern, {"cc": None}) is not None


@pytest.mark.parametrize(
    "pattern",
    [
        a.AbsentPattern(),
        a.ArrayPattern(items=(a.AbsentPattern(),)),
        obj(cc=a.PatternNegation(pattern=a.AbsentPattern())),
        obj(cc=a.PatternAnd(patterns=(a.AbsentPattern(), eq(1)))),
        obj(cc=a.ContainsPattern(pattern=a.AbsentPattern())),
        a.PatternOr(patterns=(a.AbsentPattern(), eq(1))),
        obj(cc=a.PatternOr(patterns=(a.PatternNegation(pattern=a.AbsentPattern()), eq(1)))),
    ],
    ids=["top", "array element", "under not", "under and", "under contains", "absent or P not a key's",
         "under not under or"],
)
def test_absent_elsewhere_is_e203(pattern: Any) -> None:
    with pytest.raises(CompileProblem) as caught:
        compile_pattern(pattern)
    assert caught.value.code == "E203"
    assert isinstance(caught.value.node, a.AbsentPattern)


# -------------------------------------------------------------- contains --


def test_contains_string_is_a_substring_test() -> None:
    pattern = obj(query=a.ContainsPattern(pattern=eq("weather")))
    assert match(pattern, {"query": "the weather in Paris"}) is None
    assert match(pattern, {"query": "sunny"}) == (
        'query: expected a string containing "weather", got "sunny"'
    )


def test_contains_string_on_an_array_wants_an_equal_element() -> None:
    pattern = obj(tags=a.ContainsPattern(pattern=a.EqualsPattern(value=a.Word(value="news"))))
    assert match(pattern, {"tags": ["sports", "news"]}) is None
    assert match(pattern, {"tags": ["sports"]}) == (
        'tags: expected an array containing "news", got ["sports"]'
    )
    assert match(pattern, {"tags": ["newsy"]}) is not None


def test_contains_ignoring_case() -> None:
    pattern = a.ContainsPattern(pattern=eq("WEATHER", ignore_case=True))
    assert match(pattern, "the weather") is None
    assert match(pattern, ["Weather"]) is None
    reason = match(pattern, "sunny")
    assert reason == 'expected a string containing "WEATHER" ignoring case, got "sunny"'


def test_contains_pattern_on_an_array() -> None:
    pattern = a.ContainsPattern(pattern=obj(id=eq(2)))
    assert match(pattern, [{"id": 1}, {"id": 2, "x": 0}]) is None
    reason = match(pattern, [{"id": 1}])
    assert reason is not None and reason.endswith('got [{"id": 1}]')
    assert reason.startswith("expected an array containing ")


def test_contains_number_pattern_on_an_array() -> None:
    pattern = a.ContainsPattern(pattern=a.ComparePattern(op="at least", value=num(5)))
    assert match(pattern, [1, 7]) is None
    assert match(pattern, [1, 2]) is not None
    assert match(pattern, [True]) is not None


def test_contains_a_non_string_does_not_search_strings() -> None:
    pattern = a.ContainsPattern(pattern=eq(5))
    assert match(pattern, "a5") == 'expected an array containing 5, got "a5"'
    assert match(pattern, [5.0]) is None


def test_contains_on_a_number() -> None:
    reason = match(a.ContainsPattern(pattern=eq("x")), 42)
    assert reason == 'expected a string or an array containing "x", got 42'


def test_contains_and_contains() -> None:
    pattern = obj(tags=a.PatternAnd(patterns=(
        a.ContainsPattern(pattern=eq("news")), a.ContainsPattern(pattern=eq("weather")),
    )))
    assert match(pattern, {"tags": ["weather", "news"]}) is None
    assert match(pattern, {"tags": ["news"]}) == (
        'tags: expected an array containing "weather", got ["news"]'
    )


# ----------------------------------------------------- strings and regex --


def test_starts_with() -> None:
    pattern = a.StartsWithPattern(text=a.String(value="/tmp/"))
    assert match(pattern, "/tmp/x") is None
    assert match(pattern, "/var/x") == 'expected a string starting with "/tmp/", got "/var/x"'
    assert match(pattern, 7) is not None


def test_ends_with() -> None:
    pattern = a.EndsWithPattern(text=a.String(value=".rs"))
    assert match(pattern, "main.rs") is None
    assert match(pattern, "main.py") == 'expected a string ending with ".rs", got "main.py"'


def test_starts_and_ends_with_ignoring_case() -> None:
    starts = a.StartsWithPattern(text=a.String(value="Hello"), ignore_case=True)
    ends = a.EndsWithPattern(text=a.String(value=".TOML"), ignore_case=True)
    assert match(starts, "HELLO world") is None
    assert match(ends, "Cargo.toml") is None
    assert match(ends, "Cargo.lock") == (
        'expected a string ending with ".TOML" ignoring case, got "Cargo.lock"'
    )


def test_matches_searches_anywhere() -> None:
    pattern = obj(path=a.MatchesPattern(regex=a.Regex(pattern=r"Cargo\.toml$")))
    assert match(pattern, {"path": "crates/a/Cargo.toml"}) is None
    assert match(pattern, {"path": "Cargo.lock"}) == (
        'path: expected a string matching /Cargo\\.toml$/, got "Cargo.lock"'
    )
    assert match(pattern, {"path": 3}) is not None


@pytest.mark.parametrize(
    ("flags", "text"),
    [("i", "ABC"), ("m", "x\nabc"), ("s", "a\nc"), ("x", "abc")],
)
def test_regex_flags(flags: str, text: str) -> None:
    source = {"i": "abc", "m": "^abc", "s": "a.c", "x": "a b c"}[flags]
    assert match(a.MatchesPattern(regex=a.Regex(pattern=source, flags=flags)), text) is None
    assert match(a.MatchesPattern(regex=a.Regex(pattern=source)), text) is not None


def test_bad_regex_is_e202_with_res_message() -> None:
    with pytest.raises(CompileProblem) as caught:
        compile_pattern(a.MatchesPattern(regex=a.Regex(pattern="(ab")))
    assert caught.value.code == "E202"
    assert "missing ), unterminated subpattern" in caught.value.message


def test_regex_is_compiled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    matcher = compile_pattern(a.MatchesPattern(regex=a.Regex(pattern="b+")))

    def no_compiling(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("re.compile called during a run")

    monkeypatch.setattr(re, "compile", no_compiling)
    monkeypatch.setattr(re, "search", no_compiling)
    assert matcher("abbc") is None
    assert matcher("ac") is not None


# ---------------------------------------------------------------- one of --


def test_one_of_words() -> None:
    pattern = a.OneOfPattern(values=(a.Word(value="add"), a.Word(value="sub")))
    assert match(pattern, "sub") is None
    assert match(pattern, "mul") == 'expected one of ["add", "sub"], got "mul"'


def test_one_of_uses_the_literal_rule_for_objects_and_arrays() -> None:
    pattern = a.OneOfPattern(values=(lit([1, 2]), lit({"a": 1}), lit(1)))
    assert match(pattern, [1.0, 2]) is None
    assert match(pattern, {"a": 1.0}) is None
    assert match(pattern, {"a": 1, "b": 2}) is not None  # equality, not a subset match
    assert match(pattern, [2, 1]) is not None
    assert match(pattern, True) is not None


# --------------------------------------------------------------- numbers --


@pytest.mark.parametrize(
    ("op", "passes", "fails"),
    [
        ("at least", [5, 5.0, 6], [4.99]),
        ("at most", [5, 4], [5.01]),
        ("above", [5.5], [5, 5.0]),
        ("below", [4.9], [5]),
    ],
)
def test_comparisons(op: Any, passes: list[float], fails: list[float]) -> None:
    pattern = obj(limit=a.ComparePattern(op=op, value=num(5)))
    for value in passes:
        assert match(pattern, {"limit": value}) is None, value
    for value in fails:
        assert match(pattern, {"limit": value}) == f"limit: expected {op} 5, got {value}"


def test_comparisons_take_numbers_only() -> None:
    pattern = a.ComparePattern(op="at least", value=num(0))
    assert match(pattern, True) == "expected at least 0, got true"
    assert match(pattern, "7") == 'expected at least 0, got "7"'
    assert match(pattern, None) is not None


def test_between_includes_both_bounds() -> None:
    pattern = a.BetweenPattern(low=num(1), high=num(3))
    for value in (1, 2.5, 3):
        assert match(pattern, value) is None
    assert match(pattern, 3.5) == "expected between 1 and 3, got 3.5"
    assert match(pattern, False) is not None


def test_between_with_reversed_bounds_is_a_compile_error() -> None:
    with pytest.raises(CompileProblem, match="between 3 and 1"):
        compile_pattern(a.BetweenPattern(low=num(3), high=num(1)))


def test_within() -> None:
    pattern = a.WithinPattern(value=num(5), tolerance=num(0.5))
    assert match(pattern, 5.5) is None
    assert match(pattern, 4.5) is None
    assert match(pattern, 5.6) == "expected 5 within 0.5, got 5.6"
    assert match(pattern, True) is not None


def test_within_needs_a_number_and_a_tolerance_of_zero_or_more() -> None:
    with pytest.raises(CompileProblem):
        compile_pattern(a.WithinPattern(value=a.String(value="x"), tolerance=num(1)))
    with pytest.raises(CompileProblem):
        compile_pattern(a.WithinPattern(value=num(1), tolerance=num(-1)))


# ----------------------------------------------------------- combinators --


def test_or_matches_either() -> None:
    pattern = obj(op=a.PatternOr(patterns=(eq("add"), eq("sub"))))
    assert match(pattern, {"op": "sub"}) is None
    assert match(pattern, {"op": "mul"}) == 'op: expected "add" or "sub", got "mul"'


def test_and_needs_both() -> None:
    pattern = a.PatternAnd(patterns=(
        a.ComparePattern(op="at least", value=num(1)),
        a.ComparePattern(op="at most", value=num(3)),
    ))
    assert match(pattern, 2) is None
    assert match(pattern, 4) == "expected at most 3, got 4"


def test_not_inverts_a_present_key() -> None:
    pattern = obj(op=a.PatternNegation(pattern=eq("delete")))
    assert match(pattern, {"op": "read"}) is None
    assert match(pattern, {"op": "delete"}) == 'op: expected not "delete", got "delete"'


def test_not_still_requires_the_key() -> None:
    pattern = obj(op=a.PatternNegation(pattern=eq("delete")))
    assert match(pattern, {}) == 'missing key "op"'


# ------------------------------------------------------------ placeholders --


@pytest.mark.parametrize(
    "pattern",
    [
        a.EqualsPattern(value=a.Placeholder(name="x")),
        a.ComparePattern(op="above", value=a.Placeholder(name="x")),
        a.StartsWithPattern(text=a.Placeholder(name="x")),
        a.OneOfPattern(values=(a.Placeholder(name="x"),)),
        obj(k=a.WithinPattern(value=num(1), tolerance=a.Placeholder(name="x"))),
    ],
)
def test_an_unfilled_placeholder_is_a_compile_problem(pattern: Any) -> None:
    with pytest.raises(CompileProblem) as caught:
        compile_pattern(pattern)
    assert isinstance(caught.value.node, a.Placeholder)
    assert "$x" in caught.value.message


# ------------------------------------------------------------- arguments --


def test_args_decode_a_json_string_first() -> None:
    matcher = compile_args(obj(op=eq("add")))
    assert matcher('{"op": "add", "a": 2}') is None
    assert matcher('{"op": "sub"}') == 'op: expected "add", got "sub"'
    assert matcher({"op": "add"}) is None


def test_args_that_are_not_json_match_nothing() -> None:
    matcher = compile_args(obj())
    assert matcher('{"op": "add"') == 'arguments are not valid JSON: {"op": "add"'
    long = "x" * 500
    reason = matcher(long)
    assert reason is not None and reason.startswith("arguments are not valid JSON: xxx")
    assert len(reason) < 120


def test_args_that_decode_to_a_non_object() -> None:
    assert compile_args(obj())("[1, 2]") == "expected an object, got [1, 2]"


def test_args_placeholder_is_a_compile_problem() -> None:
    with pytest.raises(CompileProblem):
        compile_args(a.Placeholder(name="args"))


def test_args_misses_lists_each_failing_key() -> None:
    misses = compile_args_misses(obj(op=eq("add"), a=eq(1), b=a.AnyPattern()))
    assert misses({"op": "add", "a": 1, "b": 0}) == []
    assert misses({"op": "sub", "a": 1}) == ['op: expected "add", got "sub"', 'missing key "b"']


# ----------------------------------------------------- from parsed source --


def parsed_args(source: str) -> Any:
    """The argument pattern of `expect called t with SOURCE`, as the parser builds it."""
    from evaldsl.syntax._parser import parse

    suite = parse(f'case "c"\n  prompt "p"\n  expect called t with {source}\n')
    statement = [s for s in suite.cases[0].body if isinstance(s, a.ExpectStmt)][0]
    return statement.expectation.expr.args


@pytest.mark.parametrize(
    ("source", "good", "bad", "reason"),
    [
        ("<tags: contains news and contains weather>", {"tags": ["weather", "news"]},
         {"tags": ["news"]}, 'tags: expected an array containing "weather", got ["news"]'),
        ('<q: contains "Paris" ignoring case>', {"q": "PARIS weather"}, {"q": "Lyon"},
         'q: expected a string containing "Paris" ignoring case, got "Lyon"'),
        ("<limit: above 5, op: one of [add, sub]>", {"limit": 6, "op": "add"},
         {"limit": 5, "op": "add"}, "limit: expected above 5, got 5"),
        ('{"content-type": json, "n": 2 within 0.1}', {"content-type": "json", "n": 2.05},
         {"content-type": "json", "n": 2.2}, "n: expected 2 within 0.1, got 2.2"),
        ("<options: <recursive: true>, cc: absent>", {"options": {"recursive": True}},
         {"options": {"recursive": True}, "cc": 1}, "cc: expected no such key, got 1"),
        ("<path: matches /\\.toml$/i, items: [any, not 0]>", {"path": "A.TOML", "items": [0, 1]},
         {"path": "a.toml", "items": [0, 0]}, "items[1]: expected not 0, got 0"),
    ],
)
def test_parsed_patterns(source: str, good: Any, bad: Any, reason: str) -> None:
    matcher = compile_args(parsed_args(source))
    assert matcher(good) is None
    assert matcher(bad) == reason


def test_parsed_not_absent_is_e203() -> None:
    with pytest.raises(CompileProblem) as caught:
        compile_args(parsed_args("<cc: not absent>"))
    assert caught.value.code == "E203"
    assert caught.value.node.span is not None
