"""Files evaldsl writes whole or not at all, and the ones it keeps for itself sealed with a MAC.

The bottom of the pipeline (it imports nothing of evaldsl), so that every
layer writes the same way: the records and the dashboard (`report`), the
model cache (`models`), the suite cache (`compile`) and the parser cache
(`syntax`).

- `write_temp` writes a new temporary file beside its target, which the
  caller then renames over the target with `os.replace` (atomic on POSIX and
  Windows: a reader or a crash sees the old file or the new one, never half).
- `replace_atomically` does both for bytes already in memory.
- `seal` / `unseal` put a MAC over what evaldsl keeps for itself in pickles
  (the suite cache, the parser cache), under a key made once per user and
  kept outside any project (`key_file`): a pickle is code, so one copied from
  another machine, written by another user or cut short is refused before it
  is loaded.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

MAC_SIZE = 32
OFF_VALUES = frozenset({"0", "off", "no", "false"})
"""Values of an ``EVALDSL_..._CACHE`` variable that turn that cache off."""


class Unsealed(Exception):
    """Sealed bytes that cannot be trusted, and why (for the warning that ignores them)."""


def write_temp(folder: Path, name: str, fill: Callable[[IO[bytes]], Any], *, fsync: bool = True,
               mode: int = 0o644) -> str:
    """A new temporary file in ``folder`` (named after ``name``) that ``fill`` writes (and, with ``fsync``,
    flushed to the disk), with permissions ``mode``; its path. Removed again if ``fill`` fails."""
    import tempfile  # here: a command that only reads never pays for it

    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fill(fh)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        if mode != 0o600:  # what mkstemp made it
            os.chmod(tmp, mode)
    except BaseException:
        unlink_quietly(tmp)
        raise
    return tmp


def replace_atomically(path: Path, data: bytes, *, fsync: bool = False, mode: int = 0o600) -> None:
    """Make ``path`` hold ``data``: written beside it, then renamed over it (see the module's docstring).
    By default readable by its owner alone: what evaldsl keeps for itself is its user's."""
    tmp = write_temp(path.parent, path.name, lambda fh: fh.write(data), fsync=fsync, mode=mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise


def unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def key_file() -> Path:
    """Where the MAC key is kept: ``$XDG_CACHE_HOME/evaldsl/suite-cache.key`` (``~/.cache/...``)."""
    return cache_home() / "suite-cache.key"


def cache_home() -> Path:
    """evaldsl's own folder in the user's cache: ``$XDG_CACHE_HOME/evaldsl``, else ``~/.cache/evaldsl``;
    OSError when there is no home folder to put it in (no ``HOME``, no entry in the password file)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # "~" left as it is: a relative folder would land in the working directory
        raise OSError(f"no home folder for evaldsl's cache ({base!r}); set XDG_CACHE_HOME")
    return Path(base) / "evaldsl"


def read_key(path: Path) -> bytes | None:
    """The key in ``path``; None when there is none yet (or it is not a key)."""
    try:
        key = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return key if len(key) == MAC_SIZE else None


def load_or_make_key(path: Path) -> bytes:
    """The key in ``path``, made (32 random bytes, mode 0600) if there is none; OSError if neither works."""
    key = read_key(path)
    if key is not None:
        return key
    import secrets
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".key.")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(MAC_SIZE))
        try:
            os.link(temp, path)  # the first process to make one wins; the others read it
        except FileExistsError:
            pass
    finally:
        os.unlink(temp)
    key = path.read_bytes()
    if len(key) != MAC_SIZE:
        raise OSError(f"{path} is not a key of {MAC_SIZE} bytes")
    return key


def seal(head: bytes, body: bytes, key: bytes) -> bytes:
    """``head``, the MAC of ``body`` under ``key``, ``body``: what `unseal` takes back."""
    return head + _mac(body, key) + body


def unseal(data: bytes, head: bytes, key: bytes) -> bytes:
    """The body of what `seal` made with this ``head`` and ``key``; `Unsealed` saying why it is refused."""
    if not data.startswith(head) or len(data) < len(head) + MAC_SIZE:
        raise Unsealed("not an entry of this version of evaldsl")
    import hmac

    mac, body = data[len(head):len(head) + MAC_SIZE], data[len(head) + MAC_SIZE:]
    if not hmac.compare_digest(mac, _mac(body, key)):
        raise Unsealed("written by another user or machine, or altered")
    return body


def _mac(body: bytes, key: bytes) -> bytes:
    return hashlib.blake2b(body, key=key, digest_size=MAC_SIZE).digest()


def turned_off(variable: str) -> bool:
    """Whether the environment variable ``variable`` (``EVALDSL_SUITE_CACHE``, ...) turns its cache off."""
    return os.environ.get(variable, "").strip().lower() in OFF_VALUES


def stamp_sources(digest: Any, folder: str, *, below: bool = False) -> None:
    """Feed ``digest`` each ``.py`` file of ``folder`` (``below``: and of its subfolders): its place, size and
    time. An edited checkout changes these without a new version, so a cache keyed by them is never stale."""
    for where, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__") if below else []
        for name in sorted(f for f in files if f.endswith(".py")):
            info = os.stat(os.path.join(where, name))
            digest.update(f"{os.path.relpath(where, folder)}/{name}:{info.st_size}:{info.st_mtime_ns}\n".encode())
