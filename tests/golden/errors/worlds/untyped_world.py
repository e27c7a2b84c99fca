"""A world whose public method has a parameter without a type hint."""


class Shop:
    def refund_order(self, id: int, reason) -> str:
        """Refund one order."""
        return "refunded"
