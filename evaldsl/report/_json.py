"""The JSON run record on disk: atomic, incremental, never clobbered.

Every write goes to a temporary file in the target's own directory, is
flushed to disk, then renamed over the target with `os.replace`, which is
atomic on POSIX and Windows: a reader (or a crash) sees the old record or
the new one, never half of one. While `evaldsl run` runs, finished cases go
to a journal beside the record, not into it (`_journal`, `_keeper`).

A record that cannot be written (a folder where the file should be, a full
disk, no permission) raises `RecordWriteError` naming the file.

`--out DIR` names records ``<model>_<YYYYmmdd-HHMMSS>.json``. The name is
claimed with a hard link (or ``O_EXCL``), which fails if the file exists, so
two runs started in the same second get ``..._2.json`` and ``..._3.json``
rather than overwriting each other.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from .._files import write_temp
from ..run._record import CaseResult, EvalReport, RunMeta, Summary

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class RecordError(ValueError):
    """A record file that cannot be read: missing, not JSON, or not a record."""


class RecordWriteError(OSError):
    """A record file that cannot be written; the message names it and says why."""

    def __init__(self, path: str | os.PathLike[str], cause: OSError) -> None:
        self.path = Path(path)
        self.cause = cause
        super().__init__(f"cannot write the record to {os.fspath(path)}: {cause.strerror or cause}")


def read_record(path: str | os.PathLike[str], *, journal_ok: bool = False) -> EvalReport:
    """Load a JSON run record.

    A record with a journal beside it (``RECORD.json.journal``: a run still
    going, or one killed before it finished) is refused, since the record
    alone lacks the journal's cases; ``evaldsl run --resume RECORD``
    finishes it. ``journal_ok`` reads the record file regardless.

    Raises:
        RecordError: naming the file and what is wrong with it.
    """
    journal = Path(os.fspath(path) + ".journal")
    if not journal_ok and journal.exists():
        raise RecordError(
            f"{os.fspath(path)} is not finished: its journal {journal} holds cases the record does not "
            "(a run still going, or one stopped before it could finish the record); finish it with "
            f"`evaldsl run ... --resume {os.fspath(path)}` (the same suites and agent)")
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


# ---- the record's layout: its head indented, then one line a case -------------------------------------

CASE_INDENT = b"    "
"""What comes before a case's JSON on its line of the record."""
_CASE_JSON = CaseResult.__pydantic_serializer__.to_json


def case_json(case: CaseResult) -> bytes:
    """A case as its line of the record shows it: compact JSON, one line (a string's line breaks are escaped)."""
    return _CASE_JSON(case)


def record_head(meta: RunMeta, summary: Summary) -> bytes:
    """The record of no case: ``schema_version``, ``meta`` and ``summary``, indented by two spaces."""
    head = EvalReport(meta=meta, summary=summary).model_dump_json(indent=2).encode("utf-8")
    assert head.endswith(b'"cases": []\n}')
    return head


def record_chunks(head: bytes, texts: Iterable[bytes]) -> Iterator[tuple[bytes, bytes]]:
    """A record's bytes, as (what comes before a case, the case's text) pairs, then (the rest, ``b""``).

    ``head`` is `record_head`; each text is a case's line without its line break (`CASE_INDENT`
    and `case_json`).
    """
    before, some = head[:-4] + b"[\n", False
    for text in texts:
        yield before, text
        before, some = b",\n", True
    yield (b"\n  ]\n}" if some else head), b""


def record_json(report: EvalReport) -> str:
    """The text of a record file: the head indented, then each case compact on its own line.

    The same JSON value as ``report.model_dump_json()``; a case a line keeps a large record small and
    lets line tools (``grep``, ``wc -l``, a diff) see one case a line, and ``jq .`` shows it indented.
    """
    texts = (CASE_INDENT + case_json(case) for case in report.cases)
    return b"".join(b"".join(pair) for pair in record_chunks(record_head(report.meta, report.summary), texts)
                    ).decode("utf-8")


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` with ``text`` atomically (temp file in the same directory + rename); through a
    symbolic link to its target; an OSError for a path that is not a regular file (`record_target`)."""
    from ._lock import record_target

    real = record_target(path)
    target = real if os.path.islink(path) else Path(path)
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
        return claim_from(tmp, folder, stem)
    finally:
        _unlink(tmp)


def claim_from(tmp: str, folder: Path, stem: str) -> Path:
    """Give the written temporary file ``tmp`` the first free name ``folder/stem.json``, ``stem_2.json``, ...
    (``tmp`` is left for the caller to remove)."""
    for n in range(1, 10_000):
        candidate = folder / (f"{stem}.json" if n == 1 else f"{stem}_{n}.json")
        if _claim(tmp, candidate):
            return candidate
    raise FileExistsError(f"no free record name for {stem} in {folder}")


def record_stem(model: str, when: datetime) -> str:
    """``<model>_<YYYYmmdd-HHMMSS>`` with the model name made safe for any file system."""
    safe = _UNSAFE.sub("_", model).strip("._") or "agent"
    return f"{safe}_{when.strftime('%Y%m%d-%H%M%S')}"


def _write_temp(folder: Path, name: str, text: str) -> str:
    return write_temp(folder, name, lambda fh: fh.write(text.encode("utf-8")))


def copy_bytes(source: IO[bytes], target: IO[bytes]) -> None:
    """Every byte of the file ``source`` (from its start) into ``target``, a new file neither has
    written to: by the kernel (`os.sendfile`) where it can, else through this process a MB at a time."""
    import errno
    import shutil

    sent = 0
    try:
        size = os.fstat(source.fileno()).st_size
        while sent < size:
            step = os.sendfile(target.fileno(), source.fileno(), sent, size - sent)
            if step == 0:  # the file is shorter than it was: copy what is there the other way
                break
            sent += step
        else:
            target.seek(sent)
            return
    except AttributeError:  # no os.sendfile on this system
        pass
    except OSError as exc:
        if sent or exc.errno not in {errno.EINVAL, errno.ENOSYS, getattr(errno, "EOPNOTSUPP", -1)}:
            raise  # a real error (a full disk), not a file system that cannot
    source.seek(sent)
    target.seek(sent)
    shutil.copyfileobj(source, target, 1 << 20)


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
