"""The parser cache: the built Lark parser kept whole, so a fresh process loads it instead of building it.

Building the parser from Lark's own grammar cache still deserialises the
parse table through Lark's Python-level format, creates a lexer per parser
state and then reworks the table for `_reducing`: about a seventh of a
one-case `evaldsl check` (bench/README.md, "Issue 28"). A pickle of the
finished parser loads at C speed, in about a fifth of that; putting its
rule callbacks back (`_grammar.relink`) costs about as much again.

What is stored is the parser as `_grammar.build_parser` leaves it, less the
rule callbacks (closures over `_building`'s code, which a pickle cannot hold):
`relink` puts them back, as building did. Beside it are the same parser's
tables (`_tables`: plain data, marshalled), with which a file without a
syntax error is parsed without importing Lark at all; the pickled parser is
loaded only for a file with one. The entries live in the user's cache
(``$XDG_CACHE_HOME/evaldsl/parsers/``), named by everything they depend on:
Lark's modules (found, not imported), the grammar's bytes, Python's version
and evaldsl's `syntax` modules. They are sealed with the user's key
(`_files.seal`): a pickle is code, so an entry that is not this user's own is
never loaded.

Nothing here can fail a parse: an entry missing, unreadable or refused is
built again (and written again), and a cache that cannot be written is
simply not used. ``EVALDSL_PARSER_CACHE=off`` turns it off.
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import os
import pickle
import sys
import types
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import _files

FORMAT = b"EVLPARSER2\n"
"""The first bytes of every parser entry; a new layout gets a new number."""
TABLES = b"EVLTABLES1\n"
"""The first bytes of every tables entry."""


def load_tables(grammar: bytes) -> dict | None:
    """The cached tables (`_tables`) for ``grammar``; None when there are none to use."""
    body = _read(grammar, ".tables", TABLES)
    if body is None:
        return None
    try:
        data = marshal.loads(body)
    except (ValueError, EOFError, TypeError):  # pragma: no cover - sealed by this user, so written by evaldsl
        return None
    return data if isinstance(data, dict) else None


def save_tables(grammar: bytes, data: dict) -> None:
    """Keep the tables just taken from a built parser; quietly nothing when they cannot be kept."""
    _write(grammar, ".tables", TABLES, lambda: marshal.dumps(data))


def _read(grammar: bytes, suffix: str, head: bytes) -> bytes | None:
    if turned_off():
        return None
    try:
        key = _files.read_key(_files.key_file())  # no key yet: nothing was ever written with it
        if key is None:
            return None
        return _files.unseal(_entry(grammar, suffix).read_bytes(), head, key)
    except (OSError, _files.Unsealed):
        return None


def _write(grammar: bytes, suffix: str, head: bytes, body: Callable[[], bytes]) -> None:
    if turned_off():
        return
    try:
        key = _files.load_or_make_key(_files.key_file())
        data = body()
        entry = _entry(grammar, suffix)
        entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _files.replace_atomically(entry, _files.seal(head, data, key))
        _prune(entry.parent, keep=entry)
    except (OSError, ValueError, pickle.PicklingError, TypeError, AttributeError):
        return  # a read-only home, a full disk, a Lark whose parser will not pickle: built each time


def load_parser(grammar: bytes, relink: Callable[[Any], None]) -> Any:
    """The cached ``(parser, joiner)`` for ``grammar``, ``relink``-ed; None when there is none to use."""
    body = _read(grammar, ".bin", FORMAT)
    if body is None:
        return None
    collecting = gc.isenabled()
    gc.disable()  # many small objects and no cycle to collect, as a parse makes
    try:
        parser, joiner = pickle.loads(body)
        relink(parser)
        return parser, joiner
    except Exception:  # another Lark's layout under a colliding name, or a truncated write
        return None
    finally:
        if collecting:
            gc.enable()


def save_parser(grammar: bytes, parser: Any, joiner: Any) -> None:
    """Keep ``(parser, joiner)``, just built, for the next process; quietly nothing when it cannot be kept."""
    _write(grammar, ".bin", FORMAT, lambda: _dumps((parser, joiner)))


KEPT = 8
"""Entries kept in the folder: each evaldsl, Lark and Python in use has its own (a checkout being
edited makes a new one each time its `syntax` modules change); the oldest go when a new one is written."""


def _prune(folder: Path, *, keep: Path) -> None:
    entries = []
    for path in folder.glob("*" + keep.suffix):
        try:
            entries.append((path.stat().st_mtime_ns, path))
        except OSError:
            continue  # removed by another process meanwhile
    for _, path in sorted(entries, reverse=True)[KEPT:]:
        if path != keep:
            path.unlink(missing_ok=True)


def turned_off() -> bool:
    """Whether ``EVALDSL_PARSER_CACHE`` turns the parser cache off."""
    return _files.turned_off("EVALDSL_PARSER_CACHE")


def _entry(grammar: bytes, suffix: str) -> Path:
    return _files.cache_home() / "parsers" / f"{_name(grammar)}{suffix}"


@lru_cache(maxsize=4)
def _name(grammar: bytes) -> str:
    """The entries' name: a digest of everything they depend on. Lark's modules are found and stamped
    (`_files.stamp_sources`), not imported: a file parsed with the tables never imports Lark."""
    import importlib.util

    from .. import __version__

    digest = hashlib.blake2b(digest_size=20)
    digest.update(repr((FORMAT, TABLES, __version__, sys.version, sys.implementation.cache_tag)).encode())
    digest.update(grammar)
    _files.stamp_sources(digest, os.path.dirname(os.path.abspath(__file__)))
    lark = importlib.util.find_spec("lark")
    for folder in (lark.submodule_search_locations or []) if lark is not None else []:
        _files.stamp_sources(digest, folder, below=True)
    return digest.hexdigest()


class _Pickler(pickle.Pickler):
    """Modules by name; the parse table's two actions by name (the parser tells them by identity);
    evaldsl's rule callbacks and parse loop (closures) as None, for `_grammar.relink` to make again."""

    def reducer_override(self, obj: Any) -> Any:
        from lark.parsers.lalr_analysis import Reduce, Shift

        if isinstance(obj, types.ModuleType):
            return _module, (obj.__name__,)
        if obj is Shift or obj is Reduce:
            return _action, (str(obj),)
        if isinstance(obj, types.FunctionType) and obj.__closure__ and obj.__module__.startswith("evaldsl."):
            return type(None), ()
        return NotImplemented


def _dumps(value: Any) -> bytes:
    import io

    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


def _action(name: str) -> Any:
    from lark.parsers.lalr_analysis import Reduce, Shift

    return {"Shift": Shift, "Reduce": Reduce}[name]


def _module(name: str) -> types.ModuleType:
    import importlib

    return importlib.import_module(name)
