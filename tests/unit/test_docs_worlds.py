"""What docs/language.md sections 14-17 quote about worlds and tool answers is what the code does."""

from __future__ import annotations

import json
from pathlib import Path

from _docblocks import fenced_blocks

import evaldsl
from evaldsl.artifacts import RunArtifacts
from evaldsl.compile._answerer import ToolAnswerer
from evaldsl.compile._model import EvalContext

LANGUAGE = Path(__file__).resolve().parents[2] / "docs" / "language.md"
PAGE = LANGUAGE.read_text(encoding="utf-8")
BLOCKS = fenced_blocks(LANGUAGE)


def _block(kind: str, file: str | None = None, after: str | None = None) -> str:
    for block in BLOCKS:
        if block.kind != kind or (file is not None and block.file != file):
            continue
        if after is None or after in "\n".join(PAGE.splitlines()[max(0, block.line - 4): block.line]):
            return block.text
    raise AssertionError(f"no {kind} block {file or after} on the page")


def _shop(tmp_path: Path) -> evaldsl.CompiledSuite:
    (tmp_path / "shop_world.py").write_text(_block("python", "shop_world.py"), encoding="utf-8")
    return evaldsl.compile(_block("evl", "shop.evl"), str(tmp_path / "shop.evl"))


def test_the_quoted_schema_is_the_one_pydantic_builds(tmp_path: Path) -> None:
    suite = _shop(tmp_path)
    refund = next(t for t in suite.tools if t.name == "refund_order")
    assert refund.parameters == json.loads(_block("json", after="`refund_order` becomes"))
    assert refund.description == "Refund a delivered order."
    lookup = next(t for t in suite.tools if t.name == "lookup_order")
    assert lookup.parameters["properties"]["id"]["description"] == "the order's number"


def test_the_quoted_error_answers_are_the_answerers(tmp_path: Path) -> None:
    suite = _shop(tmp_path)
    case = suite.cases[0]
    instance = case.world.new({"orders": [{"id": 42, "status": "refunded"}]})
    answerer = ToolAnswerer.for_case(case, instance)
    raised = answerer.answer("refund_order", {"id": 42}).text
    missing = answerer.answer("refund_order", {}).text
    assert raised == "Error: refund_order: ValueError: order 42 is refunded" and raised in PAGE
    assert missing == "Error: refund_order: missing required parameter `id`"
    assert "Error: refund_order: missing\n  required parameter `id`" in PAGE


def test_the_quoted_world_detail_is_the_checks() -> None:
    suite = evaldsl.compile('case "c"\n  prompt "p"\n  expect world <orders: []>\n', "t.evl", predicates={})
    detail = suite.cases[0].expectations[0](EvalContext(RunArtifacts(), world_state={"orders": [{"id": 7}]})).detail
    assert detail is not None and detail in PAGE


def test_the_quoted_sequence_table_is_what_the_answerer_gives(tmp_path: Path) -> None:
    (tmp_path / "weather.evl").write_text(_block("evl", "weather.evl"), encoding="utf-8")
    suite = evaldsl.compile(_block("evl", "weather.evl"), str(tmp_path / "weather.evl"))
    case = next(c for c in suite.cases if c.name == "retries a busy service")
    answerer = ToolAnswerer.for_case(case)
    got = [answerer.answer("book_slot", {}).text for _ in range(4)]
    assert got == ["busy, try again", "booked", "booked", "booked"]
    assert "| 1st | `busy, try again` |" in PAGE and "| 3rd and later | `booked` |" in PAGE
    lyon = next(c for c in suite.cases if c.name == "weather in Lyon")
    lyon_answers = ToolAnswerer.for_case(lyon)
    assert lyon_answers.answer("get_weather", {"city": "Lyon"}).text == "25°C, sunny"
    assert lyon_answers.answer("get_weather", {"city": "Oslo"}).text == "cloudy"
    assert not lyon_answers.answer("send_email", {"to": "a"}).ok
