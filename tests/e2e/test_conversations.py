"""Conversations end to end (LANGUAGE.md 11-14): `evaldsl run` against a scripted OpenAI-compatible server
on 127.0.0.1 that plays both the agent's model and the simulated user's model.

Covers: a two-turn refund against a world (state after each turn, `expect world`), a simulated customer
(`--user-model`, ended by the user, tokens kept apart), `given` sequences over HTTP, a Python agent reading
`ctx.messages`, and the two usage errors (a conversation for a prompt-only agent; a simulated user with no
`--user-model`), each exit code 4 before anything runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from servers._script import call, text, tool_calls
from servers._server import ScriptedServer

from evaldsl.cli import main

WORLD = '''
class Shop:
    """A shop with orders."""

    def __init__(self, setup=None):
        self.orders = [dict(o) for o in (setup or {}).get("orders", [])]
        self.closed = False

    def lookup_order(self, id: int) -> dict:
        """Look an order up by its number."""
        for order in self.orders:
            if order["id"] == id:
                return order
        raise KeyError(f"no order {id}")

    def refund_order(self, id: int) -> str:
        """Refund a delivered order."""
        order = self.lookup_order(id)
        order["status"] = "refunded"
        return f"order {id} refunded"

    def state(self):
        return {"orders": self.orders}
'''

SHOP = '''suite "Shop"
world "shop_world.py:Shop"

case "refunds in two turns"
  setup <orders: [<id: 42, status: delivered, color: blue>]>
  expect called refund_order once
  user "I want a refund for order 42"
    expect called lookup_order with <id: 42>
    expect final text contains "blue" ignoring case
    expect world <orders: [<status: delivered>]>
  user "Yes, the blue one"
    expect called refund_order with <id: 42>
    expect final text contains "refunded"
    expect world <orders: [<id: 42, status: refunded>]>
  expect world <orders: [<id: 42>]>                # by position: still turn 2's (the state at the end)
'''


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shop_world.py").write_text(WORLD)
    (tmp_path / "shop.evl").write_text(SHOP)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_shop(openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, str, str]:
    """shop.evl against the scripted shop agent's model, its record in rec.json (``more``: other options)."""
    openai_server.reply = shop_agent
    return run(capsys, "shop.evl", "--model", "openai:agent", "--base-url", openai_server.base_url,
               "--json", "rec.json", *more, "--no-cache")


def _last_user(request: dict[str, Any]) -> tuple[str, bool]:
    """The last user message of a request, and whether a tool result came after it."""
    messages = request["messages"]
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return messages[last]["content"], any(m["role"] == "tool" for m in messages[last:])


def shop_agent(request: dict[str, Any], index: int) -> Any:
    """The agent's model: looks the order up on the first message, refunds it on the second."""
    said, answered = _last_user(request)
    if "refund for order 42" in said:
        return text("Order 42 is the blue shirt. Shall I refund it?") if answered else tool_calls(
            call("lookup_order", {"id": 42}))
    if "blue one" in said:
        return text("Done: order 42 is refunded.") if answered else tool_calls(call("refund_order", {"id": 42}))
    return text("How can I help?")


