"""`--agent-url`: an agent behind an HTTP endpoint (docs/agents.md, "HTTP agents").

Each user message is POSTed as the line form's user line plus ``run_id``;
the JSON body answered is the reply line, with optional ``tool_calls``. It
sends through the models' pooled client (`models._transport`), so an HTTP
agent costs what a model call does.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from ..artifacts import RunArtifacts
from ._lines import ProtocolError, Turns, tool_call_of, user_line


class HttpAgent:
    """An agent at ``url``: ``run(message, ctx)``; one ``run_id`` for every turn of a conversation."""

    def __init__(self, url: str, *, model_base_url: str = "", tools_url: str = "") -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"{url!r} is not an http:// or https:// URL")
        from ..models._transport import SharedClient

        self.url = url
        self.name = url
        self.model_base_url = model_base_url
        self.tools_url = tools_url
        self._client = SharedClient()
        self._runs: dict[Any, tuple[str, int, list[dict[str, Any]]]] = {}

    def __repr__(self) -> str:
        return f"HttpAgent({self.url!r})"

    async def run(self, message: str, ctx: Any = None) -> RunArtifacts:
        """POST one user message; the artifacts are this turn's (the runner keeps the conversation)."""
        conversation_id = getattr(ctx, "conversation_id", None)
        run_id, count, messages = self._runs.get(conversation_id) or (uuid.uuid4().hex, 0, [])
        count += 1
        turns = Turns()
        turns.user(message)
        messages.append({"role": "user", "content": message})
        known = getattr(ctx, "messages", None)  # the runner's conversation so far: tool calls and results too
        sent = [dict(m) for m in known] if isinstance(known, list) and known else list(messages)
        if conversation_id is not None:
            self._runs[conversation_id] = (run_id, count, messages)
        body = {**user_line(message, ctx, turn=count, messages=sent), "run_id": run_id}
        timeout = float(getattr(ctx, "timeout_s", 60.0) or 60.0)
        try:
            self._read(await self._post(body, timeout), turns)
        except ProtocolError as exc:
            self._runs.pop(conversation_id, None)
            return turns.artifacts(f"{exc.prefix}: {exc}")
        messages.append({"role": "assistant", "content": turns.final_text})
        if getattr(ctx, "last_turn", False):
            self._runs.pop(conversation_id, None)
        return turns.artifacts()

    def close_conversation(self, conversation_id: Any) -> None:
        """Forget a conversation (the runner calls it when the run ends)."""
        self._runs.pop(conversation_id, None)

    async def _post(self, body: dict[str, Any], timeout: float) -> Any:
        from ..models._transport import TransportFailure

        headers = {"content-type": "application/json", "X-Evaldsl-Model-Base-Url": self.model_base_url,
                   "X-Evaldsl-Tools-Url": self.tools_url}
        try:
            reply = await self._client.get().post(self.url, json.dumps(body).encode(), headers, timeout)
        except TransportFailure as exc:
            raise ProtocolError(f"cannot reach {self.url}: {exc}") from None
        if not reply.is_success:
            raise ProtocolError(f"{self.url} answered HTTP {reply.status_code}: {reply.text[:500]!r}")
        try:
            return json.loads(reply.content)
        except ValueError:
            raise ProtocolError(f"{self.url} answered a body that is not JSON: {reply.text[:200]!r}") from None

    @staticmethod
    def _read(data: Any, turns: Turns) -> None:
        if not isinstance(data, dict):
            raise ProtocolError(f"the reply must be a JSON object, not {type(data).__name__}")
        if data.get("type") == "error":
            turns.event(data)
        calls = data.get("tool_calls") or []
        if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
            raise ProtocolError("tool_calls must be a list of objects")
        turns.calls.extend(tool_call_of(c) for c in calls)
        turns.reply(data)

    async def aclose(self) -> None:
        await self._client.aclose()
