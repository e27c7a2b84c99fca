"""`ToolAnswerer` (compile/_answerer.py): one run's answers, `given` first, sequences, world methods."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import evaldsl
from evaldsl.compile._answerer import ToolAnswerer
from evaldsl.compile._model import CompiledCase, ToolAnswer

TOOLS = """\
tool get_weather "Current weather"
  param city: string
  when <city: "Paris"> returns "rain"
  when <city: "Rome"> returns "busy" then "sunny" then fails "quota exceeded"
  otherwise returns "cloudy"
tool send_email
  param to: string
tool book_slot
  otherwise returns "busy, try again" then "booked"
"""

WORLD = '''\
import asyncio


class Shop:
    """A shop with orders."""

    def __init__(self, setup=None):
        self.orders = {o["id"]: dict(o) for o in (setup or {}).get("orders", [])}
        self.calls = 0

    def refund_order(self, id: int, reason: str = "customer asked") -> dict:
        """Refund a delivered order."""
        self.calls += 1
        order = self.orders[id]
        order["status"] = "refunded"
        return {"id": id, "status": "refunded", "reason": reason}

    async def lookup_order(self, id: int) -> str:
        """Look an order up."""
        await asyncio.sleep(0)
        return self.orders[id]["status"]

    def fail(self) -> str:
        raise ValueError("the till is closed")
'''


def case_of(text: str, tmp_path: Path | None = None) -> CompiledCase:
    folder = tmp_path or Path(".")
    suite = evaldsl.compile(text, str(folder / "t.evl"))
    return suite.cases[0]


def answerer(given: str = "", tools: str = TOOLS) -> ToolAnswerer:
    case = case_of(tools + f'case "c"\n  prompt "p"\n{given}  expect no error\n')
    return ToolAnswerer.for_case(case)


def test_given_lines_are_tried_before_the_tools_own_lines() -> None:
    ans = answerer('  given get_weather with <city: "Paris"> returns "25°C, sunny"\n')
    assert ans.answer("get_weather", {"city": "Paris"}) == ToolAnswer(True, "25°C, sunny")
    assert ans.answer("get_weather", {"city": "Oslo"}) == ToolAnswer(True, "cloudy")  # falls to the tool's


def test_given_lines_go_in_order_and_a_given_without_with_answers_every_call() -> None:
    ans = answerer('  given get_weather with <city: starts with "L"> returns "warm"\n'
                   '  given get_weather returns "anything"\n')
    assert ans.answer("get_weather", '{"city": "Lyon"}').text == "warm"  # JSON text is decoded
    assert ans.answer("get_weather", {"city": "Paris"}).text == "anything"


def test_given_fails_is_an_error_answer() -> None:
    ans = answerer('  given send_email fails "SMTP server down"\n')
    assert ans.answer("send_email", {"to": "bob@example.com"}) == ToolAnswer(False, "SMTP server down")


def test_a_tool_with_no_answering_line_says_so() -> None:
    ans = answerer()
    answer = ans.answer("send_email", {"to": "x"})
    assert not answer.ok and "no canned answer" in answer.text


def test_an_undeclared_tool_gets_an_error_naming_the_declared_ones() -> None:
    answer = answerer().answer("get_wether", {"city": "Paris"})
    assert not answer.ok
    assert "no tool named `get_wether`" in answer.text and "did you mean `get_weather`" in answer.text


def test_arguments_are_checked_before_the_given_lines() -> None:
    ans = answerer('  given get_weather returns "sunny"\n')
    assert ans.answer("get_weather", {}) == ToolAnswer(False, "Error: get_weather: missing required parameter `city`")
    wrong = ans.answer("get_weather", {"city": 3})
    assert not wrong.ok and "parameter `city`" in wrong.text


def test_sequences_answer_the_nth_call_with_the_nth_step_then_the_last() -> None:
    ans = answerer('  given send_email returns "queued" then fails "quota exceeded"\n')
    got = [ans.answer("send_email", {"to": "a"}) for _ in range(4)]
    assert got == [ToolAnswer(True, "queued")] + [ToolAnswer(False, "quota exceeded")] * 3
    rome = [ans.answer("get_weather", {"city": "Rome"}).text for _ in range(4)]
    assert rome == ["busy", "sunny", "quota exceeded", "quota exceeded"]
    slots = [ans.answer("book_slot", {}).text for _ in range(3)]
    assert slots == ["busy, try again", "booked", "booked"]


def test_each_line_counts_only_the_calls_it_answers() -> None:
    ans = answerer()
    assert ans.answer("get_weather", {"city": "Paris"}).text == "rain"
    assert ans.answer("get_weather", {"city": "Rome"}).text == "busy"  # Paris's call did not count here
    assert ans.answer("get_weather", {"city": "Paris"}).text == "rain"
    assert ans.answer("get_weather", {"city": "Rome"}).text == "sunny"


def test_a_fresh_answerer_starts_the_sequences_again() -> None:
    case = case_of(TOOLS + 'case "c"\n  prompt "p"\n  expect no error\n')
    first = ToolAnswerer.for_case(case)
    assert [first.answer("book_slot", {}).text for _ in range(2)] == ["busy, try again", "booked"]
    second = ToolAnswerer.for_case(case)  # the next repeat
    assert second.answer("book_slot", {}).text == "busy, try again"


def test_the_compiled_tools_own_answer_is_the_first_step_always() -> None:
    case = case_of(TOOLS + 'case "c"\n  prompt "p"\n  expect no error\n')
    tool = next(t for t in case.tools if t.name == "book_slot")
    assert [tool.answer({}).text for _ in range(2)] == ["busy, try again"] * 2


# ------------------------------------------------------------ worlds --


def world_case(tmp_path: Path, case_lines: str = "", tools: str = "") -> CompiledCase:
    (tmp_path / "shop_world.py").write_text(WORLD, encoding="utf-8")
    text = f'world "shop_world.py:Shop"\n{tools}case "c"\n  prompt "p"\n{case_lines}  expect no error\n'
    return case_of(text, tmp_path)


def test_a_world_method_is_called_with_validated_arguments(tmp_path: Path) -> None:
    case = world_case(tmp_path, '  setup <orders: [<id: 42, status: delivered>]>\n')
    instance = case.world.new(case.setup)
    ans = ToolAnswerer.for_case(case, instance)
    answer = ans.answer("refund_order", {"id": 42})
    assert answer.ok and json.loads(answer.text) == {"id": 42, "status": "refunded", "reason": "customer asked"}
    assert instance.orders[42]["status"] == "refunded"
    assert ans.answer("lookup_order", '{"id": 42}') == ToolAnswer(True, "refunded")  # async, run to its end


def test_an_async_world_method_is_awaited_by_aanswer(tmp_path: Path) -> None:
    case = world_case(tmp_path, '  setup <orders: [<id: 7, status: shipped>]>\n')
    ans = ToolAnswerer.for_case(case, case.world.new(case.setup))
    assert asyncio.run(ans.aanswer("lookup_order", {"id": 7})) == ToolAnswer(True, "shipped")
    assert asyncio.run(ans.aanswer("refund_order", {"id": 7})).ok  # a sync one, called in place


def test_an_exception_in_a_world_method_is_an_error_answer(tmp_path: Path) -> None:
    case = world_case(tmp_path)
    ans = ToolAnswerer.for_case(case, case.world.new())
    assert ans.answer("fail", {}) == ToolAnswer(False, "Error: fail: ValueError: the till is closed")
    assert ans.answer("refund_order", {"id": 99}) == ToolAnswer(False, "Error: refund_order: KeyError: 99")


def test_invalid_arguments_of_a_world_tool_get_an_error_saying_why(tmp_path: Path) -> None:
    case = world_case(tmp_path, '  setup <orders: [<id: 42, status: delivered>]>\n')
    instance = case.world.new(case.setup)
    ans = ToolAnswerer.for_case(case, instance)
    assert ans.answer("refund_order", {}) == ToolAnswer(False, "Error: refund_order: missing required parameter `id`")
    assert ans.answer("refund_order", {"id": 42, "colour": "red"}) == ToolAnswer(
        False, "Error: refund_order: unknown parameter `colour`")
    strict = ans.answer("refund_order", {"id": "42"})  # a string is no int: as JSON, strictly
    assert not strict.ok and strict.text.startswith("Error: refund_order: parameter `id`: ")
    assert not ans.answer("refund_order", "[1, 2]").ok
    assert instance.calls == 0  # the method never ran


def test_given_on_a_world_tool_means_the_method_is_not_called(tmp_path: Path) -> None:
    case = world_case(tmp_path, '  setup <orders: [<id: 42, status: delivered>]>\n'
                                '  given refund_order fails "payments are down"\n')
    instance = case.world.new(case.setup)
    ans = ToolAnswerer.for_case(case, instance)
    assert ans.answer("refund_order", {"id": 42}) == ToolAnswer(False, "payments are down")
    assert instance.calls == 0 and instance.orders[42]["status"] == "delivered"
    # the arguments are still checked first, as the method would have had them checked
    assert not ans.answer("refund_order", {"id": "x"}).ok


def test_a_world_tool_without_an_instance_says_so(tmp_path: Path) -> None:
    case = world_case(tmp_path)
    answer = ToolAnswerer.for_case(case).answer("fail", {})
    assert not answer.ok and "no world instance" in answer.text


def test_declared_tools_and_world_tools_answer_side_by_side(tmp_path: Path) -> None:
    case = world_case(tmp_path, '  given send_email returns "sent"\n',
                      tools='tool send_email\n  param to: string\n')
    ans = ToolAnswerer.for_case(case, case.world.new())
    assert ans.answer("send_email", {"to": "a"}) == ToolAnswer(True, "sent")
    assert [t.name for t in case.tools] == ["send_email", "refund_order", "lookup_order", "fail"]


def test_sequence_counts_hold_across_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    ans = answerer('  given send_email returns "1" then "2" then "3" then "4" then "5"\n')
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: ans.answer("send_email", {"to": "a"}).text, range(40)))
    assert sorted(got) == ["1", "2", "3", "4"] + ["5"] * 36  # each step once, none lost to a race
