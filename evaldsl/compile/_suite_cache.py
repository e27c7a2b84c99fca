"""The suite cache: what compiling a file produced, kept in the project's folder for the next
`check` or `run` of the same, unchanged file (docs/running.md, "The suite cache").

An entry is found by a key naming what the compile depended on besides the
files: the command's kind of compile and options, the file's name as given
and its resolved path, and the compiler itself (`code_fingerprint`: the
evaldsl version, the grammar's digest, Python's and pydantic's versions and
evaldsl's source files). It holds every file the compile read, each
with the digest of its bytes (`_reads`), and it is used only when every one
still has that digest: a change to the file, a `use` file, an `examples
from` file or a world's file compiles the suite again.

Entries are pickles (`_pickling`), so each carries a MAC under a key kept
outside the project (`key_file`): a cache folder copied from elsewhere, or an
entry altered or cut short, is ignored with a warning and written again.
Writes go to a temporary file renamed over the entry (two processes writing
at once leave one whole entry). Only successful compiles are kept (their
warnings with them, replayed as they were), and only for files inside the
root (``--root``, else the working directory).
"""

from __future__ import annotations

import gc
import hashlib
import os
import stat
import struct
import sys
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from .._files import key_file, load_or_make_key, replace_atomically, seal, stamp_sources, turned_off
from ._reads import Read, digest_bytes, digest_file, recording

DEFAULT_DIR = Path(".evaldsl_cache")
"""Where the CLI keeps the cache unless told otherwise (relative to the working directory)."""
FORMAT = b"EVLSUITE2\n"
"""The first bytes of every entry; a new layout gets a new number."""
DIR_HELP = "where compiled suites are kept for reuse (default .evaldsl_cache, or $EVALDSL_SUITE_CACHE_DIR)"
OFF_HELP = "parse and compile every file afresh; keep nothing (also EVALDSL_SUITE_CACHE=off)"
KEEP_DAYS = 30
"""An entry no command has used for this many days is removed when the cache next writes one: there is an
entry per file, command and version of evaldsl, so an upgrade (or a renamed file) leaves the old ones."""
_TOUCH_AFTER_S = 24 * 3600
"""A used entry's time is brought up to date when it is older than this (one write a day at most)."""
_GITIGNORE = "# Created by evaldsl: the suite cache (docs/running.md)\n*\n"
_CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                 "# This file is a cache directory tag created by evaldsl.\n")


class _Unusable(Exception):
    """An entry that cannot be used, and why (shown in the warning)."""


