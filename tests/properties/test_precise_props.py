"""Laws of precise matching (issue 26), checked on generated values (hypothesis).

- `calls are [S...] in any order` holds exactly when some permutation P of the
  steps makes `calls are S_P1 then S_P2 ...` hold (brute force is the oracle);
- `called [S...] in any order` holds exactly when some permutation's steps
  all find distinct calls; and it is monotone: more calls never break it;
- `loosely` is an equivalence (reflexive, symmetric, transitive);
- `only <k: any, ...>` naming every key of an object matches it, and fails
  once a key is added; without `only`, the added key changes nothing;
- the integer rule: text-decoded values by their token, native ones by type.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from evaldsl.artifacts import RunArtifacts, ToolCall
from evaldsl.compile._any_order import compile_any_order
from evaldsl.compile._calls import compile_calls
from evaldsl.compile._examples import from_python as lit
from evaldsl.compile._model import EvalContext
from evaldsl.compile._pattern_leaves import loose
from evaldsl.compile._patterns import compile_pattern
from evaldsl.compile._validate import decoded, type_error
from evaldsl.syntax import _ast as a

TOOLS = ("a", "b")
VALUES = (1, 2, 3)


def _step(tool: str | None, value: int | None) -> a.Step:
    name = None if tool is None else a.ToolName(name=tool)
    if value is None or tool is None:
        return a.Step(tool=name)
    key = a.KeyPattern(key="v", pattern=a.EqualsPattern(value=lit(value)))
    return a.Step(tool=name, args=a.ObjectPattern(entries=(key,)))


steps = st.lists(st.tuples(st.sampled_from((*TOOLS, None)), st.sampled_from((*VALUES, None))), min_size=1,
                 max_size=4).map(lambda xs: tuple(_step(t, v) for t, v in xs))
calls = st.lists(st.tuples(st.sampled_from(TOOLS), st.sampled_from(VALUES)), max_size=5).map(
    lambda xs: [ToolCall(name=t, args={"v": v}) for t, v in xs])


def holds(check: Any, tool_calls: list[ToolCall]) -> bool:
    return check(EvalContext(artifacts=RunArtifacts(tool_calls=tool_calls))).passed


@settings(max_examples=300, deadline=None)
@given(steps=steps, tool_calls=calls)
def test_calls_are_in_any_order_is_some_permutation_of_then(steps: tuple[a.Step, ...],
                                                            tool_calls: list[ToolCall]) -> None:
    any_order = holds(compile_any_order(a.CallsAreAnyOrder(steps=steps)), tool_calls)
    oracle = any(holds(compile_calls(a.CallsAre(steps=order)), tool_calls)
                 for order in itertools.permutations(steps))
    assert any_order == oracle


@settings(max_examples=300, deadline=None)
@given(steps=steps, tool_calls=calls)
def test_called_in_any_order_is_some_assignment_of_distinct_calls(steps: tuple[a.Step, ...],
                                                                  tool_calls: list[ToolCall]) -> None:
    any_order = holds(compile_any_order(a.CalledAnyOrder(steps=steps)), tool_calls)
    single = [compile_calls(a.CallsAre(steps=(step,))) for step in steps]
    oracle = any(all(holds(check, [tool_calls[j]]) for check, j in zip(single, chosen, strict=True))
                 for chosen in itertools.permutations(range(len(tool_calls)), len(steps)))
    assert any_order == oracle


@settings(max_examples=300, deadline=None)
@given(steps=steps, tool_calls=calls, extra=calls, at=st.integers(0, 5))
def test_called_in_any_order_is_monotone_in_extra_calls(steps: tuple[a.Step, ...], tool_calls: list[ToolCall],
                                                       extra: list[ToolCall], at: int) -> None:
    check = compile_any_order(a.CalledAnyOrder(steps=steps))
    assume(holds(check, tool_calls))
    at = min(at, len(tool_calls))
    assert holds(check, tool_calls[:at] + extra + tool_calls[at:])


# --------------------------------------------------------------- loosely --

texts = st.text(alphabet=st.sampled_from("aAbB zZ.,-_!?$€\t\u00e9\u00c9\u00df\u1e9e"), max_size=8)


def loosely(expected: str) -> Any:
    return compile_pattern(a.LooselyPattern(value=a.String(value=expected)))


@given(x=texts)
def test_loosely_is_reflexive(x: str) -> None:
    assert loosely(x)(x) is None


@given(x=texts, y=texts)
def test_loosely_is_symmetric(x: str, y: str) -> None:
    assert (loosely(x)(y) is None) == (loosely(y)(x) is None)


@given(x=texts, y=texts, z=texts)
def test_loosely_is_transitive(x: str, y: str, z: str) -> None:
    if loosely(x)(y) is None and loosely(y)(z) is None:
        assert loosely(x)(z) is None


@given(x=texts, noise=st.text(alphabet=st.sampled_from(" \t.,;:-_!?()[]{}+$€\u00a0\u3000"), max_size=6))
def test_loosely_ignores_spaces_punctuation_and_symbols(x: str, noise: str) -> None:
    assert loosely(x)(noise + x.upper() + noise) is None
    assert loose(noise) == ""


# ------------------------------------------------------------------ only --

keys = st.text(alphabet="abcdxyz", min_size=1, max_size=3)
objects = st.dictionaries(keys, st.integers(0, 3) | st.text(max_size=3), max_size=4)


def any_of_keys(obj: dict[str, Any], *, closed: bool) -> Any:
    pattern = a.ObjectPattern(entries=tuple(a.KeyPattern(key=k, pattern=a.AnyPattern()) for k in obj))
    return compile_pattern(a.OnlyPattern(pattern=pattern) if closed else pattern)


@given(obj=objects, extra=keys, value=st.integers())
def test_only_with_every_key_matches_and_fails_once_a_key_is_added(obj: dict[str, Any], extra: str,
                                                                   value: int) -> None:
    assume(extra not in obj)
    assert any_of_keys(obj, closed=True)(obj) is None
    wider = {**obj, extra: value}
    assert any_of_keys(obj, closed=True)(wider) is not None
    assert any_of_keys(obj, closed=False)(wider) is None  # the subset rule, unchanged


# ------------------------------------------------------- the integer rule --


@given(n=st.integers(-(10**30), 10**30))
def test_an_integer_token_is_an_integer_and_a_fraction_or_exponent_is_not(n: int) -> None:
    for text, integer in ((str(n), True), (f"{n}.0", False), (f"{n}e0", False), (f"{n}E+0", False),
                          (json.dumps(str(n)), False)):
        values, why = decoded('{"n": %s}' % text)
        assert why is None
        assert (type_error({"type": "integer"}, values["n"]) is None) is integer, text
        assert (type_error({"type": "number"}, values["n"]) is None) is (integer or not text.startswith('"'))


@given(value=st.integers() | st.floats() | st.booleans() | st.text(max_size=3) | st.none())
def test_native_values_are_integers_by_type_alone(value: Any) -> None:
    integer = isinstance(value, int) and not isinstance(value, bool)
    assert (type_error({"type": "integer"}, value) is None) is integer
    if isinstance(value, float) and value.is_integer():
        assert type_error({"type": "integer"}, value) is not None  # 20.0 is no integer, even as Python data
