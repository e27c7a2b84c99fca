"""The MCP tool server: a Python command agent calls the case's declared tools with the `mcp` client."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mcp")

SUITE = '''
suite "Tools over MCP"

tool calculator "Does arithmetic"
  param op: string "add or sub"
  when <op: "add"> returns "5"
  otherwise returns "no such op"

case "adds"
  prompt "what is 2 + 3?"
  expect called calculator with <op: "add">
  expect final text contains "5"
'''

AGENT = '''
import asyncio, json, os, sys
from mcp import Client

async def main():
    for raw in sys.stdin:
        json.loads(raw)
        async with Client(os.environ["EVALDSL_TOOLS_URL"]) as client:
            listed = await client.list_tools()
            result = await client.call_tool("calculator", {"op": "add", "a": 2, "b": 3})
            missing = await client.call_tool("calculater", {})
        reply = {"tools": [t.name for t in listed.tools], "answer": result.content[0].text,
                 "missing": [missing.is_error, missing.content[0].text]}
        print(json.dumps({"type": "reply", "content": json.dumps(reply)}), flush=True)

asyncio.run(main())
'''


def _run_agent(tmp_path: Path, suite: str) -> subprocess.CompletedProcess[str]:
    """`evaldsl run SUITE --agent-cmd "python agent.py"` in ``tmp_path``, its record in out.json."""
    return subprocess.run(
        [sys.executable, "-m", "evaldsl", "run", suite, "--json", "out.json",
         "--agent-cmd", f"{shlex.quote(sys.executable)} agent.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"},
    )


def test_a_command_agent_calls_declared_tools_over_mcp(tmp_path: Path) -> None:
    (tmp_path / "tools.evl").write_text(textwrap.dedent(SUITE), encoding="utf-8")
    (tmp_path / "agent.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    proc = _run_agent(tmp_path, "tools.evl")
    record = json.loads((tmp_path / "out.json").read_text())
    run = record["cases"][0]["runs"][0]["artifacts"]
    assert run.get("error") is None, proc.stdout + proc.stderr
    said = json.loads(run["final_text"])
    assert said["tools"] == ["calculator"] and said["answer"] == "5"
    assert said["missing"][0] is True and "did you mean `calculator`" in said["missing"][1]
    # the agent reported no calls: the tool server's are the run's, each with its result
    assert [(c["name"], c["result"]) for c in run["tool_calls"]] == [
        ("calculator", "5"), ("calculater", said["missing"][1])]
    assert proc.returncode == 0, proc.stdout + proc.stderr


WORLD = '''
class Shop:
    def __init__(self, setup=None):
        self.orders = {o["id"]: o["status"] for o in (setup or {}).get("orders", [])}

    async def refund_order(self, id: int) -> str:
        """Refund an order."""
        self.orders[id] = "refunded"
        return f"order {id} refunded"

    def lookup_order(self, id: int) -> dict:
        """Look an order up."""
        return {"id": id, "status": self.orders[id]}

    def state(self):
        return {"orders": self.orders}
'''

WORLD_SUITE = '''
suite "A world over MCP"
world "shop.py:Shop"

case "two turns"
  setup <orders: [<id: 42, status: delivered>]>
  given lookup_order returns "busy" then "still busy"
  user "look it up"
    expect called lookup_order
  user "refund it"
    expect called refund_order with <id: 42>
    expect world <orders: <"42": refunded>>
'''

WORLD_AGENT = '''
import asyncio, json, os, sys
from mcp import Client

async def main():
    for raw in sys.stdin:
        turn = json.loads(raw)["turn"]
        async with Client(os.environ["EVALDSL_TOOLS_URL"]) as client:
            if turn == 1:
                first = await client.call_tool("lookup_order", {"id": 42})
                second = await client.call_tool("lookup_order", {"id": 42})
                said = [first.content[0].text, second.content[0].text]
            else:
                done = await client.call_tool("refund_order", {"id": 42})
                said = [done.content[0].text]
        print(json.dumps({"type": "reply", "content": json.dumps(said)}), flush=True)

asyncio.run(main())
'''


def test_the_tool_server_answers_from_the_runs_answerer_given_sequences_and_world_methods(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(textwrap.dedent(WORLD), encoding="utf-8")
    (tmp_path / "shop.evl").write_text(textwrap.dedent(WORLD_SUITE), encoding="utf-8")
    (tmp_path / "agent.py").write_text(textwrap.dedent(WORLD_AGENT), encoding="utf-8")
    proc = _run_agent(tmp_path, "shop.evl")
    run = json.loads((tmp_path / "out.json").read_text())["cases"][0]["runs"][0]
    turns = run["conversation"]["turns"]
    assert json.loads(turns[0]["artifacts"]["final_text"]) == ["busy", "still busy"]  # `given`, in sequence
    assert json.loads(turns[1]["artifacts"]["final_text"]) == ["order 42 refunded"]  # the async world method
    assert turns[1]["world_state"] == {"orders": {"42": "refunded"}}
    # each turn's calls are those the tool server saw during it
    assert [[c["name"] for c in t["artifacts"]["tool_calls"]] for t in turns] == [
        ["lookup_order", "lookup_order"], ["refund_order"]]
    assert proc.returncode == 0, proc.stdout + proc.stderr
