"""The parser cache: the built Lark parser kept whole, so a fresh process loads it instead of building it.

Building the parser from Lark's own grammar cache still deserialises the
parse table through Lark's Python-level format, creates a lexer per parser
state and then reworks the table for `_reducing`: about a seventh of a
one-case `evaldsl check` (bench/README.md, "Issue 28"). A pickle of the
finished parser loads at C speed, in about a fifth of that; putting its
rule callbacks back (`_grammar.relink`) costs about as much again.

What is stored is the parser as `_grammar.build_parser` leaves it, less the
rule callbacks (closures over `_building`'s code, which a pickle cannot hold):
`relink` puts them back, as building did. The entry lives in the user's cache
(``$XDG_CACHE_HOME/evaldsl/parsers/``), named by everything the pickle depends
on: Lark's version, the grammar's bytes, Python's version and evaldsl's
`syntax` modules. It is sealed with the user's key (`_files.seal`): a pickle
is code, so an entry that is not this user's own is never loaded.

Nothing here can fail a parse: an entry missing, unreadable or refused is
built again (and written again), and a cache that cannot be written is
simply not used. ``EVALDSL_PARSER_CACHE=off`` turns it off.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lark.parsers.lalr_analysis import Reduce, Shift

from .. import _files

FORMAT = b"EVLPARSER1\n"
"""The first bytes of every entry; a new layout gets a new number."""


def load_parser(grammar: bytes, relink: Callable[[Any], None]) -> Any:
    """The cached ``(parser, joiner)`` for ``grammar``, ``relink``-ed; None when there is none to use."""
    if _off():
        return None
    try:
        key = _files.read_key(_files.key_file())  # no key yet: nothing was ever written with it
        if key is None:
            return None
        body = _files.unseal(_entry(grammar).read_bytes(), FORMAT, key)
    except (OSError, _files.Unsealed):
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
    if _off():
        return
    try:
        key = _files.load_or_make_key(_files.key_file())
        body = _dumps((parser, joiner))
        entry = _entry(grammar)
        entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _files.replace_atomically(entry, _files.seal(FORMAT, body, key))
        _prune(entry.parent, keep=entry)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        return  # a read-only home, a full disk, a Lark whose parser will not pickle: built each time


KEPT = 8
"""Entries kept in the folder: each evaldsl, Lark and Python in use has its own (a checkout being
edited makes a new one each time its `syntax` modules change); the oldest go when a new one is written."""


def _prune(folder: Path, *, keep: Path) -> None:
    entries = []
    for path in folder.glob("*.bin"):
        try:
            entries.append((path.stat().st_mtime_ns, path))
        except OSError:
            continue  # removed by another process meanwhile
    for _, path in sorted(entries, reverse=True)[KEPT:]:
        if path != keep:
            path.unlink(missing_ok=True)


def _off() -> bool:
    return _files.turned_off("EVALDSL_PARSER_CACHE")


def _entry(grammar: bytes) -> Path:
    import lark

    from .. import __version__

    digest = hashlib.blake2b(digest_size=20)
    digest.update(repr((FORMAT, __version__, lark.__version__, sys.version, sys.implementation.cache_tag)).encode())
    digest.update(grammar)
    _files.stamp_sources(digest, os.path.dirname(os.path.abspath(__file__)))
    return _files.cache_home() / "parsers" / f"{digest.hexdigest()}.bin"


class _Pickler(pickle.Pickler):
    """Modules by name; the parse table's two actions by name (the parser tells them by identity);
    evaldsl's rule callbacks and parse loop (closures) as None, for `_grammar.relink` to make again."""

    def reducer_override(self, obj: Any) -> Any:
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
    return {"Shift": Shift, "Reduce": Reduce}[name]


def _module(name: str) -> types.ModuleType:
    import importlib

    return importlib.import_module(name)
