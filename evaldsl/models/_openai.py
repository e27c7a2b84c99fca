"""OpenAI-compatible chat completions: OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio, LiteLLM.

``POST {base}/chat/completions`` with the contract's messages and tools as
they are (the contract is this API's shape). Base URL: the argument, else
``OPENAI_BASE_URL``, else https://api.openai.com/v1. Key: ``OPENAI_API_KEY``,
sent as ``Authorization: Bearer``; without one no Authorization header is
sent (local servers need none).

Structured output (the judge) is ``response_format: {"type": "json_schema"}``,
not strict, so any JSON Schema is accepted. Tool-call arguments arrive as a
string: decoded when they are a JSON object, kept as the raw string
otherwise (the loop answers such a call with an error); an empty string
means no arguments (``{}``), as some local servers send for tools without
parameters.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..artifacts import ToolCall
from ._chat import ChatReply, Sampling, usage_count
from ._http import BASE_HEADERS, HttpBackend

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def decode_arguments(arguments: Any) -> Any:
    """A tool call's arguments: the JSON object they encode, else the raw string as sent."""
    if isinstance(arguments, dict):
        return arguments
    if not isinstance(arguments, str):
        return json.dumps(arguments)
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    return value if isinstance(value, dict) else arguments


def _content_text(content: Any) -> str | None:
    """The message content as text: a string, or the text parts of a list of parts joined."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "".join(parts) if parts else None
    raise TypeError(f"message content is a {type(content).__name__}")


class OpenAIBackend(HttpBackend):
    """An OpenAI-compatible chat-completions endpoint."""

    provider = "openai"
    path = "/chat/completions"

    def __init__(self, model: str, *, base_url: str | None = None, **options: Any) -> None:
        base = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        super().__init__(model, base_url=base, api_key=os.environ.get("OPENAI_API_KEY"), **options)

    def headers(self) -> dict[str, str]:
        headers = dict(BASE_HEADERS)
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        return headers

    def build(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        response_schema: dict[str, Any] | None,
        sampling: Sampling,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        for name in ("temperature", "max_tokens", "seed"):
            value = getattr(sampling, name)
            if value is not None:
                body[name] = value
        if response_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": response_schema},
            }
        return body

    def parse(self, body: dict[str, Any], response_schema: dict[str, Any] | None) -> ChatReply:
        message = body["choices"][0]["message"]
        text = _content_text(message.get("content"))
        calls, ids, wire_calls = [], [], []
        for n, item in enumerate(message.get("tool_calls") or []):
            function = item["function"]
            name, arguments = function["name"], function.get("arguments", "")
            call_id = item.get("id") or f"call_{n}"
            calls.append(ToolCall(name=name, args=decode_arguments(arguments)))
            ids.append(call_id)
            raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
            wire_calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}})
        echoed: dict[str, Any] = {"role": "assistant", "content": text}
        if wire_calls:
            echoed["tool_calls"] = wire_calls
        usage = body.get("usage")
        return ChatReply(
            text=text,
            tool_calls=calls,
            call_ids=ids,
            message=echoed,
            input_tokens=usage_count(usage, "prompt_tokens"),
            output_tokens=usage_count(usage, "completion_tokens"),
        )
