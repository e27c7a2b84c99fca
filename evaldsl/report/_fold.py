"""Folding a journal into its record in one piece, when its lines are the record's cases in order.

Why: at the end of a run the record is rebuilt from the journal (`_journal`).
Read a case at a time (a seek, a read, the spans of each), that costs about
as much per case as writing its journal line did. In the common run (no
case resumed, none left out, cases finished in record order) the journal's
lines *are* the record's cases, in order and with nothing between them, so
the record's middle is the journal's text with each line break turned into
``,\\n`` and an indent (`CASE_INDENT`): done on a megabyte at a time, and
each case's new span found by arithmetic. The bytes are those of
`write_streamed` of the same cases (tests/unit/test_report_fold.py); any
other run takes that general path.
"""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import IO

from ..run._record import RunMeta, Summary
from ._json import CASE_INDENT, record_head, write_temp

_SEPARATOR = b",\n" + CASE_INDENT
_GROWTH = len(_SEPARATOR) - 1  # what each line of the journal grows by in the record, beside its indent
_CHUNK = 1 << 20


class JournalRun:
    """Every case of a record as one stretch of a journal: from ``start`` to ``end`` (its lines, each ending
    in a line break), the cases' offsets and lengths in it (record order)."""

    __slots__ = ("path", "start", "end", "offsets", "lengths")

    def __init__(self, path: Path, offsets: array[int], lengths: array[int]) -> None:
        self.path = path
        self.offsets, self.lengths = offsets, lengths
        self.start = offsets[0]
        self.end = offsets[-1] + lengths[-1] + 1

    @classmethod
    def find(cls, path: Path | None, index: int, sources: array[int], offsets: array[int],
             lengths: array[int]) -> JournalRun | None:
        """The run, when every case's source is the journal ``path`` (source ``index``), their offsets rise
        and the lines leave no gap between them; else None (the record is then rebuilt a case at a time)."""
        n = len(sources)
        if path is None or not n or sources.count(index) != n:
            return None
        listed = offsets.tolist()
        if listed != sorted(listed) or len(set(listed)) != n:
            return None
        run = cls(path, offsets, lengths)
        # rising offsets of distinct lines that fill [start, end) exactly: the lines are contiguous
        return run if run.end - run.start == sum(lengths) + n else None

    def write(self, folder: Path, name: str, meta: RunMeta, summary: Summary) -> tuple[str, int]:
        """A temporary file in ``folder`` holding the record (fsynced, as `write_streamed` leaves it); its
        path and where the first case's text begins in it."""
        head = record_head(meta, summary)
        before = head[:-4] + b"[\n"

        def fill(fh: IO[bytes]) -> None:
            fh.write(before)
            first, carry = True, b""
            with open(self.path, "rb") as source:
                source.seek(self.start)
                left = self.end - self.start
                while left > 0:
                    data = source.read(min(_CHUNK, left))
                    if not data:
                        raise OSError(f"{self.path} is shorter than it was when the run wrote it")
                    left -= len(data)
                    data = carry + data
                    cut = data.rfind(b"\n") + 1  # whole lines only: a line's break becomes a separator
                    carry = data[cut:]
                    if cut:
                        fh.write((CASE_INDENT if first else _SEPARATOR) + data[:cut - 1].replace(b"\n", _SEPARATOR))
                        first = False
            if carry:  # (cannot happen: `end` is a line's end)
                raise OSError(f"{self.path} changed while the record was made from it")
            fh.write(b"\n  ]\n}")

        return write_temp(folder, name, fill), len(before)

    def spans(self, begins: int) -> tuple[array[int], array[int]]:
        """Each case's (offsets, lengths) in the record whose first case's text begins at ``begins``."""
        base, growth = begins - self.start, _GROWTH
        offsets = array("q", [base + offset + growth * k for k, offset in enumerate(self.offsets)])
        return offsets, array("q", [length + len(CASE_INDENT) for length in self.lengths])
