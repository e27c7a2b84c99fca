"""`_safe._own_copy` builds its copies directly: the same models `model_construct` made, to the byte."""

from __future__ import annotations

import copy as copy_module
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl import RunArtifacts, ToolCall
from evaldsl.run._safe import _copied, _own_copy, decoded_args

CASES = [
    RunArtifacts(tool_calls=[ToolCall(name="search", args={"q": "x", "n": [1, {"a": None}]}, result="hit")],
                 final_text="done", tokens=3, duration_s=0.5),
    RunArtifacts(tool_calls=[ToolCall(name="calc", args='{"op": "add"}'), ToolCall(name="calc", args="not json")],
                 transcript=[{"role": "user", "content": "hi"}, ["raw", 1]], error="boom", error_kind="agent_raised"),
    RunArtifacts(transcript=[{"role": "assistant", "content": None}], input_tokens=1, output_tokens=2),
]


def _the_old_way(art: RunArtifacts) -> RunArtifacts:
    fields = dict(art.__dict__)
    fields["tool_calls"] = [ToolCall.model_construct(name=c.name, args=_copied(decoded_args(c.args)),
                                                     result=_copied(c.result)) for c in art.tool_calls]
    fields["transcript"] = _copied(art.transcript)
    return RunArtifacts.model_construct(**fields)


@pytest.mark.parametrize("art", CASES)
def test_the_copy_is_what_model_construct_made(art: RunArtifacts) -> None:
    new, old = _own_copy(art), _the_old_way(art)
    assert new == old
    assert new.model_dump_json() == old.model_dump_json()
    assert new.model_fields_set == old.model_fields_set
    assert new.__pydantic_extra__ == old.__pydantic_extra__ and new.__pydantic_private__ == old.__pydantic_private__
    for a, b in zip(new.tool_calls, old.tool_calls):
        assert type(a) is ToolCall and a.model_fields_set == b.model_fields_set
        assert list(a.__dict__) == list(b.__dict__)
    assert list(new.__dict__) == list(old.__dict__)
    assert new.tool_calls is not art.tool_calls and new.transcript is not art.transcript
    new.tool_calls.append(ToolCall(name="later"))  # assignment and mutation work as on any model
    new.final_text = "changed"
    assert "final_text" in new.model_fields_set and art.final_text != "changed"


@pytest.mark.parametrize("art", [*CASES, RunArtifacts(final_text="no calls"), RunArtifacts()])
def test_the_run_s_duration_set_in_that_copy_is_what_a_second_copy_for_it_made(art: RunArtifacts) -> None:
    from evaldsl.run._safe import make_safe
    from evaldsl.run._scoring import _with_duration

    new, warnings = make_safe(art, 0.25)
    old = _own_copy(art)
    old = old if old.duration_s is not None else _with_duration(old, 0.25)
    assert not warnings and new == old and new.model_dump_json() == old.model_dump_json()
    assert list(new.__dict__) == list(old.__dict__)
    assert new.duration_s == (art.duration_s if art.duration_s is not None else 0.25)
    assert art.duration_s != 0.25  # the agent's own object is not changed


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=3), inner, max_size=4),
                     max_leaves=20)


def _containers(value: object) -> list[int]:
    if isinstance(value, dict):
        return [id(value), *(i for v in value.values() for i in _containers(v))]
    if isinstance(value, list):
        return [id(value), *(i for v in value for i in _containers(v))]
    return []


@settings(max_examples=200, deadline=None)
@given(_JSON)
def test_a_copy_of_plain_json_is_equal_in_order_and_shares_no_container(value: object) -> None:
    copy = _copied(value)
    assert copy == copy_module.deepcopy(value) and json.dumps(copy) == json.dumps(value)  # key order kept
    assert not set(_containers(copy)) & set(_containers(value))
