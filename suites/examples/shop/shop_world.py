"""The shop behind suites/examples/shop/shop.evl: a world (docs/language.md, "Worlds").

Each run of a case gets a fresh `Shop`, made from the case's `setup` value;
its public typed methods are the tools the agent may call, and its `state()`
is what `expect world` patterns match.
"""

from __future__ import annotations


class Shop:
    """A tiny order book."""

    def __init__(self, setup: dict | None = None) -> None:
        self.orders = [dict(order) for order in (setup or {}).get("orders", [])]

    def lookup_order(self, id: int) -> dict:
        """Look an order up by its number.

        Args:
            id: the order's number, as the customer gives it.
        """
        for order in self.orders:
            if order["id"] == id:
                return order
        raise LookupError(f"there is no order {id}")

    def refund_order(self, id: int) -> str:
        """Refund a delivered order (the money goes back to the customer's card)."""
        order = self.lookup_order(id)
        if order["status"] != "delivered":
            raise ValueError(f"order {id} is {order['status']}, and only a delivered order can be refunded")
        order["status"] = "refunded"
        return f"order {id} refunded"

    def state(self) -> dict:
        return {"orders": self.orders}
