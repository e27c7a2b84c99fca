"""The on-disk response cache: re-running a suite costs no calls.

An entry is keyed by a SHA-256 of the whole request as the backend would
send it (provider, base URL, model, messages, tools, sampling, response
schema) plus the repeat index, so ``repeat 5`` makes five distinct calls
the first time and none the next. Never part of the key or the entry: the
API key or any header.

Entries are one JSON file each, ``DIR/ab/abcdef....json``, holding the
API's reply body as received (the backend parses it again on a hit, so a
fix in parsing applies to cached replies too). Writes go to a temporary
file in the same directory and are moved in place with `os.replace`, so
a concurrent reader or writer (two runs sharing a cache, two cases with the
same request) sees the old entry, the new one, or none: never half of one.
An entry that cannot be read or parsed is a miss (and the successful reply
that follows overwrites it), never a crash. Only successful replies are
stored. A cache directory that cannot be written is reported once, as a
warning, and the run goes on uncached.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import stat
import warnings
from pathlib import Path
from typing import Any

DEFAULT_CACHE_DIR = Path(".evaldsl") / "cache"
"""Where the CLI keeps the cache unless told otherwise (relative to the working directory)."""
FORMAT = 1
_TOKEN = os.urandom(4).hex()
"""With the pid, names this process's temporary files: unique among concurrent runs (the
random part, so that two machines sharing a cache folder cannot collide either)."""
_SERIAL = itertools.count()


def request_key(request: dict[str, Any], repeat_index: int) -> str:
    """The cache key of ``request`` (any JSON; keys sorted) at ``repeat_index``."""
    canonical = json.dumps(
        {"format": FORMAT, "request": request, "repeat": repeat_index},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _create(path: str, folder: str) -> int:
    """A new file at ``path`` (``O_EXCL``), its folder made only when it is missing (not a
    ``mkdir`` call per entry)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        return os.open(path, flags, 0o644)
    except FileNotFoundError:
        os.makedirs(folder, exist_ok=True)
        return os.open(path, flags, 0o644)


class _NotRegular(OSError):
    """What stands where a cache entry should be is not a file."""


def _read_regular(path: str) -> bytes:
    """The bytes of the regular file at ``path``; OSError for anything else (a FIFO there would block
    a plain ``open`` forever, and the event loop with it: opened without blocking, then refused)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _NotRegular(f"{path} is not a regular file")
        with open(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


class ResponseCache:
    """Replies on disk under ``directory``; counts ``hits`` and ``misses``.

    Args:
        directory: where entries live; made on first write. The CLI's
            default is `DEFAULT_CACHE_DIR` (``.evaldsl/cache/``).
    """

    def __init__(self, directory: str | os.PathLike[str] = DEFAULT_CACHE_DIR) -> None:
        self.directory = Path(directory)
        self.hits = 0
        self.misses = 0
        self._warned = False
        self._root = os.fspath(self.directory)

    def _path(self, key: str) -> str:
        return os.path.join(self._root, key[:2], f"{key}.json")

    def get(self, key: str) -> dict[str, Any] | None:
        """The reply body stored under ``key``, or None (a miss: absent, unreadable or corrupt)."""
        try:
            entry = json.loads(_read_regular(self._path(key)))
        except _NotRegular as exc:
            self._warn_once(f"response cache {self.directory}: entry {key[:12]}... cannot be read ({exc}); "
                            "asking the endpoint instead")
            entry = None
        except (OSError, ValueError):  # absent, unreadable or corrupt: a miss (overwritten by the next reply)
            entry = None
        body = entry.get("response") if isinstance(entry, dict) and entry.get("key") == key else None
        if isinstance(body, dict):
            self.hits += 1
            return body
        self.misses += 1
        return None

    def put(self, key: str, body: dict[str, Any]) -> None:
        """Store ``body`` under ``key``, atomically; a failure to write warns once and is otherwise ignored.

        The entry is written to a temporary file of its own (created with ``O_EXCL``,
        named by this process and a serial number) in the entry's folder, then moved
        in place with `os.replace`: a reader sees the old entry, the new one or none.
        """
        folder = os.path.join(self._root, key[:2])
        entry = {"format": FORMAT, "key": key, "response": body}
        try:
            data = json.dumps(entry, ensure_ascii=False).encode()
        except UnicodeEncodeError:  # a lone surrogate in the reply: kept as a \ud800 escape, read back as sent
            data = json.dumps(entry).encode()
        temp = os.path.join(folder, f".{key[:8]}.{os.getpid()}-{_TOKEN}.{next(_SERIAL)}.tmp")
        try:
            fd = _create(temp, folder)
            try:
                with open(fd, "wb", closefd=True) as handle:
                    handle.write(data)
                os.replace(temp, self._path(key))
            except BaseException:
                try:
                    os.unlink(temp)
                except OSError:
                    pass
                raise
        except OSError as exc:
            self._warn_once(f"response cache {self.directory}: cannot write ({exc}); going on without it")

    def _warn_once(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(message, stacklevel=3)

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.directory)!r}, hits={self.hits}, misses={self.misses})"
