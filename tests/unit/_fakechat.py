"""A scripted `ChatBackend` for the loop and judge tests: replies in order, requests kept."""

from __future__ import annotations

import copy
from typing import Any

from evaldsl import ToolCall
from evaldsl.models._chat import BackendError, ChatReply, Sampling


def reply(text: str | None = None, *calls: tuple[str, Any], tokens: tuple[int, int] | None = (3, 2)) -> ChatReply:
    """A reply with text and/or tool calls ``(name, args)``; ids are ``id0``, ``id1``, ..."""
    return ChatReply(
        text=text,
        tool_calls=[ToolCall(name=n, args=a) for n, a in calls],
        call_ids=[f"id{i}" for i in range(len(calls))],
        input_tokens=tokens[0] if tokens else None,
        output_tokens=tokens[1] if tokens else None,
    )


class FakeChat:
    """Answers each request with the next scripted reply (or raises it, if an exception)."""

    label = "fake:model"

    def __init__(self, *script: ChatReply | BaseException) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []

    async def chat(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
                   response_schema: dict[str, Any] | None = None, sampling: Sampling = Sampling(),
                   repeat_index: int = 0, timeout_s: float | None = None,
                   accept: Any = None) -> ChatReply:
        self.requests.append({
            "messages": copy.deepcopy(messages), "tools": tools, "response_schema": response_schema,
            "sampling": sampling, "repeat_index": repeat_index, "timeout_s": timeout_s,
        })
        if not self.script:
            raise BackendError("the script ran out", status=500)
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item
