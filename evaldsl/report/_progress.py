"""The progress of a run on stderr (`Progress`), and what every terminal text shares: the status
labels and colours, paths as short as they can be shown, colour only on a terminal."""

from __future__ import annotations

import functools
import os
import shutil
import sys
import time
from collections import Counter
from typing import TextIO

from ..run._record import CaseResult
from ._numbers import secs as _secs

_LABELS = {
    "passed": "PASSED", "failed": "FAILED", "error": "ERROR",
    "skipped": "SKIPPED", "xfailed": "XFAIL", "xpassed": "XPASS",
}
_COLOURS = {"passed": "32", "failed": "31", "error": "31", "skipped": "33", "xfailed": "33", "xpassed": "33"}
_ORDER = ("failed", "passed", "skipped", "xfailed", "xpassed", "error")

def use_colour(stream: TextIO) -> bool:
    """Colour when the stream is a terminal and ``NO_COLOR`` is not set."""
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")


def _shown(path: str) -> str:
    """A path as short as it can be shown: relative to the current directory when inside it."""
    if not os.path.isabs(path):
        return path
    return _relative_shown(path, os.getcwd())


@functools.lru_cache(maxsize=1024)
def _relative_shown(path: str, cwd: str) -> str:
    """`_shown` of an absolute path, kept: every failing case of a file asks for it twice."""
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


class Progress:
    """Reports finished cases on stderr: a live line on a terminal, plain lines otherwise.

    Args:
        total: how many cases will finish.
        stream: where to write (stderr).
        live: force the live line on or off (default: when ``stream`` is a terminal).
    """

    def __init__(self, total: int, *, stream: TextIO | None = None, live: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        is_tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.live = is_tty if live is None else live
        self.total = total
        self.counts: Counter[str] = Counter()
        self.start = time.monotonic()
        self._drawn = False

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    def update(self, result: CaseResult) -> None:
        """Count a finished case and show it."""
        self.counts[result.status] += 1
        if self.live:
            self._draw()
        else:
            latency = f" ({_secs(result.latency_s)})" if result.latency_s is not None else ""
            shown = f"{_shown(result.file)}::{result.name}"
            print(f"{_LABELS[result.status]:<7} {shown}{latency}", file=self.stream, flush=True)

    def tick(self) -> None:
        """Refresh the elapsed time of the live line (call it every fraction of a second)."""
        if self.live:
            self._draw()

    def close(self) -> None:
        """Erase the live line, so the summary starts on a clean line."""
        if self.live and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def _draw(self) -> None:
        width = max(20, shutil.get_terminal_size((80, 20)).columns - 1)
        counts = "  ".join(f"{n} {status}" for status in _ORDER if (n := self.counts[status]))
        tail = f" {self.done}/{self.total}  {counts}  {time.monotonic() - self.start:.1f}s"
        bar_width = max(10, min(40, width - len(tail) - 2))
        filled = bar_width * self.done // self.total if self.total else bar_width
        line = f"[{'#' * filled}{'-' * (bar_width - filled)}]{tail}"
        self.stream.write("\r" + line[:width] + "\x1b[K")
        self.stream.flush()
        self._drawn = True
