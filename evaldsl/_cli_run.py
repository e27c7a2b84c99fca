"""`evaldsl run` and `evaldsl baseline` (placeholder until the runner lands)."""

from __future__ import annotations

import argparse


def add_run_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    return None
