"""One writer a record file: a lock beside it, and only regular files written.

Two runs given the same ``--json`` file (or two ``--resume`` of one record)
would interleave their writes and leave invalid JSON, each saying "written".
So a run takes an exclusive, non-blocking `fcntl.flock` on a hidden lock file
beside the record (``.NAME.lock``) before writing anything, holds it until the
record is finished, and removes it then; the second run is refused at once,
before anything runs, with a message naming the file. The kernel drops the
lock when a process dies, so a killed run never leaves the record locked.

A record path that is a symbolic link is written through (the link's target
is replaced atomically, the link kept); a path that exists and is not a
regular file (a FIFO, a device such as ``/dev/full``, a folder) is refused: a
record is replaced by a rename, which would swap the device for a file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover (Windows: no advisory locks; the atomic writes still hold)
    fcntl = None  # type: ignore[assignment]


class RecordBusy(OSError):
    """The record file is being written by another run."""


def record_target(path: str | os.PathLike[str]) -> Path:
    """Where a record at ``path`` is really written: a symbolic link's target, resolved.

    Raises:
        OSError: ``path`` exists and is not a regular file (its message says what it is).
    """
    real = Path(os.path.realpath(path))
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        return real
    if not stat.S_ISREG(mode):
        kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "not a regular file")
        raise OSError(f"{os.fspath(path)} is {kind}, not a regular file: a record is only written to a file")
    return real


class RecordLock:
    """An exclusive lock on the record at ``path`` (held from `acquire` to `release`)."""

    def __init__(self, path: Path) -> None:
        self.path = path.with_name(f".{path.name}.lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise `RecordBusy` when another run holds it."""
        if fcntl is None:
            return
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise RecordBusy(f"another evaldsl run is writing {self.path.with_name(self.path.name[1:-5])} "
                                 "(wait for it to end, or give this run another --json file)") from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:  # not a lock file that its last holder removed while we waited to open it
                self._fd = fd
                return
            os.close(fd)

    def release(self) -> None:
        """Remove the lock file and drop the lock (removed first, so no one locks a file about to vanish)."""
        if self._fd is None:
            return
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None
