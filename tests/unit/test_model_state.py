"""Compiled cases and expectations pickled as the tuple of their fields (`compile._model_check.quick_state`):
read back equal, field by field, by the suite cache's pickler and by the standard one, and copied alike."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

import evaldsl
from evaldsl.compile import _pickling
from evaldsl.compile._model import CaseSettings, CompiledCase, CompiledExpectation

SUITE = '''suite "state"

case "one"
  prompt "What is 1 + 2?"
  setup {"k": [1, 2]}
  expect called calculator with <op: add, a: 1>
  expect final number is 3
'''


def _fields(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


@pytest.mark.parametrize("cls", [CompiledCase, CompiledExpectation])
def test_the_state_is_the_fields_in_order(cls: type) -> None:
    made = CompiledCase(suite="s", name="n", file="f", line=1, prompt="p", settings=CaseSettings(),
                        expectations=(), setup={"a": 1}, simulated_user="u")
    if cls is CompiledExpectation:
        made = CompiledExpectation(label="l", file="f", line=2, check=print, needs_judge=True)  # type: ignore[assignment]
    assert made.__getstate__() == tuple(_fields(made).values())
    for again in (pickle.loads(pickle.dumps(made)), copy.copy(made), copy.deepcopy(made)):
        assert type(again) is cls and _fields(again) == _fields(made)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.line = 3  # type: ignore[misc]


def test_a_compiled_suite_reads_back_field_by_field() -> None:
    suite = evaldsl.compile(SUITE, filename="state.evl")
    again = _pickling.loads(_pickling.dumps(suite))
    (case,), (back,) = suite.cases, again.cases
    plain = {k: v for k, v in _fields(case).items() if k != "expectations"}
    assert {k: v for k, v in _fields(back).items() if k != "expectations"} == plain
    for e, f in zip(case.expectations, back.expectations, strict=True):
        assert {k: v for k, v in _fields(f).items() if k != "check"} == {
            k: v for k, v in _fields(e).items() if k != "check"}
        assert type(f.check) is type(e.check)
