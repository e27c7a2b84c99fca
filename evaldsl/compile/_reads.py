"""Which files a compile read, and what each held: the suite cache's dependencies.

The compiler calls `note_read` just before it reads a `use` file, an
`examples from` file or a world's file. When a `recording` is active (the
suite cache compiling a file), the path and a digest of its bytes are kept;
otherwise the call costs one context-variable lookup. The digest is taken
before the compiler's own read, so a file changed in between is seen as
changed the next time (never a stale entry with the new file's digest).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

Read = tuple[str, "str | None"]
"""A file read: its resolved path, and its digest (None: it could not be read then)."""

_ACTIVE: ContextVar[list[Read] | None] = ContextVar("evaldsl_reads", default=None)


def digest_bytes(data: bytes) -> str:
    """The digest the cache keeps of a file's bytes."""
    return hashlib.blake2b(data, digest_size=20).hexdigest()


def digest_file(path: str | Path) -> str | None:
    """The digest of the file at ``path`` now; None when it is not a regular file that can be read."""
    try:
        with open(path, "rb") as handle:
            return digest_bytes(handle.read())
    except (OSError, ValueError):
        return None


def note_read(path: str | Path) -> None:
    """Record that the compile is about to read ``path`` (a no-op unless the cache is recording)."""
    reads = _ACTIVE.get()
    if reads is not None:
        resolved = Path(path).resolve()
        reads.append((str(resolved), digest_file(resolved)))


@contextmanager
def recording() -> Iterator[list[Read]]:
    """The files read while the block runs, in order (each once)."""
    reads: list[Read] = []
    token = _ACTIVE.set(reads)
    try:
        yield reads
    finally:
        _ACTIVE.reset(token)