def test_a_two_turn_refund_against_a_world_is_judged_turn_by_turn(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run_shop(openai_server, capsys)
    assert code == 0, out + err
    # the messages accumulate: the second turn's first request holds the first turn whole
    second = [r.json for r in openai_server.requests if "blue one" in _last_user(r.json)[0]][0]
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    assert {t["function"]["name"] for t in second["tools"]} == {"lookup_order", "refund_order"}
    record = json.loads((tmp_path / "rec.json").read_text())
    assert record["schema_version"] == 3
    run0 = record["cases"][0]["runs"][0]
    conversation = run0["conversation"]
    assert conversation["ended_by"] == "script"
    assert [t["message"] for t in conversation["turns"]] == ["I want a refund for order 42", "Yes, the blue one"]
    assert [t["world_state"]["orders"][0]["status"] for t in conversation["turns"]] == ["delivered", "refunded"]
    assert [[c["name"] for c in t["artifacts"]["tool_calls"]] for t in conversation["turns"]] == [
        ["lookup_order"], ["refund_order"]]
    assert [(e["turn"], e["passed"]) for e in run0["expectations"]] == [
        (None, True), (1, True), (1, True), (1, True), (2, True), (2, True), (2, True), (2, True)]
    assert [c["name"] for c in run0["artifacts"]["tool_calls"]] == ["lookup_order", "refund_order"]


def test_a_failed_turn_is_named_and_later_turns_still_run(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "shop.evl").write_text(SHOP.replace('contains "blue" ignoring case', 'contains "green"'))
    code, out, err = run_shop(openai_server, capsys, "--junit-xml", "junit.xml", "--markdown", "r.md")
    assert code == 1, out + err
    assert 'turn 1 "I want a refund for order 42"' in out
    assert 'final text contains "green"' in out
    # under the failure, the conversation a turn at a time: message, calls, reply
    assert '    turn 2 user: "Yes, the blue one"\n      calls: refund_order({"id": 42})' in out
    record = json.loads((tmp_path / "rec.json").read_text())
    turns = record["cases"][0]["runs"][0]["conversation"]["turns"]
    assert len(turns) == 2  # the second message was still sent
    assert 'turn 1 "I want a refund for order 42"' in (tmp_path / "junit.xml").read_text()
    assert 'turn 1' in (tmp_path / "r.md").read_text()


CUSTOMER = '''suite "Shop"
world "shop_world.py:Shop"

case "a simulated customer"
  setup <orders: [<id: 42, status: delivered, color: blue>]>
  simulated user """
    You bought a blue shirt, order 42. You want a refund.
    """
  user turns 4
  expect called refund_order with <id: 42>
  expect world <orders: contains <status: refunded>>
'''


def customer_and_agent(request: dict[str, Any], index: int) -> Any:
    messages = request["messages"]
    if messages[0]["role"] == "system" and "playing the user" in messages[0]["content"]:
        agent_said = [m["content"] for m in messages if m["role"] == "user"]
        if any("refunded" in said for said in agent_said):
            return text("###DONE###", input_tokens=7, output_tokens=1)
        if any("Shall I refund" in said for said in agent_said):
            return text("Yes, the blue one", input_tokens=7, output_tokens=3)
        return text("I want a refund for order 42", input_tokens=7, output_tokens=3)
    return shop_agent(request, index)


def test_a_simulated_customer_plays_until_it_is_done(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "shop.evl").write_text(CUSTOMER)
    openai_server.reply = customer_and_agent
    code, out, err = run(capsys, "shop.evl", "--model", "openai:agent", "--user-model", "openai:customer",
                         "--base-url", openai_server.base_url, "--json", "rec.json")
    assert code == 0, out + err
    record = json.loads((tmp_path / "rec.json").read_text())
    assert record["meta"]["user_model"]["model"] == "customer"
    run0 = record["cases"][0]["runs"][0]
    conversation = run0["conversation"]
    assert conversation["ended_by"] == "user"
    assert [(t["message"], t["simulated"]) for t in conversation["turns"]] == [
        ("I want a refund for order 42", True), ("Yes, the blue one", True)]
    assert conversation["user_tokens"] == 10 + 10 + 8  # the user's three replies, apart from the agent's
    assert run0["artifacts"]["tokens"] == 4 * 15  # the agent's four model calls
    users = [r for r in openai_server.requests if r.json["model"] == "customer"]
    assert "You bought a blue shirt, order 42." in users[0].json["messages"][0]["content"]
    # the cache serves the whole conversation on a second run: nothing new reaches the server
    before = len(openai_server.requests)
    code, out, err = run(capsys, "shop.evl", "--model", "openai:agent", "--user-model", "openai:customer",
                         "--base-url", openai_server.base_url)
    assert code == 0 and len(openai_server.requests) == before, out + err


def test_a_simulated_user_stops_at_its_bound(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "shop.evl").write_text(CUSTOMER.replace("user turns 4", "user turns 2").replace(
        "expect called refund_order with <id: 42>", "expect final text contains \"help\""))

    def chatty(request: dict[str, Any], index: int) -> Any:
        if "playing the user" in json.dumps(request["messages"][:1]):
            return text("hello again")
        return text("How can I help?")

    openai_server.reply = chatty
    code, out, err = run(capsys, "shop.evl", "--model", "openai:agent", "--user-model", "openai:customer",
                         "--base-url", openai_server.base_url, "--json", "rec.json", "--no-cache")
    record = json.loads((tmp_path / "rec.json").read_text())
    conversation = record["cases"][0]["runs"][0]["conversation"]
    assert conversation["ended_by"] == "bound" and len(conversation["turns"]) == 2
    assert code == 1  # the world was never refunded: `expect world` fails, reaching the bound is no error
    assert record["cases"][0]["runs"][0]["error"] is None


def test_a_simulated_user_without_a_user_model_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "shop.evl").write_text(CUSTOMER)
    code, out, err = run(capsys, "shop.evl", "--model", "openai:agent", "--base-url", "http://127.0.0.1:9/v1")
    assert code == 4
    assert "shop.evl:4: case 'a simulated customer' has a `simulated user`" in err and "--user-model" in err


