"""Reading .evl files: the one reader every command uses (`read_source`, `decode_source`)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..syntax import _ast as a
from ..syntax._diagnostics import EvlError, error


def read_source(path: str | Path, shown: str | None = None) -> str:
    """The text of a .evl file; an unreadable, non-UTF-8 or binary file is an EvlError naming it.

    Every command reads .evl files through here (and stdin through `decode_source`):
    no newline translation, so a lone `\\r` stays what the parser makes of it.
    """
    shown = str(path) if shown is None else shown
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or device would block (or never end) the read
            raise EvlError([error("E002", f"cannot read {shown}: not a regular file (a FIFO, device or folder?)",
                                  a.Span(file=shown))])
        data = Path(path).read_bytes()
    except OSError as exc:
        raise EvlError([error("E002", f"cannot read {shown}: {exc.strerror}", a.Span(file=shown))]) from None
    except ValueError as exc:  # a NUL in the path
        raise EvlError([error("E002", f"cannot read {shown!r}: {exc}", a.Span(file=shown))]) from None
    return decode_source(data, shown)


def decode_source(data: bytes, shown: str) -> str:
    """The text of .evl bytes read from a file or stdin, as `read_source` checks it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EvlError([error("E001", f"not UTF-8 text (byte {exc.start}): is this an .evl file?",
                              a.Span(file=shown))]) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise EvlError([error("E001", "the file holds a NUL byte: is this a binary file?",
                              a.Span(file=shown, line=line))], {shown: text})
    return text
