"""The record of a run in progress: a base record and an append-only journal beside it.

Why: rewriting the whole record as cases finish costs time in proportion to
the record, so a run of N cases spent O(N^2) writing it (throttled, but
still growing with the run). Instead, for a record ``RECORD.json``:

- ``RECORD.json`` is a whole record (the format `evaldsl schema --record`
  describes), written atomically once when the run starts: the cases
  already done (those of a record being resumed) and ``complete: false``.
- ``RECORD.json.journal`` gets one line per case as it finishes. Line 1 is
  a header, ``{"evaldsl_journal": 1, "meta": {...}}`` (the run's `RunMeta`,
  so a journal alone can be resumed); each further line is one
  `CaseResult` as compact JSON, the very text of that case's line in the
  record (`case_json`), which the final record copies as it is. Each line
  is flushed to the operating system when its case finishes, so killing
  the process (even ``kill -9``) loses no finished case; it is fsynced at
  most once a second (`SYNC_EVERY_S`), so a power cut loses at most about
  the last second of cases.
- At the end of the run (also on Ctrl-C and after ``-x``) the record is
  rebuilt by streaming: the head (``meta``, ``summary``), then every case
  in record order, each read from the base record or the journal by its
  byte offset, into a temporary file that is fsynced and renamed over
  ``RECORD.json``; then the journal is removed. Nothing is held in memory
  but where each case's text is.

What a kill leaves, and what `read_unfinished` (``--resume``) makes of it:
the record alone (before the journal exists, or after it was removed);
the record and a journal (cases in both: the journal's, the later, win);
a journal alone (its header gives the meta); a journal whose last line
was cut off mid-write (that line is ignored, so its case runs again); a
temporary file beside the record (ignored; the rename never happened).
`read_record`, and so `evaldsl report`, `compare`, `merge`, `rescore` and
`upload`, refuse a record with a journal beside it and say how to finish it.
"""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from ..run._record import CaseResult, RunMeta, Summary
from ._json import CASE_INDENT, case_json, record_chunks, record_head, write_temp

JOURNAL_SUFFIX = ".journal"
SYNC_EVERY_S = 1.0
"""A journal is fsynced at most this often (and when it is closed); every line is flushed at once."""
_CASES_OPEN, _CASES_EMPTY = b'  "cases": [\n', b'  "cases": []\n'
_CASE_START, _CASE_ENDS = b"    {\n", (b"    }\n", b"    },\n")  # a case over many lines (records before 2026-12)
_CASE_LINE, _LINE_ENDS = CASE_INDENT + b"{", (b"}\n", b"},\n")


def journal_path(record: str | os.PathLike[str]) -> Path:
    """Where the journal of ``record`` lives: beside it, ``RECORD.json.journal``."""
    return Path(os.fspath(record) + JOURNAL_SUFFIX)


def journal_line(case: CaseResult) -> bytes:
    """A case's journal line: its line of the record (`case_json`), not indented."""
    return case_json(case) + b"\n"


def record_text(line: bytes) -> bytes:
    """A journal line (without its newline) as the case's text inside a record (indented two levels).

    A journal written before cases were one line each (its line breaks as tabs) reads the same way:
    a tab is JSON whitespace, so that line is still one case in one line of the record.
    """
    return CASE_INDENT + line