class SuiteCache:
    """One cache folder, used by one process.

    Args:
        directory: the cache folder (created on the first write).
        root: files outside it are never cached (default: the working directory).
        warn: shows a warning line (default: to stderr, prefixed ``evaldsl:``).
        key_file: the MAC key's file (default: `key_file()`), made on first use.
    """

    def __init__(self, directory: str | Path, *, root: str | Path | None = None,
                 warn: Callable[[str], None] | None = None, key_file: str | Path | None = None) -> None:
        self.directory = Path(directory)
        self.root = Path(root if root is not None else os.getcwd()).resolve()
        self._warn_line = warn or _stderr
        self._key_file = Path(key_file) if key_file is not None else None
        self._key: bytes | None = None
        self._broken = False  # the folder or the key could not be used: warned once, then no cache
        self._swept = False  # entries unused for KEEP_DAYS removed (once a process, at its first write)
        self.hits = self.misses = 0

    def compiled(self, filename: str, text: str, options: tuple, build: Callable[[], Any]) -> Any:
        """The compiled suite of ``text`` (the file ``filename``): from the cache when its entry
        is whole and every file it read is unchanged, else ``build()``, kept for next time.

        ``options`` names everything else ``build`` depends on (kind of compile, predicates'
        names, root...). An `EvlError` from ``build`` goes up, and nothing is kept.
        """
        top = Path(filename).resolve()
        if self._broken or not self._inside(str(top)):
            return build()
        key = repr((filename, str(top), options, code_fingerprint()))
        name = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
        entry = self.directory / "suites" / f"{name}.bin"
        own = digest_bytes(text.encode("utf-8", "surrogatepass"))
        found = self._read(entry, key, str(top), own)
        if found is not None:
            self.hits += 1
            return found
        self.misses += 1
        with recording() as reads:
            suite = build()
        self._write(entry, key, [(str(top), own), *reads], suite)
        return suite

    def _inside(self, resolved: str) -> bool:
        path = Path(resolved)
        return path == self.root or self.root in path.parents

    def _read(self, entry: Path, key: str, top: str, own: str) -> Any:
        try:
            status = os.stat(entry)
            data = entry.read_bytes() if stat.S_ISREG(status.st_mode) else None  # (never a FIFO's read)
        except OSError:
            data = None
        if data is None or self._mac_key() is None:
            return None
        try:
            found = self._unpacked(data, key, top, own)
        except _Unusable as why:
            self._warn_line(f"suite cache: ignoring the entry {entry} ({why}); compiling {top} again")
            return None
        if found is not None and time.time() - status.st_mtime > _TOUCH_AFTER_S:
            try:
                os.utime(entry)  # used: kept past the sweep (`KEEP_DAYS`)
            except OSError:
                pass
        return found

    def _unpacked(self, data: bytes, key: str, top: str, own: str) -> Any:
        from .._files import Unsealed, unseal
        from . import _pickling

        try:
            body = unseal(data, FORMAT, self._key or b"")
        except Unsealed as why:
            raise _Unusable(str(why)) from None
        if len(body) < 8:
            raise _Unusable("not an entry of this version of evaldsl")
        (size,) = struct.unpack_from("<Q", body)
        try:
            stored_key, reads = _pickling.loads(body[8:8 + size])
        except Exception as exc:
            raise _Unusable(f"unreadable: {type(exc).__name__}") from None
        if stored_key != key or not reads or reads[0] != (top, own):
            return None  # another file's entry under a colliding name, or this file changed
        for path, digest in reads[1:]:
            if not self._inside(path) or digest_file(path) != digest:
                return None  # a file it read changed (or is now outside the root)
        collecting = gc.isenabled()
        gc.disable()  # loading makes many small objects and no cycle to collect (as a parse does)
        try:
            return _pickling.loads(body[8 + size:])
        except Exception as exc:
            from ._errors import CompileProblem

            if isinstance(exc, CompileProblem):  # a world file that no longer imports: say so at its line
                return None
            raise _Unusable(f"unreadable: {type(exc).__name__}: {exc}") from None
        finally:
            if collecting:
                gc.enable()

    def _write(self, entry: Path, key: str, reads: list[Read], suite: Any) -> None:
        from . import _pickling

        if self._mac_key() is None or any(d is None or not self._inside(p) for p, d in reads[1:]):
            return  # a file it read is outside the root, or could not be read (nothing to compare)
        try:
            meta = _pickling.dumps((key, _unique(reads)))
            payload = _pickling.dumps(suite)
        except _pickling.StoreRefused:
            return  # something in it cannot be stored (a harness's local function): compiled each time
        body = struct.pack("<Q", len(meta)) + meta + payload
        try:
            self._prepare(entry.parent)
            replace_atomically(entry, seal(FORMAT, body, self._key or b""))
        except OSError as exc:
            self._give_up(f"cannot write in {self.directory} ({exc.strerror or exc})")
            return
        if not self._swept:
            self._swept = True
            _sweep(entry.parent, time.time() - KEEP_DAYS * 86400)

    def _prepare(self, folder: Path) -> None:
        """The entries' folder, and (like pytest's cache) a .gitignore and CACHEDIR.TAG at the top."""
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            path = self.directory / name
            if not path.exists():
                replace_atomically(path, text.encode("utf-8"))

    def _mac_key(self) -> bytes | None:
        if self._key is None and not self._broken:
            where: Path | str = self._key_file or "the user's cache folder"
            try:
                where = self._key_file or key_file()
                self._key = load_or_make_key(where)
            except OSError as exc:
                self._give_up(f"cannot keep its key in {where} ({exc.strerror or exc})")
        return self._key

    def _give_up(self, why: str) -> None:
        if not self._broken:
            self._broken = True
            self._warn_line(f"suite cache: {why}; going on without it")


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """What names the compiler: a compiled suite is reused only by the same one."""
    import pydantic

    from .. import __version__

    digest = hashlib.blake2b(digest_size=20)
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # the grammar where `syntax._grammar.grammar_path` looks (that module imports lark, which a
    # command served by the cache does without): in a wheel, then in a source checkout
    grammars = [digest_file(os.path.join(where, "grammar", "evl.lark"))
                for where in (package, os.path.dirname(package))]
    digest.update(repr((__version__, sys.implementation.cache_tag, sys.version, pydantic.VERSION,
                        FORMAT, grammars)).encode())
    stamp_sources(digest, package, below=True)
    return digest.hexdigest()


def suite_cache(directory: str | Path | None, *, enabled: bool = True,
                root: str | Path | None = None) -> SuiteCache | None:
    """The CLI's cache: None when turned off (``--no-suite-cache`` or ``EVALDSL_SUITE_CACHE=off``);
    its folder ``directory``, else ``EVALDSL_SUITE_CACHE_DIR``, else `DEFAULT_DIR`."""
    if not enabled or turned_off("EVALDSL_SUITE_CACHE"):
        return None
    where = directory or os.environ.get("EVALDSL_SUITE_CACHE_DIR") or DEFAULT_DIR
    return SuiteCache(where, root=root)


def _sweep(folder: Path, before: float) -> None:
    """Remove the entries in ``folder`` last used before ``before`` (a time); what cannot be removed, or
    is not an entry, is left. Another process reading one at that moment still reads it whole (an open
    file outlives its name); one about to read it finds none and compiles."""
    try:
        with os.scandir(folder) as found:
            for item in found:
                if not item.name.endswith(".bin"):
                    continue
                try:
                    if item.is_file(follow_symlinks=False) and item.stat(follow_symlinks=False).st_mtime < before:
                        os.unlink(item.path)
                except OSError:
                    pass
    except OSError:
        pass


def _unique(reads: list[Read]) -> list[Read]:
    """Each path once, its first digest (a `use` file read by two paths is one dependency)."""
    seen: dict[str, str | None] = {}
    for path, digest in reads:
        seen.setdefault(path, digest)
    return list(seen.items())


def _stderr(line: str) -> None:
    print(f"evaldsl: {line}", file=sys.stderr)

