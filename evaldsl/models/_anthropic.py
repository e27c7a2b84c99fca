"""The Anthropic Messages API, translated to and from the contract's OpenAI-shaped messages.

``POST {base}/v1/messages`` with ``x-api-key`` (``ANTHROPIC_API_KEY``; no
header without one) and ``anthropic-version: 2023-06-01``. Base URL: the
argument, else ``ANTHROPIC_BASE_URL``, else https://api.anthropic.com.

On the way out: ``system`` messages become the top-level ``system``; an
assistant's ``tool_calls`` become ``tool_use`` blocks; ``tool`` messages
become ``tool_result`` blocks, and consecutive messages of one role (the
results of several calls, a user turn after them) merge into one message,
as the API wants roles to alternate; tools become ``{name, description,
input_schema}``. ``max_tokens`` is required by this API: 4096 unless the
sampling sets it. There is no ``seed``: it is not sent.

On the way back: ``text`` blocks are joined into the reply's text,
``tool_use`` blocks become tool calls (their ``input`` is always a JSON
object), usage is ``input_tokens`` / ``output_tokens``.

Structured output: the Messages API has no ``response_format``, so a
request with a response schema offers one tool, ``structured_output``,
whose ``input_schema`` is the schema, and forces it (``tool_choice: {type:
tool}``); the model's input to it, as JSON text, is the reply's text. A
schema that is not an object is wrapped as ``{"value": schema}`` and
unwrapped on the way back, since a tool's input must be an object.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..artifacts import ToolCall
from ._chat import ChatReply, Sampling, usage_count
from ._http import BASE_HEADERS, HttpBackend

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
STRUCTURED_TOOL = "structured_output"


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return json.dumps(content)


def _tool_input(arguments: Any) -> dict[str, Any]:
    """A call's arguments as a tool_use input, which must be an object."""
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments) if isinstance(arguments, str) and arguments.strip() else {}
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"_raw_arguments": arguments}


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One OpenAI-shaped user/assistant/tool message as Anthropic content blocks."""
    if message.get("role") == "tool":
        result = message.get("content")
        content = result if isinstance(result, str) else _text_of(result) if isinstance(result, list) else result
        if not isinstance(content, str):
            content = json.dumps(content)
        return [{"type": "tool_result", "tool_use_id": message.get("tool_call_id", ""), "content": content}]
    blocks: list[dict[str, Any]] = []
    text = _text_of(message.get("content"))
    if text:
        blocks.append({"type": "text", "text": text})
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id", ""),
                "name": function.get("name", ""),
                "input": _tool_input(function.get("arguments", "")),
            }
        )
    return blocks


def to_anthropic_messages(messages: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    """(system, messages) for the Messages API, from OpenAI-shaped messages."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "system":
            system.append(_text_of(message.get("content")))
            continue
        wire_role = "assistant" if role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue  # an empty turn carries nothing, and the API refuses empty content
        if out and out[-1]["role"] == wire_role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": wire_role, "content": blocks})
    return ("\n\n".join(system) if system else None), out


def to_anthropic_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI function tools as Anthropic tools."""
    out = []
    for tool in tools:
        function = tool.get("function", tool)
        item: dict[str, Any] = {
            "name": function["name"],
            "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
        }
        if function.get("description"):
            item["description"] = function["description"]
        out.append(item)
    return out


def _wrapped(schema: dict[str, Any]) -> bool:
    return schema.get("type") != "object"


class AnthropicBackend(HttpBackend):
    """The Anthropic Messages API."""

    provider = "anthropic"
    path = "/v1/messages"

    def __init__(self, model: str, *, base_url: str | None = None, **options: Any) -> None:
        base = base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
        super().__init__(model, base_url=base, api_key=os.environ.get("ANTHROPIC_API_KEY"), **options)

    def headers(self) -> dict[str, str]:
        headers = {**BASE_HEADERS, "anthropic-version": API_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def build(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        response_schema: dict[str, Any] | None,
        sampling: Sampling,
    ) -> dict[str, Any]:
        system, wire = to_anthropic_messages(messages)
        body: dict[str, Any] = {"model": self.model, "max_tokens": sampling.max_tokens or DEFAULT_MAX_TOKENS}
        if system is not None:
            body["system"] = system
        body["messages"] = wire
        wire_tools = to_anthropic_tools(tools or [])
        if response_schema is not None:
            schema = response_schema
            if _wrapped(schema):
                schema = {"type": "object", "properties": {"value": schema}, "required": ["value"]}
            wire_tools.append(
                {"name": STRUCTURED_TOOL, "description": "Give the answer in this structure.", "input_schema": schema}
            )
            body["tool_choice"] = {"type": "tool", "name": STRUCTURED_TOOL}
        if wire_tools:
            body["tools"] = wire_tools
        if sampling.temperature is not None:
            body["temperature"] = sampling.temperature
        return body

    def parse(self, body: dict[str, Any], response_schema: dict[str, Any] | None) -> ChatReply:
        texts, calls, ids, wire_calls = [], [], [], []
        structured: str | None = None
        for block in body["content"]:
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text", ""))
            elif kind == "tool_use" and response_schema is not None and block["name"] == STRUCTURED_TOOL:
                value = block["input"]
                structured = json.dumps(value["value"] if _wrapped(response_schema) else value)
            elif kind == "tool_use":
                args = block.get("input")
                calls.append(ToolCall(name=block["name"], args=args if args is not None else {}))
                ids.append(block["id"])
                arguments = json.dumps(args if args is not None else {})
                wire_calls.append(
                    {"id": block["id"], "type": "function", "function": {"name": block["name"], "arguments": arguments}}
                )
        text = structured if structured is not None else ("".join(texts) if texts else None)
        echoed: dict[str, Any] = {"role": "assistant", "content": text}
        if wire_calls:
            echoed["tool_calls"] = wire_calls
        usage = body.get("usage")
        return ChatReply(
            text=text,
            tool_calls=calls,
            call_ids=ids,
            message=echoed,
            input_tokens=usage_count(usage, "input_tokens"),
            output_tokens=usage_count(usage, "output_tokens"),
        )
