"""Reading back what a run left on disk (``--resume``): a record, its journal, or both.

What a kill leaves, and what `read_unfinished` makes of it, is in `_journal`'s docstring; this module
only reads (`_journal` writes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..run._record import READABLE_SCHEMA_VERSIONS, CaseResult, RunMeta
from ._journal import (
    _CASE_ENDS,
    _CASE_LINE,
    _CASE_START,
    _CASES_EMPTY,
    _CASES_OPEN,
    _LINE_ENDS,
    journal_path,
    read_span,
)
from ._json import RecordError, read_record

Span = tuple[int, int, int]
"""Where a case's text is: (source number, byte offset, byte length)."""


class Unfinished:
    """What is on disk for a record: its meta and, for each case, where its text is.

    ``sources`` are the files the spans point into (0: the record, 1: its
    journal). ``cases`` holds (case key, span) in the order found: the
    record's cases first, then the journal's, the earlier of two entries for
    one case dropped. A record not in the layout evaldsl writes is read whole,
    and its cases are kept themselves in place of a span. Only the spans are
    kept, so resuming a large record holds no more than they; `results`
    reads the cases back, one at a time.
    """

    def __init__(self, meta: RunMeta, sources: list[Path]) -> None:
        self.meta = meta
        self.sources = sources
        self.cases: list[tuple[tuple[str, str], Span | CaseResult]] = []
        self.journal_found = False

    def results(self) -> Iterator[CaseResult]:
        """Every case, in the order of ``cases``, read back from disk."""
        handles: dict[Path, Any] = {}
        try:
            for _, where in self.cases:
                if isinstance(where, CaseResult):
                    yield where
                else:
                    source, offset, length = where
                    yield CaseResult.model_validate_json(read_span(handles, self.sources[source], offset, length))
        finally:
            for fh in handles.values():
                fh.close()


def read_unfinished(path: str | os.PathLike[str]) -> Unfinished:
    """Read a record and its journal, whichever of them exists (see the module docstring).

    Raises:
        RecordError: neither can be read, naming the file and what is wrong.
    """
    record, journal = Path(path), journal_path(path)
    found: Unfinished | None = None
    if record.exists():
        found = _read_base(record)
    jmeta = _journal_meta(journal) if journal.exists() else None
    if found is None:
        if jmeta is None:
            if journal.exists():
                raise RecordError(f"cannot read record {os.fspath(path)}: there is only its journal "
                                  f"{journal}, and its first line is not a journal header")
            raise RecordError(f"cannot read record {os.fspath(path)}: No such file or directory")
        found = Unfinished(jmeta, [record, journal])
    if jmeta is not None:
        found.journal_found = True
        found.cases.extend(_journal_cases(journal))
    found.cases = _last_of_each(found.cases)
    return found


def _read_base(record: Path) -> Unfinished:
    """The record's meta and cases, by span when it is in evaldsl's own layout, else read whole."""
    spans = _case_spans(record)
    if spans is None:
        report = read_record(record, journal_ok=True)
        found = Unfinished(report.meta, [record, journal_path(record)])
        found.cases = [(_key(case), case) for case in report.cases]
        return found
    head, offsets = spans
    where = os.fspath(record)
    try:
        data = json.loads(head)
        if data.get("schema_version") not in READABLE_SCHEMA_VERSIONS:
            raise ValueError(f"schema_version {data.get('schema_version')!r}")
        meta = RunMeta.model_validate(data.get("meta", {}))
    except ValueError as exc:  # JSONDecodeError and ValidationError are ValueErrors
        raise RecordError(f"{where} is not an evaldsl run record ({_first_line(exc)})") from None
    found = Unfinished(meta, [record, journal_path(record)])
    with open(record, "rb") as fh:
        for offset, length in offsets:
            fh.seek(offset)
            try:
                case = CaseResult.model_validate_json(fh.read(length))
            except ValueError as exc:
                raise RecordError(f"{where} is not an evaldsl run record (a case at byte {offset}: "
                                  f"{_first_line(exc)})") from None
            found.cases.append((_key(case), (0, offset, length)))
    return found


def _case_spans(record: Path) -> tuple[bytes, list[tuple[int, int]]] | None:
    """(the record's head as JSON without its cases, each case's byte span), or None when the file
    is not laid out as `record_json` lays it out: a case a line, or (a record written before that)
    each case indented over many lines as `EvalReport.model_dump_json(indent=2)` lays it out."""
    head: list[bytes] = []
    spans: list[tuple[int, int]] = []
    offset, start = 0, -1
    state = "head"
    with open(record, "rb") as fh:
        for line in fh:
            if state == "head":
                if line in (_CASES_OPEN, _CASES_EMPTY):
                    state = "cases" if line == _CASES_OPEN else "end"
                    head.append(_CASES_EMPTY + b"}")
                else:
                    head.append(line)
            elif state == "cases":
                if start < 0:
                    if line == b"  ]\n":
                        state = "end"
                    elif line.startswith(_CASE_LINE) and line.endswith(_LINE_ENDS):  # a case on its line
                        spans.append((offset, len(line) - (2 if line.endswith(b",\n") else 1)))
                    elif line == _CASE_START:
                        start = offset
                    else:
                        return None
                elif line in _CASE_ENDS:
                    spans.append((start, offset + 5 - start))  # up to and with the "}"
                    start = -1
            elif line.strip() not in (b"}", b""):
                return None
            offset += len(line)
    return (b"".join(head), spans) if state == "end" else None


def _journal_meta(journal: Path) -> RunMeta | None:
    """The meta in a journal's header line; None when the header is missing or cut off."""
    try:
        with open(journal, "rb") as fh:
            first = fh.readline()
        if not first.endswith(b"\n"):
            return None
        data = json.loads(first)
        if not isinstance(data, dict) or data.get("evaldsl_journal") != 1:
            return None
        return RunMeta.model_validate(data["meta"])
    except (OSError, ValueError, KeyError):
        return None


def _journal_cases(journal: Path) -> Iterator[tuple[tuple[str, str], Span]]:
    """Each whole case line of a journal; a line cut off by a kill (no newline, or not JSON) is skipped."""
    with open(journal, "rb") as fh:
        offset = len(fh.readline())
        for line in fh:
            length = len(line)
            if line.endswith(b"\n"):
                try:
                    case = CaseResult.model_validate_json(line)
                except ValueError:
                    pass  # a line a crash cut short and a later run appended to: its case runs again
                else:
                    yield _key(case), (1, offset, length - 1)
            offset += length


def _key(case: CaseResult) -> tuple[str, str]:
    from ..run._select import case_key

    return case_key(case.file, case.name)


def _last_of_each(cases: Iterable[tuple[tuple[str, str], Any]]) -> list[tuple[tuple[str, str], Any]]:
    latest: dict[tuple[str, str], Any] = {}
    for key, where in cases:
        latest.pop(key, None)  # a later entry moves to the end: first-seen order is not needed
        latest[key] = where
    return list(latest.items())


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


# ---- writing: journals and the streamed record ------------------------------------------------------
