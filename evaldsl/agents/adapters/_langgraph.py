"""A compiled LangGraph graph (or a LangChain runnable whose state holds ``messages``) as an agent.

Recognised by its type's module, so LangChain is imported only when one of
its objects is met. Each user message runs the graph once with the
conversation so far (the case's ``system`` first, when it has one); the new
messages of the resulting state give the tool calls (paired with their
``ToolMessage`` results by id), the final text and the summed token usage.
The graph's own tools stay in place: a compiled graph offers no seam to
swap them for the case's declared tools.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...artifacts import RunArtifacts
from .._lines import conversation_of, text_history
from ._convert import Calls, framework_name


def is_langchain_runnable(obj: Any) -> bool:
    """A LangGraph graph or LangChain runnable: a type from those packages with ``ainvoke``."""
    modules = [getattr(t, "__module__", "") or "" for t in type(obj).__mro__]
    ours = any(m.split(".")[0] in ("langgraph", "langchain_core", "langchain") for m in modules)
    return ours and callable(getattr(obj, "ainvoke", None))


def from_langchain_messages(messages: Iterable[Any]) -> RunArtifacts:
    """LangChain messages (``AIMessage`` with ``tool_calls``, ``ToolMessage``) -> `RunArtifacts`."""
    calls = Calls()
    final, tokens, transcript = None, None, []
    for msg in messages:
        kind = getattr(msg, "type", None)
        transcript.append({"role": kind, "content": getattr(msg, "content", None)})
        if kind == "ai":
            for call in getattr(msg, "tool_calls", None) or []:
                calls.call(call.get("id"), call.get("name", ""), call.get("args") or {})
            text = _text(getattr(msg, "content", None))
            if text:
                final = text
            usage = getattr(msg, "usage_metadata", None) or {}
            if isinstance(usage.get("total_tokens"), int):
                tokens = (tokens or 0) + usage["total_tokens"]
        elif kind == "tool":
            calls.result(getattr(msg, "tool_call_id", None), _text(msg.content))
    return RunArtifacts(tool_calls=calls.calls, final_text=final, tokens=tokens, transcript=transcript)


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return None


class LangGraphAgent:
    """``run(message, ctx)`` over a compiled graph's ``ainvoke({"messages": [...]})``."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.name = framework_name(graph)

    async def run(self, message: str, ctx: Any = None) -> RunArtifacts:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        history, _ = conversation_of(message, ctx)
        sent: list[Any] = [SystemMessage(ctx.system)] if getattr(ctx, "system", None) else []
        for role, content in text_history(history):
            sent.append(HumanMessage(content) if role == "user" else AIMessage(content))
        state = await self.graph.ainvoke({"messages": sent})
        out = state.get("messages") if isinstance(state, dict) else getattr(state, "messages", None)
        if not isinstance(out, list):
            return RunArtifacts(error=f"{self.name}: the graph's result holds no messages list")
        return from_langchain_messages(out[len(sent):])
