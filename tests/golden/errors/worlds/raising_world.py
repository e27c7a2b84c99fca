"""A world file that raises while it is imported."""

raise RuntimeError("the shop database is not reachable")
