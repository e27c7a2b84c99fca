"""What a person sees: progress on stderr, then a summary on stdout.

Progress goes to stderr so that stdout carries only the report (and can be
piped). On a terminal it is one live line, redrawn in place: a bar, the
counts so far and the elapsed time; elsewhere (CI logs, pipes) it is one
plain line per finished case, since carriage returns make logs unreadable.
No dependency is needed for either: ANSI "erase line" is enough.

The summary follows pytest: a table (one row per suite, and the totals),
the statistics, a "short summary" spelling out every failed expectation
with its detail and ``file:line``, and a final count line. Colour is used
only on a terminal and never when ``NO_COLOR`` is set. Here: `Digest`, which
gathers what the summary needs case by case and writes it; the table's
numbers are `_table`'s, the listings' texts `_listings`'s.
"""

from __future__ import annotations

import io
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TextIO

from ..run._record import CaseResult, EvalReport, RunResult, Summary
from ..run._stats import case_stats
from ._details import Details
from ._listings import (  # noqa: F401 (SHOWN_MESSAGE, failed_expectations, run_errors: imported from here too)
    SHOWN_MESSAGE,
    _failure_body,
    _partial_body,
    _warning_line,
    failed_expectations,
    partial_credits,
    run_errors,
    turn_name,
)
from ._numbers import num as _num  # noqa: F401 (the models table imports these from here)
from ._numbers import pct as _pct  # noqa: F401
from ._numbers import secs as _secs  # noqa: F401
from ._progress import _COLOURS, _LABELS, _paint, _shown
from ._table import _CODE, _STATUSES, _final_line, _Group, _row, _rule, _statistics, _summary
from ._table import heading as heading  # (`evaldsl run` imports it from here)


def format_report(
    report: EvalReport, *, colour: bool = False, elapsed_s: float | None = None, note: str | None = None
) -> str:
    """The human summary of a report: table, statistics, failures, count line."""
    digest = Digest()
    for case in report.cases:
        digest.add(case)
    return digest.render(report.summary, colour=colour, elapsed_s=elapsed_s, note=note)


