"""Converters from the message lists agents keep to `RunArtifacts`, for agents with their own loop.

Each reads a finished conversation in one wire format: the assistant's tool
calls (arguments parsed from JSON when they are JSON, else kept as the raw
string), each paired with its result by the call's id, the last assistant
text as the final text, and the messages themselves as the transcript.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ...artifacts import RunArtifacts, ToolCall


class Calls:
    """Tool calls in order, with results attached by call id."""

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []
        self._by_id: dict[str, int] = {}

    def call(self, call_id: Any, name: Any, args: Any) -> None:
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                pass
        if isinstance(call_id, str):
            self._by_id[call_id] = len(self.calls)
        self.calls.append(ToolCall(name=str(name), args={} if args is None else args))

    def result(self, call_id: Any, content: Any) -> None:
        index = self._by_id.get(call_id) if isinstance(call_id, str) else None
        if index is not None:
            self.calls[index] = self.calls[index].model_copy(update={"result": content})


def framework_name(obj: Any) -> str:
    """What a framework object is called in the record: its ``name``, else its type's name."""
    name = getattr(obj, "name", None)
    return name if isinstance(name, str) and name else type(obj).__name__


def count(usage: Any, name: str) -> int | None:
    """A token count a framework's usage object reports: a whole number from 0, else None."""
    value = getattr(usage, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def as_json_text(value: Any) -> str | None:
    """A final output or tool result as text: a string as it is, a structured one as JSON."""
    return value if isinstance(value, str) or value is None else json.dumps(_plain(value), default=str)


def _dicts(items: Iterable[Any]) -> list[dict[str, Any]]:
    return [_plain(item) for item in items if isinstance(_plain(item), dict)]


def _plain(item: Any) -> Any:
    """A message as a dict (pydantic models of the SDKs included)."""
    dump = getattr(item, "model_dump", None)
    return dump(exclude_none=True) if callable(dump) else item


def from_openai_chat(messages: Iterable[Any], *, tokens: int | None = None) -> RunArtifacts:
    """OpenAI chat-completions messages (``role`` ``assistant`` with ``tool_calls``, ``tool``)."""
    found, final = Calls(), None
    msgs = _dicts(messages)
    for msg in msgs:
        if msg.get("role") == "assistant":
            for call in msg.get("tool_calls") or []:
                fn = call.get("function") or {}
                found.call(call.get("id"), fn.get("name"), fn.get("arguments"))
            if isinstance(msg.get("content"), str):
                final = msg["content"]
        elif msg.get("role") == "tool":
            found.result(msg.get("tool_call_id"), msg.get("content"))
    return RunArtifacts(tool_calls=found.calls, final_text=final, tokens=tokens, transcript=msgs)


def from_anthropic_messages(messages: Iterable[Any], *, tokens: int | None = None) -> RunArtifacts:
    """Anthropic messages (``tool_use`` blocks from the assistant, ``tool_result`` blocks from the user)."""
    found, final = Calls(), None
    msgs = _dicts(messages)
    for msg in msgs:
        content = msg.get("content")
        blocks = content if isinstance(content, list) else []
        if msg.get("role") == "assistant":
            texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
            if isinstance(content, str):
                texts = [content]
            if texts:
                final = "".join(texts)
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                found.call(block.get("id"), block.get("name"), block.get("input"))
            elif block.get("type") == "tool_result":
                found.result(block.get("tool_use_id"), block.get("content"))
    return RunArtifacts(tool_calls=found.calls, final_text=final, tokens=tokens, transcript=msgs)


def from_openai_responses(items: Iterable[Any], *, tokens: int | None = None) -> RunArtifacts:
    """OpenAI Responses items (``function_call``, ``function_call_output``, assistant ``message``)."""
    found, final = Calls(), None
    entries = _dicts(items)
    for item in entries:
        kind = item.get("type")
        if kind == "function_call":
            found.call(item.get("call_id"), item.get("name"), item.get("arguments"))
        elif kind == "function_call_output":
            found.result(item.get("call_id"), item.get("output"))
        elif kind == "message" and item.get("role") == "assistant":
            parts = item.get("content")
            if isinstance(parts, str):
                final = parts
            elif isinstance(parts, list):
                final = "".join(p.get("text", "") for p in parts
                                if isinstance(p, dict) and p.get("type") in ("output_text", "text"))
    return RunArtifacts(tool_calls=found.calls, final_text=final, tokens=tokens, transcript=entries)
