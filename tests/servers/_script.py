"""What a scripted server answers: provider-neutral responses and helpers that build scripts.

A script is a callable ``reply(request_json, request_index) -> Response``;
the server renders the response in its own wire format (OpenAI chat
completions or Anthropic Messages), so one script serves both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(frozen=True)
class Call:
    """One tool call in a reply: ``args`` is sent as JSON, unless ``raw`` is given (sent verbatim)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    raw: str | None = None
    """Arguments sent as this exact string (OpenAI: may be invalid JSON).
    The Anthropic server has no string form: it sends ``{"raw": raw}``."""
    id: str | None = None
    """The call's id; the server numbers calls when None."""


@dataclass(frozen=True)
class Text:
    """A text answer."""

    text: str
    input_tokens: int = 10
    output_tokens: int = 5


@dataclass(frozen=True)
class ToolCalls:
    """A reply with tool calls (and, optionally, text beside them)."""

    calls: tuple[Call, ...]
    text: str | None = None
    input_tokens: int = 10
    output_tokens: int = 5


@dataclass(frozen=True)
class HttpError:
    """An HTTP error: ``body`` is a dict (sent as JSON) or a str (sent as text/plain)."""

    status: int
    body: dict[str, Any] | str = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Drop:
    """Close the connection without sending a reply."""


@dataclass(frozen=True)
class Delay:
    """Wait ``seconds`` (cut short when the server stops), then answer ``then``."""

    seconds: float
    then: Response


@dataclass(frozen=True)
class RawBody:
    """A 200 reply with this exact body (malformed or unusual replies)."""

    body: dict[str, Any] | str
    status: int = 200


Response = Union[Text, ToolCalls, HttpError, Drop, Delay, RawBody]
Script = Callable[[dict[str, Any], int], Response]


def text(value: str, *, input_tokens: int = 10, output_tokens: int = 5) -> Text:
    return Text(value, input_tokens, output_tokens)


def call(name: str, args: dict[str, Any] | None = None, *, raw: str | None = None, id: str | None = None) -> Call:
    return Call(name, dict(args or {}), raw, id)


def tool_calls(*calls: Call, text: str | None = None) -> ToolCalls:
    return ToolCalls(tuple(calls), text)


def always(response: Response) -> Script:
    """Every request gets ``response``."""
    return lambda request, index: response


def sequence(*responses: Response) -> Script:
    """Request ``i`` gets ``responses[i]``; requests past the end get the last one."""
    if not responses:
        raise ValueError("sequence() needs at least one response")
    return lambda request, index: responses[min(index, len(responses) - 1)]


def has_tool_result(request: dict[str, Any]) -> bool:
    """True when the request's messages carry a tool result (either wire format)."""
    for message in request.get("messages", []):
        if message.get("role") == "tool":
            return True
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(block, dict) and block.get("type") == "tool_result" for block in content
        ):
            return True
    return False


def tool_then_text(name: str, args: dict[str, Any] | None, answer: str) -> Script:
    """Call tool ``name`` with ``args`` until a tool result is present, then answer ``answer``."""
    first = tool_calls(call(name, args))
    final = text(answer)
    return lambda request, index: final if has_tool_result(request) else first
