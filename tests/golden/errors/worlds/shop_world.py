"""A world for the golden error files: its method `refund_order` clashes with a tool block."""


class Shop:
    def __init__(self, setup=None):
        self.orders = list((setup or {}).get("orders", []))

    def refund_order(self, id: int) -> str:
        """Refund one order."""
        return "refunded"


NOT_A_CLASS = 42
