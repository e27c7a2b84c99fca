"""`RecordKeeper`: the records of one `evaldsl run`, kept on disk as cases finish, in bounded memory.

The layout on disk (a base record and a journal beside it) is `_journal`'s.
The keeper holds, for every finished case, only where its text is: a byte
span in the record or the journal of its first record file (the
*primary*), or, when no journal could take it, the `CaseResult` itself.
Everything a run shows at the end is made from what the caller kept as
cases finished (`report._terminal.Digest`), so a run of 100,000 cases does
not hold 100,000 results; `report` reads them all back, for the outputs
that need every case (JUnit, Markdown, the dashboard, an upload).

Record files: ``--json`` and ``--resume`` paths, the name claimed in an
``--out`` folder, and optionally ``.evaldsl/last.json``. Each has its own
journal, so each can be resumed after a kill. A file that cannot be written
at the start raises `RecordWriteError` (nothing has run yet); later, the
failure is reported once through ``on_error``, the run goes on, that file's
journal is given up and its record tried again at the end (cases the
primary journal could not take stay in memory). An *optional* file
(``.evaldsl/last.json``) never raises and is not counted as failed.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..run._record import CaseResult, EvalReport, RunMeta, Summary
from ..run._select import case_key
from ._case_keys import CaseKeys, Key
from ._fold import JournalRun
from ._journal import Journal, journal_line, journal_path, read_span, record_text, remove, write_streamed
from ._json import CASE_INDENT, RecordWriteError, case_json, claim_from
from ._lock import RecordLock, record_target
from ._unfinished import Unfinished

_UNDONE, _HELD = -1, -2  # a case's source when it has no result yet, and when its result is held in memory


class _Target:
    __slots__ = ("path", "out_dir", "stem", "optional", "journal", "failed", "lock")

    def __init__(self, path: Path | None, *, out_dir: Path | None = None, stem: str = "", optional: bool = False):
        self.path = path
        self.out_dir = out_dir
        self.stem = stem
        self.optional = optional
        self.journal: Journal | None = None
        self.failed: RecordWriteError | None = None
        self.lock: RecordLock | None = None

    @property
    def name(self) -> Path:
        return self.path if self.path is not None else (self.out_dir or Path(".")) / f"{self.stem}.json"


class RecordKeeper:
    """Keeps a run's record files on disk as cases finish (see the module docstring).

    Args:
        keys: the run's cases (`case_key`), in record order.
        meta: the run's metadata (`meta` on the keeper; the caller may update it).
        paths: record files (``--json``, ``--resume``).
        out_dir, stem: a folder in which to claim ``stem.json`` (``--out``).
        optional: a record file that is kept when it can be, silently otherwise.
        on_error: told of each file that fails after the start (once per file).
    """

    def __init__(
        self,
        keys: Iterable[Key],
        meta: RunMeta,
        paths: Sequence[str | os.PathLike[str]] = (),
        *,
        out_dir: str | os.PathLike[str] | None = None,
        stem: str = "agent",
        optional: str | os.PathLike[str] | None = None,
        on_error: Callable[[RecordWriteError], None] | None = None,
    ) -> None:
        self.meta = meta
        self.on_error = on_error
        self._keys = CaseKeys()
        # where each case's text is, by position: a source (an index into `_sources`, or _UNDONE, _HELD),
        # a byte offset and a length; the results no journal could take, by position
        self._source, self._offset, self._length = array("h"), array("q"), array("q")
        self._held: dict[int, CaseResult] = {}
        self._done = 0
        for key in keys:
            self._place(key)
        self._targets = [_Target(Path(p)) for p in paths]
        if out_dir is not None:
            self._targets.append(_Target(None, out_dir=Path(out_dir), stem=stem))
        if optional is not None:
            self._targets.append(_Target(Path(optional), optional=True))
        self._sources: list[Path] = []
        self._span_journal: Journal | None = None
        self._next = 0  # where `add` looks first

    # ---- what is known -------------------------------------------------------------------------

    def position(self, case: CaseResult) -> int:
        """The case's place in the record (cases not loaded now go after the loaded ones)."""
        return self._place(case_key(case.file, case.name))

    def is_done(self, file: str, name: str) -> bool:
        """True when the case has a result (from this run or a resumed record)."""
        position = self._keys.find(case_key(file, name))
        return position >= 0 and self._source[position] != _UNDONE

    def key(self, position: int) -> Key:
        """The `case_key` of the case at ``position``."""
        return self._keys.key(position)

    def __len__(self) -> int:
        return self._done

    @property
    def written(self) -> list[Path]:
        """The (not optional) record files whose latest write succeeded."""
        return [t.name for t in self._targets if not t.optional and t.failed is None]

    @property
    def failed(self) -> dict[Path, RecordWriteError]:
        """The (not optional) record files whose latest write failed, with why."""
        return {t.name: t.failed for t in self._targets if not t.optional and t.failed is not None}

    @property
    def optional_kept(self) -> bool:
        """True when there is an optional record file and its latest write succeeded."""
        return any(t.optional and t.failed is None and t.path is not None for t in self._targets)

    def save_copy(self, path: Path, summary: Summary) -> None:
        """Write the record, as it stands, to ``path`` too (atomically; the keeper's files are unchanged)."""
        handles: dict[Path, Any] = {}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp, _ = write_streamed(path.parent, path.name, self.meta, summary, self._texts(handles))
        finally:
            for fh in handles.values():
                fh.close()
        try:
            os.replace(tmp, path)
        finally:
            remove(Path(tmp))

    # ---- the run -------------------------------------------------------------------------------------

    def resume(self, found: Unfinished) -> None:
        """Take the cases of a record (and journal) being resumed as done."""
        first = len(self._sources)
        self._sources.extend(found.sources)
        for key, where in found.cases:
            position = self._place(key)
            if isinstance(where, CaseResult):
                self._set(position, _HELD, 0, 0, where)
            else:
                self._set(position, first + where[0], where[1], where[2])

    def start(self, summary: Summary) -> None:
        """Write every record file (the cases done so far, not complete) and open their journals.

        Raises:
            RecordWriteError: a (not optional) file could not be written.
        """
        meta = self.meta.model_copy(update={"complete": False})
        self._lock_all()
        self._write_all(meta, summary, raising=True)
        for target in self._targets:
            if target.failed is None and target.path is not None:
                try:
                    target.journal = Journal(journal_path(target.path), meta)
                except OSError as exc:
                    self._fail(target, exc, raising=not target.optional)
        tail = self._journal_source()  # the journal that cases' spans point into (the primary's)
        self._span_journal = next((t.journal for t in self._targets
                                   if t.journal is not None and t.journal.path == tail), None)

    def add(self, case: CaseResult) -> int:
        """Record a finished case: a line in every journal, flushed; returns its `position`."""
        key = case_key(case.file, case.name)
        position = self._next  # cases mostly finish in record order: try the place after the last first
        if not self._keys.holds(position, key):
            position = self._place(key)
        self._next = position + 1
        line = journal_line(case)
        where: tuple[int, int, int] | None = None
        for target in self._targets:
            journal = target.journal
            if journal is None:
                continue
            try:
                offset = journal.append(line)
            except (OSError, ValueError) as exc:
                journal.close()
                target.journal = None
                self._fail(target, exc if isinstance(exc, OSError) else OSError(str(exc)))
                continue
            if where is None and journal is self._span_journal:
                where = (len(self._sources) - 1, offset, len(line) - 1)
        if where is None:
            self._set(position, _HELD, 0, 0, case)
        else:
            self._set(position, *where)
        return position

    def finish(self, summary: Summary) -> None:
        """Rebuild every record file from the record and journal (streamed), then remove the journals.

        ``meta`` (``complete``, ``finished_at``) is the caller's to set first.
        A file that fails keeps its journal (and is reported); the others are done.
        """
        for target in self._targets:
            if target.journal is not None:
                target.journal.close()
        self._write_all(self.meta, summary, raising=False)
        for target in self._targets:
            target.journal = None
            if target.lock is not None:
                target.lock.release()
                target.lock = None
        self._span_journal = None

    # ---- reading back ------------------------------------------------------------------------------

    def cases(self) -> Iterator[CaseResult]:
        """Every finished case, in record order, read back one at a time."""
        handles: dict[Path, Any] = {}
        try:
            for position, source in enumerate(self._source):
                if source == _HELD:
                    yield self._held[position]
                elif source != _UNDONE:
                    text = read_span(handles, self._sources[source], self._offset[position], self._length[position])
                    yield CaseResult.model_validate_json(text)
        finally:
            for fh in handles.values():
                fh.close()

    def report(self, summary: Summary) -> EvalReport:
        """The whole record, every case read back (for outputs that need them all)."""
        return EvalReport(meta=self.meta.model_copy(), summary=summary, cases=list(self.cases()))

    # ---- inside --------------------------------------------------------------------------------------

    def _lock_all(self) -> None:
        """Resolve each record file (through a symbolic link; refusing what is not a regular file) and
        lock it against a second run; a file that cannot be had raises (an optional one is dropped)."""
        for target in self._targets:
            if target.path is None:
                continue  # a name claimed in an --out folder: never another run's
            try:
                real = record_target(target.path)
                if target.path.is_symlink():  # written through: the link stays, its target is replaced
                    target.path = real
                target.path.parent.mkdir(parents=True, exist_ok=True)
                lock = RecordLock(target.path)
                lock.acquire()
            except OSError as exc:
                if target.optional:
                    target.failed = RecordWriteError(target.name, exc)
                    continue
                for held in self._targets:
                    if held.lock is not None:
                        held.lock.release()
                        held.lock = None
                raise RecordWriteError(target.name, exc) from exc
            target.lock = lock
        self._targets = [t for t in self._targets if not (t.optional and t.failed is not None)]

    def _place(self, key: Key) -> int:
        position = self._keys.place(key)
        if position == len(self._source):
            self._source.append(_UNDONE)
            self._offset.append(0)
            self._length.append(0)
        return position

    def _set(self, position: int, source: int, offset: int, length: int, held: CaseResult | None = None) -> None:
        """Where the case at ``position`` is now: a span of a source, or (_HELD) ``held`` itself."""
        if self._source[position] == _UNDONE:
            self._done += 1
        elif self._source[position] == _HELD:
            del self._held[position]
        self._source[position], self._offset[position], self._length[position] = source, offset, length
        if held is not None:
            self._held[position] = held

    def _journal_source(self) -> Path | None:
        return self._sources[-1] if self._sources and self._sources[-1].name.endswith(".journal") else None

    def _texts(self, handles: dict[Path, Any]) -> Iterator[bytes]:
        for position, source in enumerate(self._source):
            if source == _HELD:
                held = self._held[position]
                yield CASE_INDENT + case_json(held)
            elif source != _UNDONE:
                path = self._sources[source]
                text = read_span(handles, path, self._offset[position], self._length[position])
                yield record_text(text) if path.name.endswith(".journal") else text

    def _write_all(self, meta: RunMeta, summary: Summary, *, raising: bool) -> None:
        """Write every file to a temporary file, then rename them all into place, then re-point
        the spans at the primary's new record and remove the journals now folded in."""
        handles: dict[Path, Any] = {}
        written: list[tuple[_Target, str, list[tuple[int, int]] | int]] = []
        journal = self._journal_source()  # every case a line of it, in order: the record made in one piece
        whole = JournalRun.find(journal, len(self._sources) - 1, self._source, self._offset, self._length)
        try:
            for target in self._targets:
                folder = target.path.parent if target.path is not None else target.out_dir
                assert folder is not None
                try:
                    folder.mkdir(parents=True, exist_ok=True)
                    tmp, spans = (whole.write(folder, target.name.name, meta, summary) if whole is not None else
                                  write_streamed(folder, target.name.name, meta, summary, self._texts(handles)))
                except OSError as exc:
                    self._fail(target, exc, raising=raising and not target.optional)
                    continue
                written.append((target, tmp, spans))
        except BaseException:
            for _, tmp, _ in written:
                remove(Path(tmp))
            raise
        finally:
            for fh in handles.values():
                fh.close()
        primary: tuple[Path, list[tuple[int, int]] | int] | None = None
        for target, tmp, spans in written:
            try:
                if target.path is None:
                    assert target.out_dir is not None
                    target.path = claim_from(tmp, target.out_dir, target.stem)
                else:
                    os.replace(tmp, target.path)
            except OSError as exc:
                self._fail(target, exc, raising=raising and not target.optional)
                continue
            finally:
                remove(Path(tmp))
            target.failed = None
            remove(journal_path(target.path))
            if primary is None:
                primary = (target.path, spans)
        if primary is not None:
            self._repoint(*primary, whole)

    def _repoint(self, record: Path, spans: list[tuple[int, int]] | int, whole: JournalRun | None) -> None:
        """Every case now lives in ``record`` (``spans`` in record order, or, for a record made in one piece
        from ``whole``, where its first case begins); the journal comes next."""
        self._sources = [record, journal_path(record)]
        if isinstance(spans, int):
            assert whole is not None
            self._source = array("h", bytes(2 * len(self._source)))  # source 0, the record, for every case
            self._offset, self._length = whole.spans(spans)
            return
        done = (position for position, source in enumerate(self._source) if source != _UNDONE)
        for position, (offset, length) in zip(done, spans):
            self._set(position, 0, offset, length)

    def _fail(self, target: _Target, exc: OSError, *, raising: bool = False) -> None:
        error = RecordWriteError(target.name, exc)
        if raising:
            raise error from exc
        if target.optional:
            target.failed = error
            return
        if target.failed is None and self.on_error is not None:
            self.on_error(error)
        target.failed = error
