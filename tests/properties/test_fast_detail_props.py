"""The scoring fast paths give the texts of the general ones (hypothesis).

`compact_json` (json's C encoder made once) stands in for `json.JSONEncoder(ensure_ascii=False)`
in a call's display, and the same for `show`'s encoder in the details; `format_miss` has a
one-key shortcut past its key regex; `called T with ARGS` words only the closest call;
`last_number` scans with a rewriting of the language's number regex. Each must give byte for
byte what the general route gives.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from evaldsl.artifacts import RunArtifacts, ToolCall
from evaldsl.compile._calls import _display, compile_calls
from evaldsl.compile._examples import from_python as lit
from evaldsl.compile._model import EvalContext
from evaldsl.compile._patterns import Miss, format_miss
from evaldsl.compile._text import _NUMBER, _NUMBER_SCAN
from evaldsl.compile._values import compact_json, shorten, show
from evaldsl.syntax import _ast as a

_ENCODER = json.JSONEncoder(ensure_ascii=False)
_SHOW = json.JSONEncoder(ensure_ascii=False, allow_nan=True, default=repr)

scalars = (
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats()
    | st.text(max_size=8) | st.sampled_from(["\u2028", "\x00", '"', "\\", "é", "𝄞", "\ud800"])
)
plain_json = st.recursive(
    scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=4), kids, max_size=4),
    max_leaves=16,
)
other_json = st.one_of(  # what JSON writes too, though it never reads them back
    st.tuples(st.integers()), st.dictionaries(st.integers() | st.floats() | st.booleans() | st.none(),
                                              st.integers(), min_size=1, max_size=2),
    st.builds(lambda n: [[[[[[[[[[n]]]]]]]]]], st.integers()),
)


def _circular() -> list[Any]:
    loop: list[Any] = [1]
    loop.append({"self": loop})
    return loop


not_json = st.sampled_from([{1, 2}, object, b"x", 10**5000]) | st.builds(_circular)


@given(plain_json | other_json)
def test_compact_json_is_the_encoders_text(value: Any) -> None:
    assert compact_json(value) == _ENCODER.encode(value)


@given(not_json)
def test_compact_json_leaves_the_rest_to_the_encoder(value: Any) -> None:
    assert compact_json(value) is None
    try:
        _ENCODER.encode(value)
    except (TypeError, ValueError):
        return
    raise AssertionError("the encoder wrote a value compact_json did not")


def _general_show(value: Any, limit: int = 120) -> str:
    try:
        text = _SHOW.encode(value)
    except (TypeError, ValueError):
        text = repr(value)
    return shorten(text, limit)


@given(plain_json | other_json | not_json, st.integers(1, 130))
def test_show_is_the_encoders_text_shortened(value: Any, limit: int) -> None:
    assert _answer(show, value, limit=limit) == _answer(_general_show, value, limit)


def _answer(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """What `fn` returns, or the type of what it raises (an int too long to print, say)."""
    try:
        return fn(*args, **kwargs)
    except Exception as err:  # (the point: the same error either way)
        return type(err)


@given(st.text(max_size=6), plain_json | st.text(max_size=12))
def test_a_calls_display_is_its_own(name: str, args: Any) -> None:
    call = ToolCall(name=name, args=args)
    assert _display(call) == call.display()


_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@given(st.text(max_size=5) | st.sampled_from(["a", "_x1", "1a", "ä", "a-b", "Ⅸ", "a\n", "٣"]), st.text(max_size=5))
def test_a_one_key_miss_reads_as_the_general_path(key: str, text: str) -> None:
    shown = key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)
    assert format_miss(Miss((key,), text)) == f"{shown}: {text}"


small_args = st.dictionaries(st.sampled_from(["op", "a", "b"]), st.sampled_from(["add", "sub", 1, 2, 2.0, True]),
                             max_size=3)


@given(st.lists(st.tuples(st.sampled_from(["calc", "other"]), small_args), max_size=8))
def test_called_with_names_the_first_closest_call(made: list[tuple[str, dict[str, Any]]]) -> None:
    pattern = a.ObjectPattern(entries=tuple(a.KeyPattern(key=k, pattern=a.EqualsPattern(value=lit(v)))
                                            for k, v in {"op": "add", "a": 1, "b": 2}.items()))
    check = compile_calls(a.Called(tool=a.ToolName(name="calc"), args=pattern))
    calls = [ToolCall(name=name, args=args) for name, args in made]
    outcome = check(EvalContext(artifacts=RunArtifacts(tool_calls=calls)))
    of_tool = [call for call in calls if call.name == "calc"]
    misses = [_misses(call.args) for call in of_tool]
    if any(not found for found in misses):
        assert outcome.credit == 1.0 and outcome.detail is None
        return
    assert outcome.credit == 0.0
    if not of_tool:
        assert outcome.detail == (f"calc was not called; calls: {', '.join(c.name for c in calls)}" if calls
                                  else "no tool was called")
        return
    fewest = min(misses, key=len)  # the first of the closest
    shown = ", ".join(call.display() for call in of_tool[:5]) + (
        f", … ({len(of_tool) - 5} more)" if len(of_tool) > 5 else "")
    assert outcome.detail == (f'no call of calc matched <op: "add", a: 1, b: 2>; calls of calc: {shown}; '
                              f"closest: {'; '.join(fewest)}")


def _misses(args: dict[str, Any]) -> list[str]:
    """The pattern <op: add, a: 1, b: 2>'s reasons, worded by hand in the order of its keys."""
    reasons = []
    for key, wanted in {"op": "add", "a": 1, "b": 2}.items():
        if key not in args:
            reasons.append(f'missing key "{key}"')
        elif not (args[key] == wanted and isinstance(args[key], bool) == isinstance(wanted, bool)):
            reasons.append(f"{key}: expected {json.dumps(wanted)}, got {json.dumps(args[key])}")
    return reasons


def test_without_a_c_encoder_the_general_one_answers(monkeypatch: Any) -> None:
    from evaldsl.compile import _values

    monkeypatch.setattr(_values, "_DISPLAY_FAST", None)
    monkeypatch.setattr(_values, "_SHOW_FAST", None)
    call = ToolCall(name="calc", args={"op": "add", "é": [1.5, None, True]})
    assert compact_json(call.args) is None
    assert _display(call) == call.display() == 'calc({"op": "add", "é": [1.5, null, true]})'
    assert show({"x": float("nan"), "y": {1, 2}}) == '{"x": NaN, "y": "{1, 2}"}'
    assert show([float("inf"), "é"]) == '[Infinity, "é"]'


@given(st.text(alphabet="0123456789,.-_ aZé٣\n\t", max_size=60) | st.text(max_size=30))
def test_the_number_scan_finds_what_the_languages_regex_finds(text: str) -> None:
    assert [(m.start(), m.group()) for m in _NUMBER_SCAN.finditer(text)] == \
        [(m.start(), m.group()) for m in _NUMBER.finditer(text)]
