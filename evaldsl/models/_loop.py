"""The tool loop: a model, driven by evaldsl, is the agent under test (LANGUAGE.md 8).

`ModelAgent` is an ordinary agent whose ``run(prompt, ctx)`` takes the
`CaseContext`, so the runner treats it like any user agent (timeouts,
isolation, repeats) and the mock tools answer it exactly as they answer a
user's agent that calls ``ctx.call``. It only speaks the `ChatBackend`
contract, so it is tested against a scripted backend and every provider
works the same way.

One run: the messages are ``system`` (when set) and the prompt (in a
conversation, the conversation so far, `CaseContext.messages`, so the
messages accumulate across turns and ``max turns`` bounds one turn); each reply's
tool calls are all answered, in order, from the declared tools' canned
answers, and the loop goes on until a reply has no tool calls (its text is
the final text) or ``max turns`` model calls were made (the run is then an
error that says so, with everything so far kept). ``mode single-turn`` stops
after the first reply: its calls are the run's calls, unanswered. A
`BackendError` ends the run as an error with the status and message, the
transcript so far kept; the other runs go on.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..artifacts import RunArtifacts, ToolCall
from ..compile._regex import RegexTimeout
from ..run._context import CaseContext
from ._chat import BackendError, ChatBackend, ChatReply, Sampling

TIMEOUT_MARGIN_S = 0.5
"""Each request must end this much (at most a tenth of the case's timeout)
before the case's timeout, so that a slow endpoint becomes a backend error
with the run's transcript kept rather than a cancelled run with nothing."""


class ModelAgent:
    """A chat model as an agent: the built-in subject of ``evaldsl run --model``.

    Args:
        backend: the endpoint (see `ChatBackend`).
        sampling: temperature, max tokens, seed of every request.
        name: the name in records; the backend's ``label`` by default.
    """

    def __init__(self, backend: ChatBackend, sampling: Sampling | None = None, *, name: str | None = None) -> None:
        self.backend = backend
        self.sampling = sampling or Sampling()
        self.name = name or backend.label

    def __repr__(self) -> str:
        return f"ModelAgent({self.name!r})"

    async def run(self, prompt: str, ctx: CaseContext) -> RunArtifacts:
        """Run the tool loop for one case (see the module docstring)."""
        start = time.perf_counter()
        messages: list[dict[str, Any]] = [{"role": "system", "content": ctx.system}] if ctx.system else []
        history = getattr(ctx, "messages", None) or [{"role": "user", "content": prompt}]
        messages.extend(dict(m) for m in history)  # a conversation's messages so far, ending with this one
        run = _Run(messages, 0 if getattr(ctx, "turn", 1) == 1 else len(messages) - 1)
        tools = ctx.tools_openai() or None
        for _turn in range(max(1, ctx.max_turns)):
            reply = await self._ask(run, tools, ctx, start)
            if reply is None:  # the backend failed: run.error says how
                return run.artifacts(start)
            run.take(reply)
            if ctx.mode == "single-turn":
                run.calls.extend(reply.tool_calls)
                run.final_text = reply.text
                return run.artifacts(start)
            if not reply.tool_calls:
                run.final_text = reply.text
                return run.artifacts(start)
            try:
                await run.answer(reply, ctx)
            except RegexTimeout as exc:  # a mock tool's catastrophic `when` pattern: this run only
                run.error, run.error_kind = str(exc), RegexTimeout.error_kind
                return run.artifacts(start)
        run.error_kind = "max_turns"
        run.error = (f"max turns reached: the model made {ctx.max_turns} call(s) without a final answer "
                     f"(`max turns {ctx.max_turns}`); the {len(run.calls)} tool call(s) so far are kept")
        return run.artifacts(start)

    async def _ask(self, run: _Run, tools: list[dict[str, Any]] | None, ctx: CaseContext,
                   start: float) -> ChatReply | None:
        left = ctx.timeout_s - (time.perf_counter() - start)
        timeout = max(0.001, left - min(TIMEOUT_MARGIN_S, ctx.timeout_s / 10))
        try:
            return await self.backend.chat(
                run.messages, tools=tools, sampling=self.sampling,
                repeat_index=ctx.repeat_index, timeout_s=timeout,
            )
        except BackendError as exc:
            run.error, run.error_kind = _backend_error(exc, self.backend.label), exc.kind
            return None


class _Run:
    """The state of one loop: messages, calls with results, tokens, outcome."""

    def __init__(self, messages: list[dict[str, Any]], first: int = 0) -> None:
        self.messages = messages
        self.first = first
        """Where this turn's transcript starts: its user message (0 for a first turn: the system too)."""
        self.calls: list[ToolCall] = []
        self.tokens: int | None = None
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.final_text: str | None = None
        self.error: str | None = None
        self.error_kind: str | None = None

    def take(self, reply: ChatReply) -> None:
        """Add a reply to the conversation and its usage to the tokens."""
        self.messages.append(reply.message or _assistant_message(reply, _ids(reply)))
        if reply.tokens is not None:
            self.tokens = (self.tokens or 0) + reply.tokens
        if reply.input_tokens is not None:
            self.input_tokens = (self.input_tokens or 0) + reply.input_tokens
        if reply.output_tokens is not None:
            self.output_tokens = (self.output_tokens or 0) + reply.output_tokens

    async def answer(self, reply: ChatReply, ctx: CaseContext) -> None:
        """Answer every call of a reply in order, from the run's tool answerer (`ctx.aanswer`: mock
        tools, `given` lines, a world's methods, awaited when async)."""
        for call, call_id in zip(reply.tool_calls, _ids(reply)):
            result = await ctx.aanswer(call.name, call.args)
            self.calls.append(ToolCall(name=call.name, args=call.args, result=result.text))
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": result.text})

    def artifacts(self, start: float) -> RunArtifacts:
        return RunArtifacts(
            tool_calls=self.calls, final_text=self.final_text, tokens=self.tokens,
            input_tokens=self.input_tokens, output_tokens=self.output_tokens,
            error=self.error, error_kind=self.error_kind,
            transcript=self.messages if not self.first else self.messages[self.first:],
            duration_s=time.perf_counter() - start,
        )


def _backend_error(exc: BackendError, label: str) -> str:
    """The run's error for a failed request: the message (which backends start with
    their label and, for an HTTP error, its status), completed where it is not."""
    message = str(exc)
    if not message.startswith(label):
        message = f"{label}: {message}"
    if exc.status is not None and str(exc.status) not in message:
        message += f" (HTTP {exc.status})"
    return message


def _ids(reply: ChatReply) -> list[str]:
    """The provider's call ids, made up (``call_N``) where it gave none."""
    ids = list(reply.call_ids)
    return ids + [f"call_{i}" for i in range(len(ids), len(reply.tool_calls))]


def _assistant_message(reply: ChatReply, ids: list[str]) -> dict[str, Any]:
    """The assistant message in the OpenAI shape, for a backend that gave none."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {
                "name": call.name,
                "arguments": call.args if isinstance(call.args, str) else json.dumps(call.args),
            }}
            for call, call_id in zip(reply.tool_calls, ids)
        ]
    return message
