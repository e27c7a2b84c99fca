"""An OpenAI Agents SDK ``Agent`` (package ``openai-agents``, module ``agents``) as an agent.

Recognised by its type's module, so the SDK is imported only when one of its
objects is met. Each user message runs ``Runner.run`` with the conversation
so far as input items (tracing off: nothing leaves the machine that the
agent's own model client does not send). The run's new items give the tool
calls (``ToolCallItem``, paired with its ``ToolCallOutputItem`` by call id),
the final text (``final_output``) and the token usage (the run's usage).
Function tools named like the case's declared tools are replaced, for this
run, by tools that the case answers (its canned answers, through the case
context), as the model loop would answer them.
"""

from __future__ import annotations

from typing import Any

from ...artifacts import RunArtifacts
from .._lines import conversation_of, text_history
from ._convert import Calls, as_json_text, count, framework_name


def is_openai_agent(obj: Any) -> bool:
    """An Agents SDK ``Agent``: a type from the ``agents`` package with ``instructions`` and ``tools``."""
    module = getattr(type(obj), "__module__", "") or ""
    return module.split(".")[0] == "agents" and hasattr(obj, "tools") and hasattr(obj, "instructions")


class OpenAIAgentsAgent:
    """``run(message, ctx)`` over ``agents.Runner.run``."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = framework_name(agent)

    async def run(self, message: str, ctx: Any = None) -> RunArtifacts:
        from agents import RunConfig, Runner

        history, _ = conversation_of(message, ctx)
        items = [{"role": role, "content": content} for role, content in text_history(history)]
        result = await Runner.run(_with_case_tools(self.agent, ctx), items,
                                  max_turns=getattr(ctx, "max_turns", None) or 10,
                                  run_config=RunConfig(tracing_disabled=True))
        return from_agents_result(result)


def _with_case_tools(agent: Any, ctx: Any) -> Any:
    """The agent with each function tool named like a declared tool of the case answered by the case."""
    declared = {t.name for t in getattr(ctx, "tools", ()) or ()}
    if not declared or not hasattr(ctx, "acall"):
        return agent
    from agents import FunctionTool

    def stand_in(tool: Any) -> Any:
        async def invoke(tool_ctx: Any, arguments: str) -> str:
            answer = await ctx.acall(tool.name, arguments, record=False)
            return str(answer.text)

        return FunctionTool(name=tool.name, description=tool.description, params_json_schema=tool.params_json_schema,
                            on_invoke_tool=invoke, strict_json_schema=tool.strict_json_schema)

    tools = [stand_in(t) if isinstance(t, FunctionTool) and t.name in declared else t for t in agent.tools]
    return agent.clone(tools=tools)


def from_agents_result(result: Any) -> RunArtifacts:
    """An Agents SDK ``RunResult`` -> `RunArtifacts` (calls with their results, final text, tokens)."""
    calls, transcript = Calls(), []
    for item in getattr(result, "new_items", None) or []:
        kind = type(item).__name__
        raw = getattr(item, "raw_item", None)
        if kind == "ToolCallItem":
            name, arguments = _get(raw, "name"), _get(raw, "arguments")
            calls.call(_get(raw, "call_id") or _get(raw, "id"), name or "", arguments)
            transcript.append({"role": "assistant", "tool_call": {"name": name, "arguments": arguments}})
        elif kind == "ToolCallOutputItem":
            shown = as_json_text(getattr(item, "output", None))
            calls.result(_get(raw, "call_id"), shown)
            transcript.append({"role": "tool", "content": shown})
        elif kind == "MessageOutputItem":
            from agents import ItemHelpers

            transcript.append({"role": "assistant", "content": ItemHelpers.text_message_output(item)})
    usage = getattr(getattr(result, "context_wrapper", None), "usage", None)
    return RunArtifacts(tool_calls=calls.calls, final_text=as_json_text(getattr(result, "final_output", None)),
                        tokens=count(usage, "total_tokens"), input_tokens=count(usage, "input_tokens"),
                        output_tokens=count(usage, "output_tokens"), transcript=transcript)


def _get(raw: Any, key: str) -> Any:
    return raw.get(key) if isinstance(raw, dict) else getattr(raw, key, None)
