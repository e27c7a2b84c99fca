"""How every text report writes a share, a score and a duration: the terminal,
Markdown and the comparison text agree to the character."""

from __future__ import annotations


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal; ``-`` when there is none."""
    return "-" if value is None else f"{value:.1%}"


def num(value: float | None) -> str:
    """A score with two decimals; ``-`` when there is none."""
    return "-" if value is None else f"{value:.2f}"


def secs(value: float | None) -> str:
    """A duration: ``0.42ms`` below 10 ms, ``420ms`` below a second, else ``4.20s``."""
    if value is None:
        return "-"
    if value < 0.01:
        return f"{value * 1000:.2f}ms"
    return f"{value * 1000:.0f}ms" if value < 1 else f"{value:.2f}s"
