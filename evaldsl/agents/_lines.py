"""The JSON Lines protocol of docs/agents.md, shared by the command and HTTP bridges.

Both bridges speak the same objects: evaldsl sends a *user line* per user
message; the agent answers with `tool_call` events and one `reply` (or an
`error`). `Turns` gathers what those lines say over every turn of one run
into one `RunArtifacts`, so a bridge only moves bytes and the checks of
what an agent may send live in one place.
"""

from __future__ import annotations

import json
from typing import Any

from ..artifacts import RunArtifacts, ToolCall


class ProtocolError(Exception):
    """The agent broke the protocol; the run is an error, its message says how."""

    prefix = "agent protocol error"


class AgentError(ProtocolError):
    """The agent ended the run itself with an ``error`` line."""

    prefix = "agent error"


def conversation_of(message: str, ctx: Any) -> tuple[list[dict[str, Any]], int]:
    """The conversation so far (ending with ``message``) and this message's turn number.

    The runtime's conversations give the context ``messages`` and ``turn``;
    without them a run is one user message, turn 1.
    """
    messages = getattr(ctx, "messages", None)
    if not isinstance(messages, (list, tuple)) or not messages:
        messages = [{"role": "user", "content": message}]
    turn = getattr(ctx, "turn", None)
    return [dict(m) if isinstance(m, dict) else m for m in messages], turn if isinstance(turn, int) else 1


def text_history(history: list[Any]) -> list[tuple[str, str]]:
    """The conversation's text: (role, content) of each user message and each assistant reply with text,
    for a framework given its history as plain turns (tool calls and results left out: the framework made
    them, and replays of them are not its input)."""
    out = []
    for m in history:
        if not isinstance(m, dict):
            continue
        role, content = m.get("role"), m.get("content")
        if role == "user" or (role == "assistant" and content and not m.get("tool_calls")):
            out.append((str(role), content if isinstance(content, str) else str(content or "")))
    return out


def user_line(message: str, ctx: Any, *, turn: int | None = None,
              messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The object evaldsl sends for one user message (AGENTS.md's user line)."""
    known, known_turn = conversation_of(message, ctx)
    tools = ctx.tools_openai() if ctx is not None and hasattr(ctx, "tools_openai") else []
    return {
        "type": "user", "content": message, "turn": turn if turn is not None else known_turn,
        "case": getattr(ctx, "name", None), "suite": getattr(ctx, "suite", None),
        "system": getattr(ctx, "system", None), "tools": tools,
        "messages": messages if messages is not None else known,
    }


def parse_line(raw: bytes | str) -> dict[str, Any]:
    """One line the agent wrote, as a checked event object.

    Raises:
        ProtocolError: not JSON, not an object, or not one of the known types.
    """
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    try:
        event = json.loads(text)
    except ValueError:
        raise ProtocolError(f"not a JSON line: {_shown(text)}") from None
    if not isinstance(event, dict):
        raise ProtocolError(f"not a JSON object: {_shown(text)}")
    kind = event.get("type")
    if kind not in ("tool_call", "reply", "error"):
        raise ProtocolError(f"unknown line type {kind!r} (tool_call, reply or error): {_shown(text)}")
    return event


def tool_call_of(event: dict[str, Any]) -> ToolCall:
    """A `tool_call` event (or an HTTP reply's ``tool_calls`` item) as a `ToolCall`."""
    name = event.get("name")
    if not isinstance(name, str) or not name:
        raise ProtocolError(f"a tool_call needs a non-empty string name: {_shown(json.dumps(event))}")
    return ToolCall(name=name, args=event.get("args", {}), result=event.get("result"))


def tokens_of(event: dict[str, Any]) -> int | None:
    """A reply's optional ``tokens`` (a non-negative integer)."""
    tokens = event.get("tokens")
    if tokens is None:
        return None
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise ProtocolError(f"a reply's tokens must be a non-negative integer, not {tokens!r}")
    return tokens


def reply_text(event: dict[str, Any]) -> str:
    content = event.get("content")
    if content is None:
        return ""
    if not isinstance(content, str):
        raise ProtocolError(f"a reply's content must be a string, not {type(content).__name__}")
    return content


class Turns:
    """What one run's agent said over all its turns, made into `RunArtifacts` at the end."""

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []
        self.transcript: list[Any] = []
        self.tokens: int | None = None
        self.final_text: str | None = None

    def user(self, message: str) -> None:
        self.transcript.append({"role": "user", "content": message})

    def event(self, event: dict[str, Any]) -> bool:
        """Take one event; True when it ended the turn (a reply). An error event raises."""
        kind = event["type"]
        if kind == "tool_call":
            self.calls.append(tool_call_of(event))
            return False
        if kind == "error":
            raise AgentError(str(event.get("message")))
        self.reply(event)
        return True

    def reply(self, event: dict[str, Any]) -> None:
        text = reply_text(event)
        tokens = tokens_of(event)
        if tokens is not None:
            self.tokens = (self.tokens or 0) + tokens
        self.final_text = text
        self.transcript.append({"role": "assistant", "content": text})

    def artifacts(self, error: str | None = None, stderr: str = "") -> RunArtifacts:
        """Everything gathered so far; an errored run keeps its calls and transcript too."""
        transcript = list(self.transcript)
        if stderr:
            transcript.append({"role": "stderr", "content": stderr})
        kind = "agent_protocol" if error is not None and error.startswith(ProtocolError.prefix + ":") else None
        return RunArtifacts(tool_calls=self.calls, final_text=self.final_text, tokens=self.tokens,
                            error=error, error_kind=kind, transcript=transcript)


def _shown(text: str, limit: int = 200) -> str:
    text = text.rstrip("\r\n")
    return repr(text if len(text) <= limit else text[:limit] + "...")
