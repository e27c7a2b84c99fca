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

import json
from typing import Any

from ...artifacts import RunArtifacts, ToolCall
from .._lines import conversation_of


def is_pydantic_ai_agent(obj: Any) -> bool:
    """A pydantic-ai ``Agent``: a type from the ``pydantic_ai`` package with ``run`` and ``run_sync``."""
    modules = [getattr(t, "__module__", "") or "" for t in type(obj).__mro__]
    return any(m.split(".")[0] == "pydantic_ai" for m in modules) and callable(getattr(obj, "run_sync", None))


class PydanticAIAgent:
    """``run(message, ctx)`` over a pydantic-ai ``Agent.run``."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        name = getattr(agent, "name", None)
        self.name = name if isinstance(name, str) and name else type(agent).__name__

    async def run(self, message: str, ctx: Any = None) -> RunArtifacts:
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

        history, _ = conversation_of(message, ctx)
        earlier: list[Any] = []
        for m in history[:-1]:
            if isinstance(m, dict) and m.get("role") == "user":
                earlier.append(ModelRequest(parts=[UserPromptPart(content=m.get("content") or "")]))
            elif isinstance(m, dict) and m.get("role") == "assistant":
                earlier.append(ModelResponse(parts=[TextPart(content=m.get("content") or "")]))
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
    calls: list[ToolCall] = []
    by_id: dict[str, int] = {}
    transcript: list[Any] = []
    for msg in result.new_messages():
        for part in getattr(msg, "parts", ()):
            kind = getattr(part, "part_kind", "")
            if kind == "tool-call":
                args = part.args
                if isinstance(args, str):
                    try:
                        args = json.loads(args) if args.strip() else {}
                    except ValueError:
                        pass
                by_id[part.tool_call_id] = len(calls)
                calls.append(ToolCall(name=part.tool_name, args=args if args is not None else {}))
                transcript.append({"role": "assistant", "tool_call": {"name": part.tool_name, "args": args}})
            elif kind == "tool-return":
                content = part.content if isinstance(part.content, str) else json.dumps(part.content, default=str)
                index = by_id.get(part.tool_call_id)
                if index is not None:
                    calls[index] = calls[index].model_copy(update={"result": content})
                transcript.append({"role": "tool", "content": content})
            elif kind in ("user-prompt", "text", "system-prompt"):
                role = {"user-prompt": "user", "text": "assistant", "system-prompt": "system"}[kind]
                transcript.append({"role": role, "content": part.content})
    output = getattr(result, "output", None)
    text = output if isinstance(output, str) or output is None else json.dumps(_plain(output), default=str)
    usage = result.usage()
    counts = {name: _count(usage, name) for name in ("input_tokens", "output_tokens", "total_tokens")}
    return RunArtifacts(tool_calls=calls, final_text=text, tokens=counts["total_tokens"],
                        input_tokens=counts["input_tokens"], output_tokens=counts["output_tokens"],
                        transcript=transcript)


def _count(usage: Any, name: str) -> int | None:
    value = getattr(usage, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else value