GIVEN = '''suite "Slots"
tool book_slot "Book a slot"
  param time: string
  otherwise returns "booked"

case "retries a busy service"
  prompt "Book the 9:00 slot"
  given book_slot returns "busy, try again" then "booked"
  expect called book_slot twice
  expect final text contains "booked"
'''


def test_given_sequences_answer_the_model_call_by_call(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "slots.evl").write_text(GIVEN.replace('case "retries', 'case "retries').replace(
        'prompt "Book', 'repeat 2\n  prompt "Book'))

    def booker(request: dict[str, Any], index: int) -> Any:
        results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
        if results and results[-1] == "booked":
            return text("The 9:00 slot is booked.")
        return tool_calls(call("book_slot", {"time": "9:00"}))

    openai_server.reply = booker
    code, out, err = run(capsys, "slots.evl", "--model", "openai:m", "--base-url", openai_server.base_url,
                         "--json", "rec.json", "--no-cache")
    assert code == 0, out + err
    runs = json.loads((tmp_path / "rec.json").read_text())["cases"][0]["runs"]
    for one in runs:  # each repeat starts the sequence again
        assert [c["result"] for c in one["artifacts"]["tool_calls"]] == ["busy, try again", "booked"]


AGENT = '''
from evaldsl import RunArtifacts

SEEN = []

def agent(message, ctx):
    SEEN.append({"turn": ctx.turn, "id": ctx.conversation_id, "messages": ctx.messages})
    if ctx.turn == 1:
        found = ctx.call("lookup_order", {"id": 42})
        return RunArtifacts(final_text=f"I see {found.text}. Refund the blue one?")
    asked = [m["content"] for m in ctx.messages if m["role"] == "assistant" and m.get("content")]
    ctx.call("refund_order", {"id": 42})
    return RunArtifacts(final_text=f"refunded, as I said: {asked[-1]}")

def prompt_only(prompt):
    return RunArtifacts(final_text="hi")
'''


def test_a_python_agent_reads_the_conversation_so_far(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "conv_agent.py").write_text(AGENT)
    code, out, err = run(capsys, "shop.evl", "--agent", "conv_agent.py:agent", "--json", "rec.json")
    assert code == 0, out + err
    import sys

    seen = sys.modules["conv_agent"].SEEN
    assert [s["turn"] for s in seen] == [1, 2] and seen[0]["id"] == seen[1]["id"]
    assert seen[0]["messages"] == [{"role": "user", "content": "I want a refund for order 42"}]
    second = seen[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "assistant", "user"]
    assert second[1]["tool_calls"][0]["function"] == {"name": "lookup_order", "arguments": '{"id": 42}'}
    assert json.loads(second[2]["content"])["id"] == 42  # the world's answer, as JSON
    assert second[-1] == {"role": "user", "content": "Yes, the blue one"}


def test_a_conversation_for_an_agent_that_takes_one_prompt_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "conv_agent.py").write_text(AGENT)
    code, out, err = run(capsys, "shop.evl", "--agent", "conv_agent.py:prompt_only")
    assert code == 4, out + err
    assert "shop.evl:4: case 'refunds in two turns' is a conversation" in err
    assert "run(message, ctx)" in err


