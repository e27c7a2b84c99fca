"""`.evaldsl/lastfailed.json`: the cases that failed the last time they ran, for `--lf`.

Why a file of its own rather than the latest record: a record holds only the
cases its run selected, so after `evaldsl run -k one_case` a record-based
`--lf` would forget every other failure. pytest keeps its ``lastfailed``
cache for the same reason, and the rules are pytest's: after each run, a
case that ran and failed or errored joins the list; a case that ran and
passed, or was skipped, xfailed or xpassed, leaves it; a case that did not
run (deselected, or cut short by `-x` or Ctrl-C) keeps its state.

The file is a JSON list of case ids, ``file::name``, with the file written
as `case_key` normalizes it (relative to the current directory), so that
``./d/x.evl`` and ``d/x.evl`` name one case. Ids are compared whole, never
split, since a case name may itself hold ``::``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from json.encoder import encode_basestring_ascii
from pathlib import Path

from ..run._record import CaseResult
from ..run._select import case_key
from ._json import RecordError, write_atomic

_FAILED = ("failed", "error")


def case_ref(file: str, name: str) -> str:
    """A case's id in the file: ``file::name``, the file normalized as `case_key` does."""
    return key_ref(case_key(file, name))


def key_ref(key: tuple[str, str]) -> str:
    """The id of the case whose `case_key` is ``key``: ``file::name``."""
    return f"{key[0]}::{key[1]}"


def read_lastfailed(path: str | os.PathLike[str]) -> list[str] | None:
    """The ids in the file, in order; None when there is no file.

    Raises:
        RecordError: when the file cannot be read or is not a list of ids.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RecordError(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from None
    try:
        ids = json.loads(text)
    except ValueError:
        ids = None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise RecordError(f"{os.fspath(path)} is not a list of case ids (delete it to start afresh)")
    return ids


def update_lastfailed(path: str | os.PathLike[str], ran: Iterable[CaseResult]) -> list[str]:
    """Fold the cases that ran into the file (see the module docstring) and return its ids.

    A file that cannot be read is started afresh. Raises `OSError` when it cannot be written.
    """
    return fold_lastfailed(path, ((case_ref(r.file, r.name), r.status in _FAILED) for r in ran))


def fold_lastfailed(path: str | os.PathLike[str], ran: Iterable[tuple[str, bool]]) -> list[str]:
    """`update_lastfailed` of (case id, whether it failed or errored) pairs, each id as `case_ref` makes it."""
    try:
        ids = dict.fromkeys(read_lastfailed(path) or ())
    except RecordError:
        ids = {}
    for ref, failed in ran:
        if failed:
            ids[ref] = None
        else:
            ids.pop(ref, None)
    write_atomic(path, _json_lines(list(ids)))
    return list(ids)


def _json_lines(ids: list[str]) -> str:
    """``json.dumps(ids, indent=2) + "\\n"``, written without the encoder's pure-Python indenting path
    (a run of 100,000 failing cases lists them all); each id as `json.dumps` writes a string."""
    if not ids:
        return "[]\n"
    return "[\n  " + ",\n  ".join(map(encode_basestring_ascii, ids)) + "\n]\n"