class Digest:
    """What the summary shows of each case, kept as the cases finish, so that a run need not keep them.

    Per case: its table numbers (a `_Group`'s arrays: a status code, the
    score, each run's latency and token count); for a case that failed,
    passed on partial credit, or had its artifacts changed to be recorded,
    the text the summary prints of it, made at once (the label's colour is
    added at the end). Cases may be added in any order: ``position`` (the
    case's place in the record) puts the groups and the listings in record
    order.

    The texts go to a spool (in memory up to `SPOOL_BYTES`, then a temporary
    file) and what each is (position, kind, status, packed in one integer)
    and where it ends to two arrays, so a run of 100,000 failing cases holds
    about 40 bytes a case.

    Most cases ran once, without an error or a warning: `_add_plain` makes
    their numbers and texts without the general path's loops over the runs
    (tests/unit/test_report_terminal.py checks that both give the same).
    """

    SPOOL_BYTES = 1 << 20
    BLOCK = 1 << 16

    def __init__(self, details: Details | None = None) -> None:
        self.details = details if details is not None else Details()
        """How much of each failed case is shown beside its failures (final text, calls, traceback)."""
        self._files: dict[str, str] = {}
        """Each file as the listings show it (`_shown`), asked once."""
        self._shows_runs = type(self.details) is not Details or self.details.verbosity >= 1
        """False when a failed run without an error shows nothing below its failures (``-q``)."""
        self._groups: dict[tuple[str, str], _Group] = {}
        self._spool = tempfile.SpooledTemporaryFile(max_size=self.SPOOL_BYTES)
        self._spooled = 0
        self._pending = bytearray()
        """Texts not yet in the spool (at most `BLOCK` bytes)."""
        self._count = 0
        self._note_key = array("q")
        """Each note's ``position << 5 | kind << 3 | status code``: one append a note."""
        self._note_end = array("q")
        """Where each note's text ends in the spool (it starts where the one before ends)."""

    def _note(self, position: int, kind: int, status: str, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        self._spooled += len(data)
        self._note_key.append(position << 5 | kind << 3 | _CODE[status])
        self._note_end.append(self._spooled)
        self._pending += data  # the spool gets the texts a block at a time: a seek and a write a note cost more
        if len(self._pending) >= self.BLOCK:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._spool.seek(self._spooled - len(self._pending))
            self._spool.write(self._pending)
            self._pending.clear()

    def _note_order(self) -> Iterable[int]:
        """The notes' indexes in record order (a stable sort: notes of one position keep their order)."""
        keys = self._note_key
        if all(a <= b for a, b in zip(keys, islice(keys, 1, None))):  # so the positions are in order too
            return range(len(keys))  # cases mostly finish in record order: nothing to sort
        return sorted(range(len(keys)), key=lambda i: keys[i] >> 5)

    def _texts(self, kind: int, order: Iterable[int]) -> Iterator[tuple[str, str]]:
        """(status, text) of each note of ``kind``, in record order."""
        keys, ends = self._note_key, self._note_end
        self._flush()
        held, at = b"", 0  # a block of the spool read at once: notes in order are cut out of it, a read a block
        for i in order:
            key = keys[i]
            if key >> 3 & 3 == kind:
                start, end = ends[i - 1] if i else 0, ends[i]
                if start < at or end > at + len(held):
                    self._spool.seek(start)
                    held, at = self._spool.read(max(end - start, self.BLOCK)), start
                yield _STATUSES[key & 7], held[start - at:end - at].decode("utf-8", "surrogatepass")

    def add(self, case: CaseResult, position: int | None = None) -> None:
        """Count one finished case (``position``: its place in the record; default: after the last)."""
        position = self._count if position is None else position
        self._count += 1
        group_key = (case.suite, case.file)
        group = self._groups.get(group_key)
        if group is None:
            group = self._groups[group_key] = _Group(position)
        elif position < group.first:
            group.first = position
        runs = case.runs
        if len(runs) == 1 and (run := runs[0]).error is None and not run.warnings:  # most cases: the fast path
            self._add_plain(case, run, group, position)
        else:
            self._add_general(case, group, position)

    def _add_general(self, case: CaseResult, group: _Group, position: int) -> None:
        """`add` of any case: repeats, errors and warnings included."""
        group.add(case_stats(case))
        if case.status in ("failed", "error"):
            self._note(position, _FAILURE, case.status, self._with_details(_failure_body(case), case))
        elif case.status in ("passed", "xpassed") and (partial := partial_credits(case)):
            self._note(position, _PARTIAL, case.status, _partial_body(case, partial))
        if any(r.warnings for r in case.runs):
            self._note(position, _WARNING, case.status, _warning_line(case))

    def _add_plain(self, case: CaseResult, run: RunResult, group: _Group, position: int) -> None:
        """`add` of a case of one run without an error or a warning (most cases): the same numbers and
        texts without the general path's tuples, counters and loops over the runs."""
        status = case.status
        group.add_run(status, case.score, run)
        if status == "failed" or status == "error":  # ("error" too: a CaseResult made by hand may say so)
            body = self._plain_failure_body(case, run)  # (no error, so no traceback: -q shows no details)
            self._note(position, _FAILURE, status, self._with_details(body, case) if self._shows_runs else body)
        elif status == "passed" or status == "xpassed":
            for e in run.expectations:
                if 0 < e.credit < 1 and run.passed:  # rare: the general path's text
                    self._note(position, _PARTIAL, status, _partial_body(case, partial_credits(case)))
                    break

    def _with_details(self, body: str, case: CaseResult) -> str:
        extra = self.details.lines(case)
        return body + "\n" + "\n".join(extra) if extra else body

    def _plain_failure_body(self, case: CaseResult, run: RunResult) -> str:
        """`_failure_body` of a case of one run without an error: its head and its failing expectations,
        made in one pass over them, the case's file shown once."""
        file = case.file
        shown = self._files.get(file)
        if shown is None:  # (a run's cases are in a few files: each shown once, not a path test a case)
            shown = self._files[file] = _shown(file)
        lines = [f"{shown}:{case.line} {case.suite}::{case.name}"]
        failed: set[int] = set()
        for e in run.expectations:
            if e.passed:
                continue
            line = e.line
            if line in failed:  # maybe one expectation twice, which `failed_expectations` lists once: rare
                return _failure_body(case)
            failed.add(line)
            turn = "" if e.turn is None else ", " + turn_name(run, e.turn)
            lines.append(f"  x expect {e.label}  ({shown if e.file == file else _shown(e.file)}:{line}{turn})")
            if detail := e.detail:
                lines.append("      " + detail.replace("\n", "\n      "))
        return "\n".join(lines)

    def summary(self) -> Summary:
        """The summary over every case added."""
        return _summary(list(self._groups.values()))

    def render(self, summary: Summary | None = None, *, colour: bool = False, elapsed_s: float | None = None,
               note: str | None = None) -> str:
        """The summary text (`format_report`'s)."""
        out = io.StringIO()
        self.write(out, summary, colour=colour, elapsed_s=elapsed_s, note=note)
        return out.getvalue()

    def write(self, out: TextIO, summary: Summary | None = None, *, colour: bool = False,
              elapsed_s: float | None = None, note: str | None = None) -> None:
        """Write `render`'s text to ``out`` a block at a time (the whole text is never held, and a stream
        without a buffer, as under PYTHONUNBUFFERED, is not written to once a listing)."""
        out = _Blocks(out)  # type: ignore[assignment]
        try:
            self._write(out, summary, colour=colour, elapsed_s=elapsed_s, note=note)
        finally:
            out.flush()

    def _write(self, out: TextIO, summary: Summary | None, *, colour: bool, elapsed_s: float | None,
               note: str | None) -> None:
        summary = summary or self.summary()
        out.write(self._table() + "\n" + _statistics(summary))
        order = self._note_order()
        for kind, title, code in ((_PARTIAL, "partial credit", "33"), (_FAILURE, "short summary", "31")):
            for i, (status, body) in enumerate(self._texts(kind, order)):
                if i == 0:
                    out.write("\n" + _rule(title, colour, code))
                out.write("\n" + _paint(_LABELS[status], _COLOURS[status], colour) + " " + body)
        for i, (_, body) in enumerate(self._texts(_WARNING, order)):
            out.write(("\nrecorded with changes (values JSON cannot hold; see `warnings` in the record):\n  "
                       if i == 0 else "\n  ") + body)
        if note:
            out.write("\n" + note)
        out.write("\n" + _final_line(summary, colour, elapsed_s) + "\n")

    def _table(self) -> str:
        groups = sorted(self._groups.items(), key=lambda item: item[1].first)
        header = [
            "suite", "file", "cases", "passed", "failed", "errors", "skipped", "xfailed", "xpassed",
            "accuracy", "score", "p50",
        ]
        rows = [_row(suite, _shown(file), _summary([group])) for (suite, file), group in groups]
        if len(groups) != 1:
            rows.append(_row("total", "", _summary([group for _, group in groups])))
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines = []
        for row in [header, *rows]:
            cells = [c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
            lines.append("  ".join(cells).rstrip())
        return "\n".join(lines)


class _Blocks:
    """A text stream's writes gathered into blocks of about `SIZE` characters."""

    SIZE = 1 << 16

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._parts: list[str] = []
        self._size = 0

    def write(self, text: str) -> None:
        self._parts.append(text)
        self._size += len(text)
        if self._size >= self.SIZE:
            self.flush()

    def flush(self) -> None:
        """Write what is gathered (the stream itself is not flushed)."""
        if self._parts:
            self._out.write("".join(self._parts))
            self._parts.clear()
            self._size = 0


_FAILURE, _PARTIAL, _WARNING = 0, 1, 2
