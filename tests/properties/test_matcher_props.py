"""Matcher laws, checked on generated values (hypothesis).

Subset match, negation, numbers by value, booleans never numbers, the last
number of a text against an independent scanner, and subsequence order.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from evaldsl.artifacts import RunArtifacts, ToolCall
from evaldsl.compile._calls import compile_calls
from evaldsl.compile._examples import from_python as lit
from evaldsl.compile._model import EvalContext
from evaldsl.compile._patterns import compile_pattern
from evaldsl.compile._text import last_number
from evaldsl.compile._values import json_equal
from evaldsl.syntax import _ast as a

# ------------------------------------------------------------- builders --


def eq(value: Any) -> a.EqualsPattern:
    return a.EqualsPattern(value=lit(value))


def num(value: int | float) -> a.Number:
    return a.Number(value=value, raw=json.dumps(value))


def keyed(entries: dict[str, Any]) -> a.ObjectPattern:
    return a.ObjectPattern(
        entries=tuple(a.KeyPattern(key=k, pattern=p) for k, p in entries.items())
    )


scalars = (
    st.none() | st.booleans() | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6)
)
json_values = st.recursive(
    scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=4), kids,
                                                              max_size=4),
    max_leaves=12,
)
numbers = st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def sub_pattern(draw: Any, value: Any) -> Any:
    """A pattern that `value` must match: any sub-object of it, written as a pattern."""
    if draw(st.integers(0, 5)) == 0:
        return a.AnyPattern()
    if isinstance(value, dict):
        keys = draw(st.lists(st.sampled_from(sorted(value)), unique=True)) if value else []
        return keyed({k: draw(sub_pattern(value[k])) for k in keys})
    if isinstance(value, list):
        return a.ArrayPattern(items=tuple(draw(sub_pattern(item)) for item in value))
    return eq(value)


# ---------------------------------------------------------- subset match --


@given(st.data(), json_values)
def test_a_pattern_of_any_sub_object_matches(data: Any, value: Any) -> None:
    pattern = data.draw(sub_pattern(value))
    assert compile_pattern(pattern)(value) is None


@given(st.data(), st.dictionaries(st.text(max_size=4), json_values, max_size=4), st.text())
def test_adding_a_missing_key_breaks_the_match(data: Any, value: dict[str, Any],
                                               extra: str) -> None:
    if extra in value:
        return
    pattern = data.draw(sub_pattern(value))
    if not isinstance(pattern, a.ObjectPattern):
        pattern = a.ObjectPattern()
    widened = a.ObjectPattern(entries=(*pattern.entries,
                                       a.KeyPattern(key=extra, pattern=a.AnyPattern())))
    reason = compile_pattern(widened)(value)
    assert reason is not None and f"missing key {json.dumps(extra, ensure_ascii=False)}" in reason


# --------------------------------------------------------------- numbers --


@given(st.integers(-(2**53), 2**53))
def test_numbers_compare_by_value(n: int) -> None:
    assert compile_pattern(eq(float(n)))(n) is None
    assert compile_pattern(eq(n))(float(n)) is None
    assert compile_pattern(eq(n))(n + 1) is not None
    assert compile_pattern(a.OneOfPattern(values=(num(float(n)),)))(n) is None


@given(st.booleans(), numbers)
def test_booleans_never_match_numbers(flag: bool, n: int | float) -> None:
    assert compile_pattern(eq(flag))(n) is not None
    assert compile_pattern(eq(n))(flag) is not None
    assert compile_pattern(a.ComparePattern(op="at least", value=num(-(2**60))))(flag) is not None
    assert not json_equal([flag], [n])
    assert not json_equal({"k": n}, {"k": flag})


# -------------------------------------------------------------- negation --


leaf_patterns = st.one_of(
    scalars.map(eq),
    st.tuples(st.sampled_from(["at least", "at most", "above", "below"]), numbers).map(
        lambda pair: a.ComparePattern(op=pair[0], value=num(pair[1]))),
    st.tuples(numbers, numbers).map(
        lambda pair: a.BetweenPattern(low=num(min(pair)), high=num(max(pair)))),
    st.text(max_size=3).map(lambda s: a.ContainsPattern(pattern=eq(s))),
    st.text(max_size=3).map(lambda s: a.StartsWithPattern(text=a.String(value=s))),
    st.text(max_size=3).map(lambda s: a.EndsWithPattern(text=a.String(value=s),
                                                        ignore_case=True)),
    st.lists(scalars, max_size=3).map(lambda vs: a.OneOfPattern(values=tuple(map(lit, vs)))),
    st.sampled_from(["^a", "b$", "[0-9]", "x|y"]).map(
        lambda r: a.MatchesPattern(regex=a.Regex(pattern=r, flags="i"))),
)


@given(leaf_patterns, json_values)
def test_not_matches_exactly_when_the_pattern_does_not(pattern: Any, value: Any) -> None:
    plain = compile_pattern(keyed({"k": pattern}))({"k": value})
    negated = compile_pattern(keyed({"k": a.PatternNegation(pattern=pattern)}))({"k": value})
    assert (plain is None) != (negated is None)
    assert compile_pattern(keyed({"k": a.PatternNegation(pattern=pattern)}))({}) is not None


# ----------------------------------------------------------- last number --


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _digits_from(text: str, start: int) -> int:
    end = start
    while end < len(text) and text[end] in "0123456789":
        end += 1
    return end


def _number_at(text: str, start: int) -> int | None:
    """Where a number starting at `start` ends, scanning by hand (None: no number)."""
    if start > 0 and (_is_word(text[start - 1]) or text[start - 1] == "."):
        return None
    first = start + 1 if text[start] == "-" else start
    end = _digits_from(text, first)
    if end == first:
        return None
    if end - first <= 3:
        while (text[end:end + 1] == "," and len(text[end + 1:end + 4]) == 3
               and text[end + 1:end + 4].isascii() and text[end + 1:end + 4].isdigit()):
            end += 4
    if text[end:end + 1] == "." and _digits_from(text, end + 1) > end + 1:
        end = _digits_from(text, end + 1)
    return end


def reference_last_number(text: str) -> int | float | None:
    found, index = None, 0
    while index < len(text):
        end = _number_at(text, index)
        if end is None:
            index += 1
        else:
            found, index = text[index:end], end
    if found is None:
        return None
    digits = found.replace(",", "")
    return float(digits) if "." in digits else int(digits)


@given(st.text(alphabet="0123456789,.-_ aév٣\n", max_size=40))
def test_last_number_agrees_with_a_hand_scanner(text: str) -> None:
    expected = reference_last_number(text)
    got = last_number(text)
    assert got == expected and type(got) is type(expected)


number_tokens = st.tuples(
    st.integers(-(10**9), 10**9), st.booleans(), st.none() | st.text("0123456789", min_size=1,
                                                                      max_size=3),
)
noise_tokens = st.sampled_from(["the", "answer", "is", "v2", "abc12", "x1.5", "so", "ok."])


def _written(token: tuple[int, bool, str | None]) -> tuple[str, int | float]:
    n, commas, fraction = token
    whole = f"{abs(n):,}" if commas else str(abs(n))
    text = ("-" if n < 0 else "") + whole + (f".{fraction}" if fraction else "")
    value = float(text.replace(",", "")) if fraction else n
    return text, value


@given(st.lists(number_tokens.map(_written) | noise_tokens, max_size=8),
       st.sampled_from([" ", ", ", "; ", " (", "\n", ": "]))
def test_last_number_finds_the_last_written_number(tokens: list[Any], sep: str) -> None:
    text = sep.join(t if isinstance(t, str) else t[0] for t in tokens)
    values = [t[1] for t in tokens if not isinstance(t, str)]
    assert last_number(text) == (values[-1] if values else None)


# ----------------------------------------------------------- subsequence --


def _holds(steps: list[str | None], names: list[str]) -> bool:
    node = a.CalledSequence(steps=tuple(
        a.Step(tool=None if s is None else a.ToolName(name=s)) for s in steps))
    ctx = EvalContext(artifacts=RunArtifacts(tool_calls=[ToolCall(name=n) for n in names]))
    return compile_calls(node)(ctx).passed


@given(st.data(), st.lists(st.sampled_from("abcd"), min_size=1, max_size=8))
def test_a_chain_from_a_subsequence_holds(data: Any, names: list[str]) -> None:
    picked = data.draw(st.lists(st.integers(0, len(names) - 1), min_size=1, unique=True))
    steps: list[str | None] = [names[i] for i in sorted(picked)]
    if data.draw(st.booleans()):
        steps[data.draw(st.integers(0, len(steps) - 1))] = None  # `any tool`
    assert _holds(steps, names)


@given(st.data(), st.lists(st.sampled_from("abcdefgh"), min_size=2, max_size=8, unique=True))
def test_a_swapped_chain_of_distinct_names_fails(data: Any, names: list[str]) -> None:
    i = data.draw(st.integers(0, len(names) - 2))
    j = data.draw(st.integers(i + 1, len(names) - 1))
    assert _holds([names[i], names[j]], names)
    assert not _holds([names[j], names[i]], names)


@given(st.lists(st.sampled_from("ab") | st.none(), min_size=1, max_size=4),
       st.lists(st.sampled_from("abc"), max_size=7))
def test_greedy_matching_agrees_with_brute_force(steps: list[str | None],
                                                  names: list[str]) -> None:
    embeddable = any(
        all(s is None or names[i] == s for s, i in zip(steps, chosen, strict=True))
        for chosen in itertools.combinations(range(len(names)), len(steps))
    )
    assert _holds(steps, names) == embeddable


@given(st.one_of(st.integers(min_value=-(10**40), max_value=10**40), st.floats()))
def test_an_examples_number_is_written_as_json_writes_it(value: Any) -> None:
    """A number read from an examples file keeps the text `json.dumps` gives it (its `raw`), made
    without an encoder: ints, floats, infinities and NaN alike."""
    from evaldsl.compile._example_files import _json_number

    assert _json_number(value) == json.dumps(value)
