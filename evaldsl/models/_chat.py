"""The contract between model backends and what drives them.

A backend turns one chat request into one `ChatReply`, whatever the
provider's wire format. Messages are always written in the OpenAI
chat-completions shape (``{"role": "system"|"user"|"assistant"|"tool", ...}``
with ``tool_calls`` on assistant messages and ``tool_call_id`` on tool
results); a backend for another API (Anthropic's Messages) translates them
on the way out and its reply on the way back. Tools are given in that shape
too (``{"type": "function", "function": {"name", "description",
"parameters"}}``).

The tool loop (`models._loop`) and the judge (`models._judge`) only ever
see this module, so each is tested against a scripted backend and every
backend against a real server on loopback, independently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..artifacts import ToolCall


@dataclass(frozen=True)
class Sampling:
    """Sampling options of a request; None means the API's own default."""

    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None


@dataclass(frozen=True)
class ChatReply:
    """One model reply, provider-neutral."""

    text: str | None
    """The reply's text; None when it held only tool calls."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    """The calls the model made, in order. ``args`` is the decoded JSON object,
    or the raw string when the model sent arguments that are not valid JSON."""
    call_ids: list[str] = field(default_factory=list)
    """The provider's id of each call in ``tool_calls`` (same order), echoed in tool results."""
    message: dict[str, Any] = field(default_factory=dict)
    """The assistant message to append to the conversation, in the OpenAI shape."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached: bool = False
    """True when the on-disk cache served this reply (no call was made)."""

    @property
    def tokens(self) -> int | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)


def usage_count(usage: Any, name: str) -> int | None:
    """A token count from a reply's ``usage`` object: a whole number from 0, or None when absent.

    Raises:
        ValueError: for a ``usage`` that is not an object, or a count of the wrong type or sign
            (a reply that says so is unreadable, a backend error, never cached).
    """
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise ValueError(f"`usage` is a {type(usage).__name__}, not an object")
    value = usage.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"`usage.{name}` is {value!r}, not a count of tokens")
    return value


class ChatBackend(Protocol):
    """A model endpoint: one request in, one reply out.

    Raises `BackendError` (with the HTTP status and the API's message, never
    the key) when the request fails after its retries.
    """

    label: str
    """``provider:model`` as the user wrote it, e.g. ``openai:gpt-4o-mini``."""

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_schema: dict[str, Any] | None = None,
        sampling: Sampling = Sampling(),
        repeat_index: int = 0,
        timeout_s: float | None = None,
        accept: Callable[[ChatReply], object] | None = None,
    ) -> ChatReply:
        """Send one request. ``response_schema`` asks for structured output (a JSON
        Schema) where the API supports it; ``repeat_index`` is part of the cache key
        so that ``repeat 5`` makes five distinct calls; ``timeout_s`` bounds the whole
        request including retries. ``accept``, when given, says whether the caller can use a
        reply (it raises ValueError when not): only such replies are cached or served from it."""
        ...


class BackendError(RuntimeError):
    """A request that failed for good: after retries, or one that retrying cannot fix."""

    def __init__(self, message: str, *, status: int | None = None, kind: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind or ("backend_connection" if status is None else "backend_http")
        """The record's error kind: ``backend_http`` (an error status retrying cannot fix),
        ``backend_overloaded`` (429 or 5xx through every retry), ``backend_connection`` (not reached,
        or no reply in time) or ``backend_protocol`` (a reply that could not be read)."""

    @property
    def error_kind(self) -> str:  # read by the runner's `error_info`
        return self.kind
