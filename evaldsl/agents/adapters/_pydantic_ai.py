"""A pydantic-ai ``Agent`` as an agent.

Recognised by its type's module, so pydantic-ai is imported only when one of
its objects is met. Each user message runs ``agent.run`` with the earlier
turns as its message history; the run's new messages give the tool calls
(``ToolCallPart``, paired with its ``ToolReturnPart`` by call id), the final
text (``output``) and the token usage. Function tools named like the case's
declared tools are replaced for that run (``Agent.override(tools=...)``) by
tools the case answers, through the case context, as the model loop would.
"""

from __future__ import annotations

from typing import Any

from ...artifacts import RunArtifacts
from .._lines import conversation_of, text_history
from ._convert import Calls, as_json_text, count, framework_name


def is_pydantic_ai_agent(obj: Any) -> bool:
    """A pydantic-ai ``Agent``: a type from the ``pydantic_ai`` package with ``run`` and ``run_sync``."""
    modules = [getattr(t, "__module__", "") or "" for t in type(obj).__mro__]
    return any(m.split(".")[0] == "pydantic_ai" for m in modules) and callable(getattr(obj, "run_sync", None))


class PydanticAIAgent:
    """``run(message, ctx)`` over a pydantic-ai ``Agent.run``."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = framework_name(agent)

    async def run(self, message: str, ctx: Any = None) -> RunArtifacts:
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

        history, _ = conversation_of(message, ctx)
        earlier: list[Any] = []
        for role, content in text_history(history)[:-1]:
            if role == "user":
                earlier.append(ModelRequest(parts=[UserPromptPart(content=content)]))
            else:
                earlier.append(ModelResponse(parts=[TextPart(content=content)]))
        tools = _with_case_tools(self.agent, ctx)
        if tools is None:
            result = await self.agent.run(message, message_history=earlier or None)
        else:
            with self.agent.override(tools=tools):
                result = await self.agent.run(message, message_history=earlier or None)
        return from_pydantic_ai_result(result)


def _with_case_tools(agent: Any, ctx: Any) -> list[Any] | None:
    """The agent's function tools, those named like a declared tool of the case answered by the case;
    None when no tool is replaced (or the agent keeps its tools where this cannot see them)."""
    declared = {t.name: t for t in getattr(ctx, "tools", ()) or ()}
    own = getattr(getattr(agent, "_function_toolset", None), "tools", None)
    if not declared or not isinstance(own, dict) or not declared.keys() & own.keys() or not hasattr(ctx, "acall"):
        return None
    from pydantic_ai import Tool

    def stand_in(name: str) -> Any:
        async def answer(**kwargs: Any) -> str:
            return str((await ctx.acall(name, kwargs, record=False)).text)

        spec = declared[name]
        return Tool.from_schema(answer, name=name, description=spec.description, json_schema=spec.parameters)

    return [stand_in(name) if name in declared else tool for name, tool in own.items()]


def from_pydantic_ai_result(result: Any) -> RunArtifacts:
    """A pydantic-ai run result -> `RunArtifacts` (calls with their results, final text, tokens)."""
    calls, transcript = Calls(), []
    roles = {"user-prompt": "user", "text": "assistant", "system-prompt": "system"}
    for msg in result.new_messages():
        for part in getattr(msg, "parts", ()):
            kind = getattr(part, "part_kind", "")
            if kind == "tool-call":
                calls.call(part.tool_call_id, part.tool_name, part.args)
                transcript.append({"role": "assistant", "tool_call": {"name": part.tool_name, "args": part.args}})
            elif kind == "tool-return":
                content = as_json_text(part.content)
                calls.result(part.tool_call_id, content)
                transcript.append({"role": "tool", "content": content})
            elif kind in roles:
                transcript.append({"role": roles[kind], "content": part.content})
    usage = result.usage()
    return RunArtifacts(tool_calls=calls.calls, final_text=as_json_text(getattr(result, "output", None)),
                        tokens=count(usage, "total_tokens"), input_tokens=count(usage, "input_tokens"),
                        output_tokens=count(usage, "output_tokens"), transcript=transcript)
