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


def test_a_command_agent_calls_declared_tools_over_mcp(tmp_path: Path) -> None:
    (tmp_path / "tools.evl").write_text(textwrap.dedent(SUITE), encoding="utf-8")
    (tmp_path / "agent.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "evaldsl", "run", "tools.evl", "--json", "out.json",
         "--agent-cmd", f"{shlex.quote(sys.executable)} agent.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"},
    )
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
