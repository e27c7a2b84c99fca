"""What the recording proxy saw of one run, turned into tool calls, results, tokens and a transcript.

Fed the request and response bodies of each model call (never a header):
OpenAI chat completions and Anthropic messages, whole JSON bodies or the
events of a stream. A tool call comes from a model's reply; its result from
the agent's next request (a ``tool`` message, or a ``tool_result`` block),
matched by the call's id.
"""

from __future__ import annotations

import json
from typing import Any

from ..artifacts import RunArtifacts, ToolCall

MAX_PROBLEMS = 3
"""Distinct problems a recording keeps (a retrying agent may meet the same one many times)."""


class Recording:
    """One run's model calls as the proxy saw them."""

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []
        self._by_id: dict[str, int] = {}
        self.tokens = 0
        self.usage_seen = False
        self.model_calls = 0
        self.transcript: list[Any] = []
        self.problems: list[str] = []
        """What went wrong between the proxy and the model (unreachable, an HTTP error status), each once:
        told beside a failed run's error, where the agent's own message may not say (`CommandAgent.recorded`)."""

    def problem(self, text: str) -> None:
        """Note what went wrong with a model call (kept once; at most `MAX_PROBLEMS`)."""
        if text not in self.problems and len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)

    def request(self, provider: str, body: Any) -> None:
        """The agent's request: results of earlier calls, and the conversation it sent."""
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return
        self.transcript = list(body["messages"])
        for msg in body["messages"]:
            if not isinstance(msg, dict):
                continue
            if provider == "openai" and msg.get("role") == "tool":
                self._result(msg.get("tool_call_id"), msg.get("content"))
            elif provider == "anthropic" and isinstance(msg.get("content"), list):
                for block in msg["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        self._result(block.get("tool_use_id"), block.get("content"))

    def response(self, provider: str, body: Any) -> None:
        """A whole (not streamed) reply of the model."""
        if not isinstance(body, dict):
            return
        self.model_calls += 1
        if provider == "openai":
            choices = body.get("choices") or [{}]
            first = choices[0] if isinstance(choices[0], dict) else {}
            message = first.get("message") or {}
            for call in message.get("tool_calls") or []:
                fn = call.get("function") or {}
                self._call(call.get("id"), fn.get("name"), fn.get("arguments"))
            usage = body.get("usage") or {}
            self._usage(usage.get("total_tokens"))
            self.transcript.append(message)
        else:
            for block in body.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    self._call(block.get("id"), block.get("name"), block.get("input"))
            usage = body.get("usage") or {}
            self._usage((usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0))
            self.transcript.append({"role": "assistant", "content": body.get("content")})

    def stream(self, provider: str, events: list[Any]) -> None:
        """A streamed reply: its events (decoded ``data:`` payloads) folded into one reply."""
        self.response(provider, _fold_openai(events) if provider == "openai" else _fold_anthropic(events))

    def _call(self, call_id: Any, name: Any, args: Any) -> None:
        if not isinstance(name, str):
            return
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                pass  # kept as the raw string the model sent
        if isinstance(call_id, str):
            self._by_id[call_id] = len(self.calls)
        self.calls.append(ToolCall(name=name, args=args if args is not None else {}))

    def _result(self, call_id: Any, content: Any) -> None:
        index = self._by_id.get(call_id) if isinstance(call_id, str) else None
        if index is not None and self.calls[index].result is None:
            self.calls[index] = self.calls[index].model_copy(update={"result": content})

    def _usage(self, tokens: Any) -> None:
        if isinstance(tokens, int) and tokens >= 0:
            self.tokens += tokens
            self.usage_seen = True

    def artifacts(self) -> RunArtifacts:
        return RunArtifacts(tool_calls=self.calls, tokens=self.tokens if self.usage_seen else None,
                            transcript=self.transcript)


def _fold_openai(events: list[Any]) -> dict[str, Any]:
    """Chat-completion chunks -> one completion (content, tool calls by index, usage)."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    for event in events:
        if not isinstance(event, dict):
            continue
        usage = event.get("usage") or usage
        for choice in event.get("choices") or []:
            delta = choice.get("delta") or {}
            text.append(delta.get("content") or "")
            for part in delta.get("tool_calls") or []:
                slot = calls.setdefault(part.get("index", 0), {"id": None, "name": "", "arguments": ""})
                slot["id"] = part.get("id") or slot["id"]
                fn = part.get("function") or {}
                slot["name"] += fn.get("name") or ""
                slot["arguments"] += fn.get("arguments") or ""
    tool_calls = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                  for _, c in sorted(calls.items())]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"choices": [{"message": message}], "usage": usage}


def _fold_anthropic(events: list[Any]) -> dict[str, Any]:
    """Message-stream events -> one message (text and tool_use blocks with their inputs, usage)."""
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    usage = {"input_tokens": 0, "output_tokens": 0}
    for event in events:
        if not isinstance(event, dict):
            continue
        kind, index = event.get("type"), event.get("index", 0)
        if kind == "message_start":
            for key, value in ((event.get("message") or {}).get("usage") or {}).items():
                if key in usage and isinstance(value, int):
                    usage[key] = value
        elif kind == "content_block_start":
            blocks[index] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "input_json_delta":
                partial[index] = partial.get(index, "") + (delta.get("partial_json") or "")
            elif delta.get("type") == "text_delta" and index in blocks:
                blocks[index]["text"] = blocks[index].get("text", "") + (delta.get("text") or "")
        elif kind == "message_delta":
            output = (event.get("usage") or {}).get("output_tokens")
            if isinstance(output, int):
                usage["output_tokens"] = output
    for index, raw in partial.items():
        if index in blocks:
            blocks[index]["input"] = raw
    return {"content": [blocks[i] for i in sorted(blocks)], "usage": usage}