def test_rescore_judges_a_conversation_again_from_its_stored_turns_and_world_states(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run_shop(openai_server, capsys)
    assert code == 0, out + err
    sent = len(openai_server.requests)
    # the turn-1 state said "delivered"; a changed expectation is judged on the stored state
    (tmp_path / "shop.evl").write_text(SHOP.replace("expect world <orders: [<status: delivered>]>",
                                                    "expect world <orders: [<status: refunded>]>"))
    code = main(["rescore", "rec.json", "shop.evl", "-o", "new.json"])
    capsys.readouterr()
    assert code == 1 and len(openai_server.requests) == sent  # nothing was asked of the model again
    run0 = json.loads((tmp_path / "new.json").read_text())["cases"][0]["runs"][0]
    failed = [(e["turn"], e["label"]) for e in run0["expectations"] if not e["passed"]]
    assert failed == [(1, "world <orders: [<status: refunded>]>")]
    assert run0["conversation"]["turns"][1]["world_state"]["orders"][0]["status"] == "refunded"
    # a changed message makes the case stale: the stored answers answer another conversation
    (tmp_path / "shop.evl").write_text(SHOP.replace('user "Yes, the blue one"', 'user "No, thanks"'))
    code = main(["rescore", "rec.json", "shop.evl", "-o", "new2.json"])
    out, err = capsys.readouterr()
    assert "the conversation changed" in out + err


LINE_AGENT = r"""
import json, sys
for raw in sys.stdin:
    line = json.loads(raw)
    roles = [m["role"] for m in line["messages"]]
    if line["turn"] == 1:
        print(json.dumps({"type": "tool_call", "name": "lookup_order", "args": {"id": 42}, "result": "blue"}))
        print(json.dumps({"type": "reply", "content": "The blue shirt. Refund it?", "tokens": 5}))
    else:
        print(json.dumps({"type": "tool_call", "name": "refund_order", "args": {"id": 42}, "result": "ok"}))
        print(json.dumps({"type": "reply", "content": "refunded; I saw " + ",".join(roles), "tokens": 7}))
    sys.stdout.flush()
"""


def test_a_command_agent_holds_the_conversation_in_one_process_each_turn_its_own_calls(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import sys

    (tmp_path / "line_agent.py").write_text(LINE_AGENT)
    (tmp_path / "shop.evl").write_text(SHOP.replace("    expect world <orders: [<status: delivered>]>\n", "")
                                       .replace("    expect world <orders: [<id: 42, status: refunded>]>\n", "")
                                       .replace("  expect world <orders: [<id: 42>]>", "")
                                       .replace('world "shop_world.py:Shop"', 'tool lookup_order "Look up"\n'
                                                '  param id: integer\ntool refund_order "Refund"\n  param id: integer'))
    code, out, err = run(capsys, "shop.evl", "--agent-cmd", f"{sys.executable} line_agent.py", "--json", "rec.json")
    assert code == 0, out + err
    run0 = json.loads((tmp_path / "rec.json").read_text())["cases"][0]["runs"][0]
    turns = run0["conversation"]["turns"]
    assert [[c["name"] for c in t["artifacts"]["tool_calls"]] for t in turns] == [["lookup_order"], ["refund_order"]]
    assert [t["artifacts"]["tokens"] for t in turns] == [5, 7] and run0["artifacts"]["tokens"] == 12
    # the second user line carried the conversation so far, the first turn's call and result included
    assert turns[1]["artifacts"]["final_text"] == "refunded; I saw user,assistant,tool,assistant,user"


def test_a_conversation_for_a_one_shot_command_agent_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "shop.evl", "--agent-cmd", "echo {prompt}")
    assert code == 4, out + err
    assert "case 'refunds in two turns' is a conversation" in err and "drop {prompt}" in err


def test_the_shipped_shop_example_passes_offline_with_the_demo_agent_and_customer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shop = Path(__file__).resolve().parents[2] / "suites" / "examples" / "shop"
    code, out, err = run(capsys, str(shop), "--agent", "evaldsl.demo:agent", "--user-model", "demo:customer",
                         "--json", "rec.json", "--root", str(shop.parents[2]))
    assert code == 0, out + err
    assert "4 passed" in out and "cache:" not in out  # the demo customer calls no endpoint
    cases = {c["name"]: c for c in json.loads((tmp_path / "rec.json").read_text())["cases"]}
    simulated = cases["a simulated customer gets their refund"]["runs"][0]["conversation"]
    assert simulated["ended_by"] == "user" and all(t["simulated"] for t in simulated["turns"])
    assert simulated["turns"][-1]["world_state"] == {"orders": [{"id": 42, "status": "refunded", "color": "blue"}]}
    down = cases["reports a refund service that is down"]["runs"][0]["conversation"]["turns"]
    assert down[1]["artifacts"]["tool_calls"][0]["result"].startswith("refund service unavailable")


def test_a_record_of_version_2_still_loads_in_report_compare_and_rescore(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "one.evl").write_text('case "hi"\n  prompt "hi"\n  expect final text contains "hi"\n')
    (tmp_path / "conv_agent.py").write_text(AGENT)
    code, out, err = run(capsys, "one.evl", "--agent", "conv_agent.py:prompt_only", "--json", "new.json")
    assert code == 0, out + err
    data = json.loads((tmp_path / "new.json").read_text())
    data["schema_version"] = 2  # as version 2 wrote it: no conversation, no turn
    for case in data["cases"]:
        for one in case["runs"]:
            del one["conversation"]
            for e in one["expectations"]:
                del e["turn"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    assert main(["report", "old.json", "--format", "markdown", "-o", "old.md"]) == 0
    assert main(["compare", "old.json", "new.json"]) == 0
    assert main(["rescore", "old.json", "one.evl", "-o", "re.json"]) == 0
    capsys.readouterr()
    assert json.loads((tmp_path / "re.json").read_text())["cases"][0]["status"] == "passed"
