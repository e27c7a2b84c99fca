"""Framework agents given to `--agent` with no glue: a compiled LangGraph graph whose model node
asks the scripted OpenAI-compatible server on 127.0.0.1 (marked frameworks: .ci/run's own step)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from servers._script import tool_then_text

pytestmark = pytest.mark.frameworks

GRAPH = '''
import json, os, urllib.request
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode


@tool
def calculator(op: str, a: float, b: float) -> str:
    """Does arithmetic."""
    return str(int(a + b)) if op == "add" else "?"


def model(state):
    """A chat model on the wire: POST the conversation, read one completion (plain urllib)."""
    wire = [{"role": {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}[m.type],
             "content": m.content, **({"tool_call_id": m.tool_call_id} if m.type == "tool" else {})}
            for m in state["messages"]]
    request = urllib.request.Request(os.environ["MODEL_URL"] + "/chat/completions",
                                     json.dumps({"model": "m", "messages": wire}).encode(),
                                     {"content-type": "application/json"})
    body = json.load(urllib.request.urlopen(request))
    msg = body["choices"][0]["message"]
    calls = [{"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"]), "id": c["id"]}
             for c in msg.get("tool_calls") or []]
    usage = body["usage"]
    return {"messages": [AIMessage(msg["content"] or "", tool_calls=calls, usage_metadata={
        "input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
        "total_tokens": usage["total_tokens"]})]}


builder = StateGraph(MessagesState)
builder.add_node("model", model)
builder.add_node("tools", ToolNode([calculator]))
builder.add_edge(START, "model")
builder.add_conditional_edges("model", lambda s: "tools" if s["messages"][-1].tool_calls else END)
builder.add_edge("tools", "model")
graph = builder.compile()
'''

SUITE = '''
suite "Graph"

case "adds"
  prompt "what is 2 + 3?"
  expect called calculator with <op: "add", a: 2, b: 3>
  expect final text contains "5"
'''


def test_a_compiled_langgraph_graph_is_an_agent_with_no_glue(tmp_path: Path, openai_server: Any) -> None:
    pytest.importorskip("langgraph")
    openai_server.reply = tool_then_text("calculator", {"op": "add", "a": 2, "b": 3}, "2 + 3 = 5")
    (tmp_path / "graph_agent.py").write_text(textwrap.dedent(GRAPH), encoding="utf-8")
    (tmp_path / "g.evl").write_text(textwrap.dedent(SUITE), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "evaldsl", "run", "g.evl", "--agent", "graph_agent:graph", "--json", "out.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "NO_COLOR": "1", "MODEL_URL": openai_server.base_url},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = json.loads((tmp_path / "out.json").read_text())["cases"][0]["runs"][0]["artifacts"]
    assert [(c["name"], c["args"], c["result"]) for c in run["tool_calls"]] == [
        ("calculator", {"op": "add", "a": 2, "b": 3}, "5")]
    assert run["final_text"] == "2 + 3 = 5" and run["tokens"] == 30


OPENAI_AGENT = '''
import os
from openai import AsyncOpenAI
from agents import Agent, OpenAIChatCompletionsModel, function_tool


@function_tool
def calculator(op: str, a: float, b: float) -> str:
    """Does arithmetic."""
    return "the agent's own tool (the case's should answer)"


client = AsyncOpenAI(base_url=os.environ["MODEL_URL"], api_key="dummy-key-for-a-local-server")
agent = Agent(name="calc", instructions="Use the calculator.", tools=[calculator],
              model=OpenAIChatCompletionsModel(model="m", openai_client=client))
'''

PYDANTIC_AI_AGENT = '''
import os
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

model = OpenAIChatModel("m", provider=OpenAIProvider(base_url=os.environ["MODEL_URL"], api_key="dummy-key"))
agent = Agent(model, instructions="Use the calculator.")


@agent.tool_plain
def calculator(op: str, a: float, b: float) -> str:
    """Does arithmetic."""
    return "the agent's own tool (the case's should answer)"
'''

DECLARED = SUITE.replace('suite "Graph"\n', '''suite "Graph"

tool calculator "Does arithmetic"
  param op: string
  param a: number
  param b: number
  otherwise returns "5"
''')


def _run_framework(tmp_path: Path, openai_server: Any, source: str, spec: str, suite: str) -> dict[str, Any]:
    openai_server.reply = tool_then_text("calculator", {"op": "add", "a": 2, "b": 3}, "2 + 3 = 5")
    (tmp_path / "framework_agent.py").write_text(textwrap.dedent(source), encoding="utf-8")
    (tmp_path / "g.evl").write_text(textwrap.dedent(suite), encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1", "MODEL_URL": openai_server.base_url, "OPENAI_AGENTS_DISABLE_TRACING": "1",
           "OPENAI_API_KEY": "dummy-key"}
    proc = subprocess.run([sys.executable, "-m", "evaldsl", "run", "g.evl", "--agent", spec, "--json", "out.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert all(r.path.startswith("/v1/chat/completions") or r.path.endswith("/chat/completions")
               for r in openai_server.requests)  # every model call went to the local server
    return json.loads((tmp_path / "out.json").read_text())["cases"][0]["runs"][0]["artifacts"]


def test_an_openai_agents_sdk_agent_is_an_agent_and_the_case_answers_its_tools(
    tmp_path: Path, openai_server: Any
) -> None:
    pytest.importorskip("agents")
    run = _run_framework(tmp_path, openai_server, OPENAI_AGENT, "framework_agent:agent", DECLARED)
    assert [(c["name"], c["args"], c["result"]) for c in run["tool_calls"]] == [
        ("calculator", {"op": "add", "a": 2, "b": 3}, "5")]  # the case's canned answer, not the agent's own
    assert run["final_text"] == "2 + 3 = 5" and run["tokens"] == 30
    assert (run["input_tokens"], run["output_tokens"]) == (20, 10)


def test_a_pydantic_ai_agent_is_an_agent_and_the_case_answers_its_tools(tmp_path: Path, openai_server: Any) -> None:
    pytest.importorskip("pydantic_ai")
    run = _run_framework(tmp_path, openai_server, PYDANTIC_AI_AGENT, "framework_agent:agent", DECLARED)
    assert [(c["name"], c["args"], c["result"]) for c in run["tool_calls"]] == [
        ("calculator", {"op": "add", "a": 2, "b": 3}, "5")]  # the case's canned answer, not the agent's own
    assert run["final_text"] == "2 + 3 = 5" and run["tokens"] == 30


TWO_TURNS = DECLARED.replace('''case "adds"
  prompt "what is 2 + 3?"
  expect called calculator with <op: "add", a: 2, b: 3>
  expect final text contains "5"''', '''case "adds, then remembers"
  user "what is 2 + 3?"
    expect called calculator with <op: "add", a: 2, b: 3>
    expect final text contains "5"
  user "and what did I ask?"
    expect no tool calls
    expect final text contains "you asked what is 2 + 3"''')


@pytest.mark.parametrize(("module", "source"), [("langgraph", GRAPH), ("agents", OPENAI_AGENT),
                                                ("pydantic_ai", PYDANTIC_AI_AGENT)])
def test_a_framework_agent_holds_a_conversation_turn_by_turn(
    tmp_path: Path, openai_server: Any, module: str, source: str
) -> None:
    pytest.importorskip(module)
    first = tool_then_text("calculator", {"op": "add", "a": 2, "b": 3}, "2 + 3 = 5")

    def script(request: dict[str, Any], index: int) -> Any:
        texts = [m.get("content") for m in request["messages"] if m.get("role") == "user"]
        if texts and texts[-1] == "and what did I ask?":  # the second turn: the first is in the history
            from servers._script import text

            return text("you asked what is 2 + 3" if "what is 2 + 3?" in texts[:-1] else "I do not know")
        return first(request, index)

    (tmp_path / "framework_agent.py").write_text(textwrap.dedent(source), encoding="utf-8")
    (tmp_path / "g.evl").write_text(textwrap.dedent(TWO_TURNS if module != "langgraph" else TWO_TURNS.split(
        "tool calculator")[0] + TWO_TURNS[TWO_TURNS.index('case "adds'):]), encoding="utf-8")
    openai_server.reply = script
    env = {**os.environ, "NO_COLOR": "1", "MODEL_URL": openai_server.base_url, "OPENAI_AGENTS_DISABLE_TRACING": "1",
           "OPENAI_API_KEY": "dummy-key"}
    spec = "framework_agent:graph" if module == "langgraph" else "framework_agent:agent"
    proc = subprocess.run([sys.executable, "-m", "evaldsl", "run", "g.evl", "--agent", spec, "--json", "out.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    turns = json.loads((tmp_path / "out.json").read_text())["cases"][0]["runs"][0]["conversation"]["turns"]
    assert [[c["name"] for c in t["artifacts"]["tool_calls"]] for t in turns] == [["calculator"], []]
