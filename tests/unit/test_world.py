"""The world loader (compile/_world.py, _world_tools.py) and `expect world` (_world_state.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl.artifacts import RunArtifacts
from evaldsl.compile._errors import CompileProblem
from evaldsl.compile._model import EvalContext
from evaldsl.compile._world import (
    aclose_world,
    astate_of,
    close_world,
    load_world,
    split_spec,
    state_of,
    world_ref,
)

WORLD = '''\
import dataclasses
from typing import Literal

from pydantic import BaseModel


class Shop:
    """A shop."""

    def __init__(self, setup=None):
        self.orders = list((setup or {}).get("orders", []))
        self._secret = "kept out"
        self.closed = False

    def refund_order(self, id: int, reason: str = "asked", notify: bool = True) -> str:
        """Refund a delivered order.

        Only delivered orders can be refunded; this line is not the description.

        Args:
            id: the order's number
            reason: why, in a few words,
                as the customer said it
        """
        return "ok"

    async def search(self, query: str, limit: int = 5, kind: Literal["order", "customer"] = "order") -> list:
        return []

    def _helper(self, x) -> None:
        pass

    @staticmethod
    def version() -> str:
        """The shop's version."""
        return "1"

    @property
    def size(self) -> int:
        return len(self.orders)

    def state(self) -> dict:
        return {"orders": self.orders}

    def close(self) -> None:
        self.closed = True


class Fields:
    def __init__(self, setup=None):
        self.count = 1
        self.names = ("a", "b")
        self._hidden = 2

    def bump(self) -> int:
        self.count += 1
        return self.count


class AsyncShop:
    def __init__(self):
        self.log = []

    def ping(self) -> str:
        return "pong"

    async def state(self) -> dict:
        return {"log": self.log}

    async def close(self) -> None:
        self.log.append("closed")


class Model(BaseModel):
    items: list[int] = []

    def add(self, item: int) -> str:
        self.items.append(item)
        return "added"


@dataclasses.dataclass
class Data:
    n: int = 0

    def inc(self, by: int = 1) -> int:
        self.n += by
        return self.n


class Base:
    def inherited(self, x: int) -> int:
        return x


class Child(Base):
    def own(self) -> str:
        return "own"


class Empty:
    def _private(self) -> None:
        pass

    def state(self) -> dict:
        return {}
