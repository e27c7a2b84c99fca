"""The JSON run record on disk: atomic, incremental, never clobbered.

Every write goes to a temporary file in the target's own directory, is
flushed to disk, then renamed over the target with `os.replace`, which is
atomic on POSIX and Windows: a reader (or a crash) sees the old record or
the new one, never half of one. `evaldsl run` rewrites its record as cases
finish, so an interrupted run keeps every finished case.

Rewriting the whole record after each case costs O(cases) per write, so a
run of many fast cases would spend most of its time writing. `RecordWriter`
therefore writes after a finished case only when the time since the last
write is at least ten times what that write took: with real agents (seconds
per case) that is after every case; with 10,000 instant cases the writing
stays within about a tenth of the run. A periodic `flush_if_due()` and a
final write (also on Ctrl-C) put every remaining case on disk.

A record that cannot be written (a folder where the file should be, a full
disk, no permission) raises `RecordWriteError` naming the file, or, when the
writer is given ``on_error``, is reported there once and retried at the next
write: a run keeps going, and its report is not lost with the file.

`--out DIR` names records ``<model>_<YYYYmmdd-HHMMSS>.json``. The name is
claimed with a hard link (or ``O_EXCL``), which fails if the file exists, so
two runs started in the same second get ``..._2.json`` and ``..._3.json``
rather than overwriting each other.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..run._record import EvalReport

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class RecordError(ValueError):
    """A record file that cannot be read: missing, not JSON, or not a record."""


class RecordWriteError(OSError):
    """A record file that cannot be written; the message names it and says why."""

    def __init__(self, path: str | os.PathLike[str], cause: OSError) -> None:
        self.path = Path(path)
        self.cause = cause
        super().__init__(f"cannot write the record to {os.fspath(path)}: {cause.strerror or cause}")


def read_record(path: str | os.PathLike[str]) -> EvalReport:
    """Load a JSON run record.

    Raises:
        RecordError: naming the file and what is wrong with it.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"cannot read record {os.fspath(path)}: {exc.strerror or exc}") from None
    try:
        return EvalReport.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "the file"
        raise RecordError(f"{os.fspath(path)} is not an evaldsl run record ({where}: {first['msg']})") from None


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` with ``text`` atomically (temp file in the same directory + rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _write_temp(target.parent, target.name, text)
    try:
        os.replace(tmp, target)
    except BaseException:
        _unlink(tmp)
        raise


def claim_unique(directory: str | os.PathLike[str], stem: str, text: str) -> Path:
    """Create ``directory/stem.json`` (or ``stem_2.json``, ...) holding ``text``, never overwriting."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = _write_temp(folder, stem, text)
    try:
        for n in range(1, 10_000):
            candidate = folder / (f"{stem}.json" if n == 1 else f"{stem}_{n}.json")
            if _claim(tmp, candidate):
                return candidate
        raise FileExistsError(f"no free record name for {stem} in {folder}")
    finally:
        _unlink(tmp)


def record_stem(model: str, when: datetime) -> str:
    """``<model>_<YYYYmmdd-HHMMSS>`` with the model name made safe for any file system."""
    safe = _UNSAFE.sub("_", model).strip("._") or "agent"
    return f"{safe}_{when.strftime('%Y%m%d-%H%M%S')}"


class RecordWriter:
    """Keeps a run's record files up to date as cases finish.

    Args:
        build: makes the current (partial) report when a write is due.
        paths: files to (re)write, e.g. ``--json FILE`` and ``--resume FILE``.
        out_dir: a directory in which to claim a fresh ``<stem>.json``.
        stem: the name to claim there (see `record_stem`).
        on_error: called with the `RecordWriteError` when a file that was
            written fine (or not yet tried) fails; the other files are still
            written, and `failed` holds every file whose last write failed.
            Without it, a failure raises the `RecordWriteError`.
    """

    def __init__(
        self,
        build: Callable[[], EvalReport],
        paths: Sequence[str | os.PathLike[str]] = (),
        *,
        out_dir: str | os.PathLike[str] | None = None,
        stem: str = "agent",
        on_error: Callable[[RecordWriteError], None] | None = None,
    ) -> None:
        self._build = build
        self._paths = [Path(p) for p in paths]
        self._out_dir = Path(out_dir) if out_dir is not None else None
        self._stem = stem
        self.on_error = on_error
        self.out_path: Path | None = None
        self.failed: dict[Path, RecordWriteError] = {}  # latest write failed (an --out dir by its name)
        self._dirty = False
        self._last_end = 0.0
        self._last_cost = 0.0

    @property
    def paths(self) -> list[Path]:
        """Every file this writer keeps (the claimed --out file once claimed)."""
        return self._paths + ([self.out_path] if self.out_path else [])

    @property
    def written(self) -> list[Path]:
        """The files whose latest write succeeded."""
        return [p for p in self.paths if p not in self.failed]

    def touch(self) -> None:
        """Note that the report changed; writes now if a write is due."""
        self._dirty = True
        self.flush_if_due()

    def flush_if_due(self) -> None:
        """Write if something changed and the throttle allows it."""
        if self._dirty and time.monotonic() - self._last_end >= 10 * self._last_cost:
            self.write()

    def write(self, report: EvalReport | None = None) -> None:
        """Write every file now (``report``, or a freshly built one)."""
        start = time.monotonic()
        text = (report or self._build()).model_dump_json(indent=2)
        for path in self._paths:
            self._attempt(path, write_atomic, path, text)
        if self._out_dir is not None:
            if self.out_path is None:
                self.out_path = self._attempt(self._out_dir, claim_unique, self._out_dir, self._stem, text)
            else:
                self._attempt(self.out_path, write_atomic, self.out_path, text)
        self._dirty = False
        self._last_end = time.monotonic()
        self._last_cost = self._last_end - start


    def _attempt(self, target: Path, write: Callable[..., Any], *args: Any) -> Any:
        """``write(*args)``, with a failure raised, or noted and reported once."""
        try:
            result = write(*args)
        except OSError as exc:
            error = RecordWriteError(target, exc)
            if self.on_error is None:
                raise error from exc
            if target not in self.failed:
                self.on_error(error)
            self.failed[target] = error
            return None
        self.failed.pop(target, None)
        return result


def _write_temp(folder: Path, name: str, text: str) -> str:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _claim(tmp: str, candidate: Path) -> bool:
    try:
        os.link(tmp, candidate)  # atomic, and fails when the name exists
        return True
    except FileExistsError:
        return False
    except OSError:  # no hard links here: claim the name exclusively, then fill it atomically
        try:
            fd = os.open(candidate, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        os.close(fd)
        os.replace(_write_temp(candidate.parent, candidate.name, Path(tmp).read_text("utf-8")), candidate)
        return True


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
