"""`demo:customer`: a rule-based simulated user, for trying conversations without an API key.

Like the demo agent (`evaldsl.demo`), it is NOT a model: a few rules keyed on
the shop example (suites/examples/shop), so that

    evaldsl run suites/examples/shop --agent evaldsl.demo:agent --user-model demo:customer

shows a whole simulated conversation offline. It reads its instructions (the
case's `simulated user` text, inside the system message the simulated user
is sent) for an order number and a colour, and then:

- opens with "I want a refund for order N";
- when the agent names the colour and asks, confirms ("Yes, the blue one");
- when the agent says the order is refunded, or after three of its replies
  without one, says that it is done (``###DONE###``).

It speaks the `ChatBackend` contract, so the runner treats it as it treats
any model (the cache included); any other use of it answers that it is a demo.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .._demo_shop import ORDER
from ._chat import ChatReply, Sampling
from ._user import DONE

_COLOURS = ("red", "blue", "green", "black", "white", "yellow", "grey", "pink")


class DemoBackend:
    """The ``demo`` provider: offline, deterministic, rule-based (see the module docstring)."""

    offline = True
    """It sends nothing anywhere: no cache, no endpoint that could be down."""

    def __init__(self, model: str, **_ignored: Any) -> None:
        self.model = model
        self.label = f"demo:{model}"
        self.down: str | None = None

    def describe(self) -> dict[str, Any]:
        return {"provider": "demo", "model": self.model, "base_url": None}

    async def aclose(self) -> None:
        return None

    async def chat(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
                   response_schema: dict[str, Any] | None = None, sampling: Sampling | None = None,
                   repeat_index: int = 0, timeout_s: float | None = None,
                   accept: Callable[[ChatReply], object] | None = None) -> ChatReply:
        system = str(messages[0].get("content") or "") if messages and messages[0].get("role") == "system" else ""
        if "playing the user" not in system:
            return ChatReply(text="I am evaldsl's demo model: I can only play the simulated customer of "
                                  "suites/examples/shop (--user-model demo:customer).", tool_calls=[])
        return ChatReply(text=_customer(system, messages[1:]), tool_calls=[], input_tokens=0, output_tokens=0)


def _customer(instructions: str, conversation: list[dict[str, Any]]) -> str:
    """The demo customer's next message (the agent's replies are the ``user`` messages here)."""
    found = ORDER.search(instructions)
    number = found.group(1) if found else "1"
    colour = next((c for c in _COLOURS if re.search(rf"\b{c}\b", instructions, re.IGNORECASE)), None)
    replies = [str(m.get("content") or "") for m in conversation if m.get("role") == "user"
               and not str(m.get("content") or "").startswith("(The conversation starts")]
    if not replies:
        return f"I want a refund for order {number}"
    last = replies[-1].lower()
    if "refunded" in last or len(replies) > 3:
        return DONE
    if "?" in last and (colour is None or colour in last):
        return f"Yes, the {colour} one" if colour else "Yes, please"
    return f"It is order {number}."