'''


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    (tmp_path / "w.py").write_text(WORLD, encoding="utf-8")
    return tmp_path


def tools(folder: Path, name: str) -> dict[str, Any]:
    world = load_world(f"w.py:{name}", folder)
    return {t.name: t for t in world.tools}


def test_public_typed_methods_are_tools_with_a_schema_from_the_signature(folder: Path) -> None:
    shop = tools(folder, "Shop")
    assert list(shop) == ["refund_order", "search", "version"]  # not _helper, size, state, close
    refund = shop["refund_order"]
    assert refund.description == "Refund a delivered order."
    assert refund.parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "id": {"type": "integer", "description": "the order's number"},
            "reason": {"type": "string", "default": "asked", "description": "why, in a few words, as the customer said it"},
            "notify": {"type": "boolean", "default": True},
        },
        "required": ["id"],  # parameters with defaults are optional
    }
    search = shop["search"].parameters
    assert search["required"] == ["query"]
    assert search["properties"]["kind"]["enum"] == ["order", "customer"]
    assert shop["search"].description == ""  # no docstring, no description
    assert shop["version"].parameters["properties"] == {}


def test_a_tool_schema_is_what_a_model_is_sent(folder: Path) -> None:
    refund = tools(folder, "Shop")["refund_order"]
    assert refund.schema()["type"] == "function"
    assert refund.schema()["function"]["name"] == "refund_order"
    assert refund.method == "refund_order" and refund.line > 0


def test_bases_methods_are_tools_and_pydantic_and_dataclass_machinery_is_not(folder: Path) -> None:
    assert list(tools(folder, "Child")) == ["own", "inherited"]
    assert list(tools(folder, "Model")) == ["add"]  # no model_dump, model_validate, ...
    assert list(tools(folder, "Data")) == ["inc"]


def test_a_class_with_no_tool_method_is_an_error(folder: Path) -> None:
    with pytest.raises(CompileProblem) as info:
        load_world("w.py:Empty", folder)
    assert info.value.code == "E244" and "no public method" in str(info.value)


def test_state_is_state_or_else_the_public_fields_as_json(folder: Path) -> None:
    shop = load_world("w.py:Shop", folder)
    instance = shop.new({"orders": [{"id": 42}]})
    assert shop.has_state and state_of(instance) == {"orders": [{"id": 42}]}
    fields = load_world("w.py:Fields", folder)
    assert not fields.has_state
    assert state_of(fields.new()) == {"count": 1, "names": ["a", "b"]}  # no _hidden; a tuple as JSON
    data = load_world("w.py:Data", folder)
    assert state_of(data.new()) == {"n": 0}


def test_new_passes_setup_only_when_the_case_has_one(folder: Path) -> None:
    shop = load_world("w.py:Shop", folder)
    assert shop.new().orders == []
    assert shop.new({"orders": [1]}).orders == [1]
    assert shop.new(None).orders == []  # `setup null` is a setup: Shop(None)
    a, b = shop.new(), shop.new()
    assert a is not b  # a fresh instance per run


def test_close_is_called_when_there_is_one(folder: Path) -> None:
    shop = load_world("w.py:Shop", folder)
    instance = shop.new()
    close_world(instance)
    assert instance.closed
    close_world(load_world("w.py:Fields", folder).new())  # no close(): nothing to do


def test_async_state_and_close(folder: Path) -> None:
    world = load_world("w.py:AsyncShop", folder)
    instance = world.new()
    assert state_of(instance) == {"log": []}  # run to its end off the loop
    close_world(instance)
    assert instance.log == ["closed"]

    async def on_loop() -> Any:
        other = world.new()
        state = await astate_of(other)
        await aclose_world(other)
        return state, other.log

    assert asyncio.run(on_loop()) == ({"log": []}, ["closed"])


def test_a_world_file_is_imported_once_per_process(folder: Path) -> None:
    first, second = load_world("w.py:Shop", folder), load_world("w.py:Shop", folder)
    assert first.cls is second.cls


def test_a_world_known_by_name_only_has_no_tools(tmp_path: Path) -> None:
    ref = world_ref("shop.py:Shop", tmp_path)
    assert not ref.loaded and ref.tools == () and ref.name == "Shop"
    with pytest.raises(RuntimeError, match="not imported"):
        ref.new()


@pytest.mark.parametrize("spec", ["shop.py", "shop.py:", ":Shop", "shop.txt:Shop", "shop.py:not-a-name"])
def test_a_malformed_spec_says_how_to_write_it(spec: str) -> None:
    with pytest.raises(ValueError):
        split_spec(spec)


def test_compile_without_importing_leaves_the_worlds_tools_unknown(folder: Path) -> None:
    text = 'world "w.py:Shop"\ncase "c"\n  prompt "p"\n  given refund_ordr returns "x"\n  expect called nope\n'
    suite = evaldsl.compile(text, str(folder / "s.evl"), import_worlds=False)
    assert suite.world is not None and not suite.world.loaded
    assert suite.cases[0].tools == ()
    with pytest.raises(evaldsl.EvlError) as info:
        evaldsl.compile(text, str(folder / "s.evl"))
    assert sorted(d.code for d in info.value.errors) == ["E218", "E242"]


# ------------------------------------------------------- expect world --


def world_check(pattern: str) -> Any:
    suite = evaldsl.compile(f'case "c"\n  prompt "p"\n  expect world {pattern}\n', "t.evl", predicates={})
    return suite.cases[0].expectations[0]


def test_expect_world_judges_the_state_the_runner_hands_in() -> None:
    check = world_check("<orders: contains <id: 42, status: refunded>>")
    refunded = {"orders": [{"id": 42, "status": "refunded", "color": "blue"}]}
    assert check(EvalContext(RunArtifacts(), world_state=refunded)).passed
    outcome = check(EvalContext(RunArtifacts(), world_state={"orders": [{"id": 42, "status": "delivered"}]}))
    assert not outcome.passed and (outcome.detail or "").startswith("world state {")


def test_expect_world_null_state_is_a_state() -> None:
    assert world_check("null")(EvalContext(RunArtifacts(), world_state=None)).passed


def test_expect_world_asks_a_harness_worlds_state() -> None:
    class HarnessWorld:
        def state(self) -> dict:
            return {"rows": (1, 2)}

    check = world_check("<rows: [1, 2]>")
    assert check(EvalContext(RunArtifacts(), world=HarnessWorld())).passed


def test_expect_world_with_no_state_to_judge_says_why() -> None:
    check = world_check("<rows: []>")
    with pytest.raises(LookupError, match="no world"):
        check(EvalContext(RunArtifacts()))
    with pytest.raises(LookupError, match=r"without a state\(\) method"):
        check(EvalContext(RunArtifacts(), world=object()))


def test_expect_world_in_a_suite_with_a_world_compiles(folder: Path) -> None:
    text = 'world "w.py:Shop"\ncase "c"\n  prompt "p"\n  expect world <orders: []>\n'
    assert evaldsl.compile(text, str(folder / "s.evl")).cases[0].expectations[0].label == "world <orders: []>"


def test_star_args_and_unhinted_parameters_are_errors_naming_the_method(tmp_path: Path) -> None:
    (tmp_path / "star.py").write_text("class W:\n    def log(self, *lines: str) -> None:\n        pass\n")
    with pytest.raises(CompileProblem, match=r"W\.log \(star\.py:2\) takes \*lines: a tool's arguments are named"):
        load_world("star.py:W", tmp_path)
    (tmp_path / "bare.py").write_text("class W:\n    def add(self, x: int, y):\n        return x\n")
    with pytest.raises(CompileProblem, match=r"W\.add \(bare\.py:2\) has no type hint for `y`"):
        load_world("bare.py:W", tmp_path)


def test_positional_only_parameters_are_passed_by_position(tmp_path: Path) -> None:
    from evaldsl.compile._answerer import ToolAnswerer

    (tmp_path / "pos.py").write_text("class W:\n    def div(self, a: int, /, b: int = 2) -> float:\n"
                                     "        return a / b\n")
    world = load_world("pos.py:W", tmp_path)
    answerer = ToolAnswerer(world.tools, world=world, instance=world.new())
    assert answerer.answer("div", {"a": 9, "b": 3}).text == "3.0"
    assert answerer.answer("div", {"a": 8}).text == "4.0"


def test_a_used_tool_named_like_a_world_method_and_a_second_world_line(folder: Path) -> None:
    (folder / "lib.evl").write_text('tool refund_order\n  param id: integer\n', encoding="utf-8")
    text = 'use "lib.evl"\nworld "w.py:Shop"\nworld "w.py:Fields"\ncase "c"\n  prompt "p"\n  expect no error\n'
    with pytest.raises(evaldsl.EvlError) as info:
        evaldsl.compile(text, str(folder / "s.evl"))
    found = {(d.code, d.span.line if d.span else 0): d.message for d in info.value.errors}
    assert "a suite has at most one `world`" in found[("E244", 3)]
    clash = found[("E243", 2)]  # at the `world` line, naming where the tool was declared
    assert clash.startswith("tool `refund_order` (declared at ") and "lib.evl:1)" in clash
    assert "method of the world Shop (w.py:" in clash
