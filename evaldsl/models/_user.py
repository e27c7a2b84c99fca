"""The simulated user (LANGUAGE.md 12): a chat model that plays the user of a conversation case.

`SimulatedUser` is what ``--user-model`` makes: called with the case's
`simulated user` text and the conversation so far, it asks its model for the
next user message. Its instructions are a jinja2 template that ships beside
the judge's (``templates/user.j2``) and that a user can replace
(``--user-template FILE``). The conversation is shown to the model from the
user's side: the agent's replies as ``user`` messages, the simulated user's
own earlier messages as ``assistant`` ones; tool calls and results are the
agent's business and are left out.

The model ends the conversation by answering ``###DONE###`` (`DONE`): a
reply holding that word is "done", whatever else it says. A reply with no
text is an error (kind ``backend_protocol``) and is never cached. Requests
go through the same backend as the judge's: retries, the response cache
(keyed per repeat, so each repeat of a case gets its own conversation) and
token counts, which the runner keeps apart from the agent's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._chat import ChatBackend, ChatReply, Sampling

TEMPLATE = Path(__file__).parent / "templates" / "user.j2"
"""The simulated user's instructions as evaldsl ships them; `--user-template FILE` replaces them."""
DONE = "###DONE###"
"""What the simulated user answers to end the conversation."""
OPENING = "(The conversation starts now. Write your first message to the assistant.)"
"""The one message the model sees when it opens the conversation (most APIs need one)."""


class UserModelError(RuntimeError):
    """The simulated user's model gave a reply that cannot be a user message."""

    error_kind = "backend_protocol"


@dataclass(frozen=True)
class UserTurn:
    """What the simulated user wrote: its message (None: it is done) and the tokens that cost."""

    text: str | None
    tokens: int | None = None


class SimulatedUser:
    """A chat model playing the user (see the module docstring).

    Args:
        backend: the user model's endpoint.
        template: a template file replacing the shipped instructions (see `TEMPLATE`).
        sampling: the requests' sampling (default: the API's).
    """

    def __init__(self, backend: ChatBackend, *, template: str | Path | None = None,
                 sampling: Sampling | None = None) -> None:
        from ._judge import load_template

        self.backend = backend
        self.template = load_template(template if template is not None else TEMPLATE)
        self.sampling = sampling or Sampling()

    def __repr__(self) -> str:
        return f"SimulatedUser({self.backend.label!r})"

    def messages(self, *, instructions: str, messages: list[dict[str, Any]], case: str = "") -> list[dict[str, Any]]:
        """The request's messages: the rendered instructions, then the conversation from the user's side."""
        system = str(self.template.render(instructions=instructions, done=DONE, case=case))
        out: list[dict[str, Any]] = [{"role": "system", "content": system}]
        for m in messages:
            role, content = m.get("role"), m.get("content")
            if role == "user":
                out.append({"role": "assistant", "content": str(content or "")})
            elif role == "assistant" and not m.get("tool_calls"):
                out.append({"role": "user", "content": str(content) if content else "(the assistant said nothing)"})
        if len(out) == 1:
            out.append({"role": "user", "content": OPENING})
        return out

    async def __call__(self, *, instructions: str, messages: list[dict[str, Any]], repeat_index: int = 0,
                       case: str = "") -> UserTurn:
        """The next user message, or ``UserTurn(None)`` when the simulated user is done."""
        sent = self.messages(instructions=instructions, messages=messages, case=case)
        reply = await self.backend.chat(sent, sampling=self.sampling, repeat_index=repeat_index, accept=_usable)
        text = (reply.text or "").strip()
        if not text:
            shown = "tool calls" if reply.tool_calls else "no text"
            raise UserModelError(f"the simulated user's model ({self.backend.label}) replied with {shown}, "
                                 "not a user message")
        return UserTurn(None if DONE in text else text, reply.tokens)


def _usable(reply: ChatReply) -> None:
    """The cache's test: a reply with no text cannot be a user message and is never stored."""
    if not (reply.text or "").strip():
        raise ValueError("no text")