class Journal:
    """An open journal: a header, then one line per finished case, in the OS's hands as `append` returns.

    Where the OS can reserve disk space for a file (``posix_fallocate``), the
    journal is a shared memory map of the file, grown (and its space
    reserved, so a full disk is an `OSError` here, never a crash) a few
    megabytes at a time: appending a line is a copy into the page cache, with
    no system call. That matters with sync agents: a system call lets go of
    the interpreter lock, and the agents' threads would take it at every
    line. The pages belong to the OS, so killing the process loses none of
    them. Until the journal is closed (truncated to its lines) the file ends
    in zero bytes, which readers skip like a line a kill cut short.
    Elsewhere (no ``posix_fallocate``, or a file system that refuses it) each line
    is one ``write`` call at the end of the file.
    """

    GROW = 8 << 20
    """Bytes the memory map grows by."""

    def __init__(self, path: Path, meta: RunMeta) -> None:
        self.path = path
        header = (json.dumps({"evaldsl_journal": 1, "meta": json.loads(meta.model_dump_json())}) + "\n").encode()
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self._map: Any = None
        self._mapped = 0
        self._can_map = _CAN_RESERVE
        self.size = 0
        try:
            self._write(header)
            os.fsync(self._fd)
        except BaseException:
            self.close()
            raise
        self._synced = time.monotonic()

    def append(self, line: bytes) -> int:
        """Write one line; returns its byte offset. Synced to the disk at most every `SYNC_EVERY_S` seconds."""
        offset = self.size
        end = offset + len(line)
        if end <= self._mapped:
            self._map[offset:end] = line
            self.size = end
        else:
            self._write(line)
        now = time.monotonic()
        if now - self._synced >= SYNC_EVERY_S:
            self._sync()
            self._synced = now
        return offset

    def _write(self, data: bytes) -> None:
        """Grow the map to take ``data`` (or, without one, write it)."""
        end = self.size + len(data)
        if self._can_map:
            import mmap

            mapped = (end // self.GROW + 1) * self.GROW
            try:
                os.posix_fallocate(self._fd, 0, mapped)  # ENOSPC here, not a SIGBUS at a later copy
            except OSError as exc:
                if exc.errno not in _NO_RESERVE:
                    raise
                self._unmap()  # a file system that cannot reserve space: plain writes from here on
                self._write(data)
                return
            if self._map is not None:
                self._map.close()
            self._map, self._mapped = mmap.mmap(self._fd, mapped), mapped
            self._map[self.size:end] = data
        else:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
        self.size = end

    def _unmap(self) -> None:
        """Leave the memory map for plain writes: the file cut back to its lines."""
        self._can_map = False
        if self._map is not None:
            self._map.flush()
            self._map.close()
            self._map, self._mapped = None, 0
        os.ftruncate(self._fd, self.size)
        os.lseek(self._fd, self.size, os.SEEK_SET)  # the map's copies never moved the file's offset

    def _sync(self) -> None:
        if self._map is not None:
            self._map.flush()
        os.fsync(self._fd)

    def close(self) -> None:
        """Sync, cut the file to its lines, close (errors ignored: the journal is only a safety copy by then)."""
        if self._fd < 0:
            return
        try:
            if self._map is not None:
                self._map.flush()
                self._map.close()
                self._map, self._mapped = None, 0
            os.ftruncate(self._fd, self.size)
            os.fsync(self._fd)
        except (OSError, ValueError):
            pass
        try:
            os.close(self._fd)
        except OSError:
            pass
        self._fd = -1


_CAN_RESERVE = hasattr(os, "posix_fallocate")
_NO_RESERVE = {getattr(errno, name) for name in ("EOPNOTSUPP", "ENOTSUP", "EINVAL", "ENOSYS") if hasattr(errno, name)}
"""`posix_fallocate` errors that mean the file system cannot reserve space (not that the disk is full)."""


def write_streamed(folder: Path, name: str, meta: RunMeta, summary: Summary,
                   texts: Iterable[bytes]) -> tuple[str, list[tuple[int, int]]]:
    """A temporary file in ``folder`` holding the record whose cases are ``texts`` (each a case's
    record text), fsynced; its path and the byte span of each case in it.

    The bytes are those of `record_json` of the same report; the caller renames the file into place.
    """
    spans: list[tuple[int, int]] = []

    def fill(fh: IO[bytes]) -> None:
        buffered = bytearray()
        offset = 0
        for before, text in record_chunks(record_head(meta, summary), texts):
            buffered += before
            if text:
                spans.append((offset + len(buffered), len(text)))
                buffered += text
            if len(buffered) > 1 << 20:
                fh.write(buffered)
                offset += len(buffered)
                buffered.clear()
        fh.write(buffered)

    return write_temp(folder, name, fill), spans


def remove(path: Path) -> None:
    """Delete ``path`` if it is there."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def read_span(handles: dict[Path, Any], path: Path, offset: int, length: int) -> bytes:
    """``length`` bytes at ``offset`` of ``path`` (``handles`` keeps the files open)."""
    fh = handles.get(path)
    if fh is None:
        fh = handles[path] = open(path, "rb")  # noqa: SIM115 (closed by the caller)
    fh.seek(offset)
    data: bytes = fh.read(length)
    if len(data) != length:
        raise OSError(f"{path} is shorter than it was when the run wrote it")
    return data
