"""Argument types shared by the commands: one wording for a bad number everywhere.

argparse turns the `ArgumentTypeError` into its own usage error (exit 4 via
our parser), naming the option: ``argument -j/--concurrency: must be at least 1, not 0``.
Also the command line as a record keeps it (`recorded_command`).
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence


def recorded_command(argv: Sequence[str]) -> str:
    """``evaldsl ARGS...`` for a record's ``meta.command``, every URL without user, password, query or fragment.

    A record is shared and uploaded; a token written into an `--upload` or `--base-url` URL must not
    travel with it (the same rule as every message that shows a URL).
    """
    from ..report._upload import shown_url

    def clean(arg: str) -> str:
        if "://" not in arg:
            return arg
        option, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        return f"{option}{eq}{shown_url(value)}"

    return shlex.join(["evaldsl", *map(clean, argv)])


def positive_int(text: str) -> int:
    """A whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def positive_float(text: str) -> float:
    """A number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
    return value
