"""The case context for Python agents and harnesses: what they see, what ctx.call answers and records."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import evaldsl
from evaldsl import CaseContext, RunArtifacts, ToolCall, run_eval, run_suite
from evaldsl.run._context import unseen_settings
from evaldsl.run._protocols import agent_subject, harness_subject, receives_context

SUITE = '''
suite "French"
system "Always answer in French."
tags lang
tool weather "The weather in a city"
  param city: string
  param days?: integer
  when <city: "Paris"> returns "sunny"
  when <city: "Oslo"> fails "service down"

case "weather"
  tags fr
  mode single-turn
  max turns 4
  prompt "weather in Paris?"
  expect called weather with <city: "Paris">
'''
SUITE_C = evaldsl.compile(SUITE)
CTX = CaseContext.for_case(SUITE_C.cases[0], repeat_index=2)


def test_the_context_carries_the_case_settings() -> None:
    assert (CTX.name, CTX.suite, CTX.system, CTX.mode, CTX.max_turns, CTX.repeat_index) == (
        "weather", "French", "Always answer in French.", "single-turn", 4, 2)
    assert set(CTX.tags) == {"lang", "fr"}


def test_tools_in_openai_and_anthropic_shapes() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
              "required": ["city"]}
    assert CTX.tools_openai() == [{"type": "function", "function": {
        "name": "weather", "description": "The weather in a city", "parameters": schema}}]
    assert CTX.tools_anthropic() == [{"name": "weather", "description": "The weather in a city",
                                      "input_schema": schema}]


@pytest.mark.parametrize(("name", "args", "ok", "text"), [
    ("weather", {"city": "Paris"}, True, "sunny"),
    ("weather", '{"city": "Paris"}', True, "sunny"),
    ("weather", {"city": "Oslo"}, False, "service down"),
    ("weather", {}, False, "Error: weather: missing required parameter `city`"),
    ("weather", {"city": "Paris", "days": "two"}, False, "Error: weather: parameter `days` must be an integer"),
    ("weather", "city=Paris", False, "Error: weather: arguments are not valid JSON: city=Paris"),
    ("wether", {"city": "Paris"}, False,
     "Error: no tool named `wether` (did you mean `weather`?); declared tools: weather"),
])
def test_call_answers_as_the_mock_tools_do(name: str, args: Any, ok: bool, text: str) -> None:
    ctx = CaseContext.for_case(SUITE_C.cases[0])
    answer = ctx.call(name, args)
    assert (answer.ok, answer.text) == (ok, text)
    assert ctx.calls == [ToolCall(name=name, args=args, result=text)]


def test_acall_and_record_false() -> None:
    ctx = CaseContext.for_case(SUITE_C.cases[0])
    assert asyncio.run(ctx.acall("weather", {"city": "Paris"})).text == "sunny"
    ctx.call("weather", {"city": "Paris"}, record=False)
    assert len(ctx.calls) == 1


def sync_agent(prompt: str, ctx: CaseContext) -> RunArtifacts:
    answer = ctx.call("weather", {"city": "Paris"})
    return RunArtifacts(final_text=f"[{ctx.system}] {answer.text}")


async def async_agent(prompt: str, ctx: CaseContext) -> dict[str, Any]:
    answer = await ctx.acall("weather", {"city": "Paris"})
    return {"final_text": f"[{ctx.system}] {answer.text}"}


class MethodAgent:
    def run(self, prompt: str, ctx: CaseContext | None = None) -> RunArtifacts:
        assert ctx is not None
        return sync_agent(prompt, ctx)


@pytest.mark.parametrize("agent", [sync_agent, async_agent, MethodAgent, MethodAgent()])
def test_an_agent_taking_ctx_gets_it_and_its_calls_become_the_runs(agent: Any) -> None:
    case = run_suite(agent, SUITE_C).cases[0]
    art = case.runs[0].artifacts
    assert case.status == "passed", case.runs[0]
    assert art is not None and art.final_text == "[Always answer in French.] sunny"
    assert art.tool_calls == [ToolCall(name="weather", args={"city": "Paris"}, result="sunny")]


def test_calls_the_agent_reports_itself_win_over_the_recorded_ones() -> None:
    def agent(prompt: str, ctx: CaseContext) -> RunArtifacts:
        ctx.call("weather", {"city": "Oslo"})
        return RunArtifacts(tool_calls=[ToolCall(name="weather", args={"city": "Paris"})])

    art = run_suite(agent, SUITE_C).cases[0].runs[0].artifacts
    assert art is not None and art.tool_calls == [ToolCall(name="weather", args={"city": "Paris"})]


def test_a_one_argument_agent_keeps_working_and_gets_no_context() -> None:
    seen: list[tuple[Any, ...]] = []

    def agent(*args: Any) -> RunArtifacts:  # binds two: gets the context too
        seen.append(args)
        return RunArtifacts(tool_calls=[ToolCall(name="weather", args={"city": "Paris"})])

    def plain(prompt: str) -> RunArtifacts:
        seen.append((prompt,))
        return RunArtifacts(tool_calls=[ToolCall(name="weather", args={"city": "Paris"})])

    assert run_suite(plain, SUITE_C).ok and seen == [("weather in Paris?",)]
    assert run_suite(agent, SUITE_C).ok and isinstance(seen[-1][1], CaseContext)
    assert agent_subject(plain).context is False and agent_subject(sync_agent).context is True


class World:
    def setup(self, value: Any) -> list[str]:
        return []

    def run(self, prompt: str, world: list[str], ctx: CaseContext) -> RunArtifacts:
        world.append(ctx.call("weather", {"city": "Paris"}).text)
        return RunArtifacts(final_text=world[0])


class AsyncWorld(World):
    async def run(self, prompt: str, world: list[str], ctx: CaseContext) -> RunArtifacts:  # type: ignore[override]
        return super().run(prompt, world, ctx)


@pytest.mark.parametrize("harness", [World, AsyncWorld])
def test_a_harness_gets_the_context_after_the_world(harness: Any) -> None:
    assert harness_subject(harness).context
    case = run_eval(harness, SUITE_C).cases[0]
    assert case.status == "passed"
    art = case.runs[0].artifacts
    assert art is not None and art.final_text == "sunny" and art.tool_calls[0].result == "sunny"


def test_context_is_detected_without_making_an_instance() -> None:
    class Boom:
        def __init__(self) -> None:
            raise AssertionError("made")

        def run(self, prompt: str, ctx: Any) -> None: ...

    assert receives_context(Boom) and not receives_context(lambda p: None)
    assert receives_context(World, harness=True) and not receives_context(World)


def test_a_suite_with_system_or_mock_answers_warns_for_a_blind_agent() -> None:
    (line,) = unseen_settings([SUITE_C], "agent 'mine'")
    assert "suite 'French' sets `system` (case 'weather') and mock tool answers (weather)" in line
    assert "agent 'mine' takes no case context" in line and "ctx" in line
    quiet = evaldsl.compile('suite "q"\ntool t\n  param x: string\ncase "c"\n  prompt "p"\n  expect called t\n')
    assert unseen_settings([quiet], "agent 'mine'") == []
