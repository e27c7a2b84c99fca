"""The demo agent's shop rules: how `evaldsl.demo:agent` plays suites/examples/shop.

Like the rest of the demo agent, these are a few regular-expression rules,
not intelligence. When a case offers the shop's tools (`lookup_order` and
`refund_order`, a world's methods), the demo agent looks an order up when
asked for a refund and asks before it refunds; on a yes it refunds the order
named earlier in the conversation (`ctx.messages`). Its tool calls go through
the case context (`ctx.call`), so the world answers them and the runner
records them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .artifacts import RunArtifacts

SHOP_TOOLS = frozenset({"lookup_order", "refund_order"})
ORDER = re.compile(r"\border\s*(?:number\s*|#\s*)?(\d+)", re.IGNORECASE)
"""An order number as people write it (`order 42`, `order #42`); the demo customer reads its own with it."""
_YES = re.compile(r"^\s*(?:yes|yeah|yep|sure|ok(?:ay)?|please do|go ahead)\b", re.IGNORECASE)


def is_shop(ctx: Any) -> bool:
    """Whether the case offers the shop's tools."""
    return SHOP_TOOLS <= {getattr(t, "name", None) for t in getattr(ctx, "tools", ()) or ()}


def shop_turn(message: str, ctx: Any) -> RunArtifacts:
    """The demo agent's answer to one message of a shop conversation."""
    if _YES.search(message):
        number = _last_order(ctx.messages)
        if number is None:
            return _said("Which order should I refund? Please give me its number.")
        answer = ctx.call("refund_order", {"id": number})
        if not answer.ok:
            return _said(f"I could not refund order {number}: {answer.text}")
        return _said(f"Done: order {number} is refunded.")
    found = ORDER.search(message)
    if found and "refund" in message.lower():
        number = int(found.group(1))
        answer = ctx.call("lookup_order", {"id": number})
        if not answer.ok:
            return _said(f"Sorry, there is no order {number} ({answer.text}).")
        order = _decoded(answer.text)
        order = order if isinstance(order, dict) else {}
        colour = f"the {order['color']} one" if order.get("color") else "it"
        return _said(f"I found order {number}: {colour}, {order.get('status', 'on file')}. Shall I refund it?")
    return _said("How can I help with your order? Give me its number, please.")


def _last_order(messages: list[dict[str, Any]]) -> int | None:
    for m in reversed(messages):
        if m.get("role") == "user" and (found := ORDER.search(str(m.get("content") or ""))):
            return int(found.group(1))
    return None


def _decoded(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _said(text: str) -> RunArtifacts:
    return RunArtifacts(final_text=text, tokens=len(text.split()) * 4 // 3)
