"""The end of an `evaldsl run`: the journals folded into the records, ``.evaldsl/last.json`` and
``lastfailed.json`` written, the summary printed, the dashboard and where the record went told.

`_run` decides and drives the run; this module finishes it, after every
case or at Ctrl-C (`_run._interrupted`). It also holds `_Plan`, what a run will do, so that it
imports no sibling (`_run` imports it).
"""

from __future__ import annotations

import os
import sys
import time
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

LAST_RECORD = Path(".evaldsl") / "last.json"
"""Where every run leaves its record, relative to the current directory."""
LAST_FAILED = Path(".evaldsl") / "lastfailed.json"
"""The ids of the cases that failed when they last ran, for `--lf` (see `report._lastfailed`)."""


class _Full:
    """The whole record, read back from disk when an output first asks for it (JUnit, Markdown, HTML, upload)."""

    def __init__(self, plan: _Plan, summary: Any) -> None:
        self._plan, self._summary, self._report = plan, summary, None

    def __call__(self) -> Any:
        if self._report is None:
            self._report = self._plan.keeper.report(self._summary)
        return self._report


def _note_cache(plan: _Plan) -> None:
    """Keep the cache's counts in the record's meta."""
    cache = plan.models.cache
    if cache is not None and plan.models.backends:
        plan.keeper.meta.cache = {"directory": str(cache.directory), "hits": cache.hits, "misses": cache.misses}


def _write_dashboard(path: str | None, full: Any, keeper: Any) -> bool:
    """``--html FILE``: the dashboard of the final record; False (said on stderr) when it cannot be written."""
    if not path:
        return True
    from ..report._html import render_html, write_html

    source = str(keeper.written[0]) if keeper.written else "this run"
    try:
        write_html(path, render_html([(source, full())]))
    except OSError as exc:
        print(f"evaldsl: cannot write the dashboard to {path}: {exc.strerror or exc}", file=sys.stderr)
        return False
    print(f"evaldsl: dashboard written to {path}", file=sys.stderr)
    return True


def _print_report(digest: Any, summary: Any, started: float, note: str | None) -> None:
    from ..report._progress import use_colour

    digest.write(sys.stdout, summary, colour=use_colour(sys.stdout), elapsed_s=time.monotonic() - started,
                 note=note)  # a listing at a time: the text of 100,000 failures is never held whole
    sys.stdout.flush()


def _finish(plan: _Plan, *, complete: bool) -> Any:
    """Fold the journals into the records, then update the .evaldsl cache (best effort); the summary."""
    from ..report._lastfailed import fold_lastfailed
    from ..run._builder import now

    keeper = plan.keeper
    summary = plan.digest.summary()
    keeper.meta.finished_at, keeper.meta.complete = now(), complete
    keeper.finish(summary)
    ran = plan.ran.in_order(keeper)  # each case's id and whether it failed: what the --lf cache reads
    for path, write in ((LAST_RECORD, lambda: _copy_last(keeper, summary)),
                        (LAST_FAILED, lambda: fold_lastfailed(LAST_FAILED, ran))):
        try:
            write()
        except OSError as exc:
            print(f"evaldsl: warning: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
    return summary


def _copy_last(keeper: Any, summary: Any) -> None:
    """``.evaldsl/last.json``: a copy of the record (the record itself when the run named none)."""
    from ..report._json import copy_bytes, write_temp

    if keeper.optional_kept:
        return  # the run named no record file: last.json is the record
    if not keeper.written:  # every record file failed: last.json is the one copy on disk
        keeper.save_copy(LAST_RECORD, summary)
        return
    source = keeper.written[0]
    LAST_RECORD.parent.mkdir(parents=True, exist_ok=True)
    with open(source, "rb") as src:
        tmp = write_temp(LAST_RECORD.parent, LAST_RECORD.name, lambda fh: copy_bytes(src, fh))
    os.replace(tmp, LAST_RECORD)


_STATUSES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
_FAILED = (_STATUSES.index("failed"), _STATUSES.index("error"))


class _RanCases:
    """The cases that ran this time: each one's place in the record and its status, in two arrays
    (a run of 100,000 cases keeps 9 bytes a case here; the keeper has their keys)."""

    def __init__(self) -> None:
        self.positions = array("q")
        self.statuses = bytearray()

    def add(self, position: int, status: str) -> None:
        self.positions.append(position)
        self.statuses.append(_STATUSES.index(status))

    def in_order(self, keeper: Any) -> Iterator[tuple[str, bool]]:
        """Each case that ran, in record order: its id for the --lf cache (``file::name``, its key
        from the keeper, already normalized as `case_ref` normalizes it) and whether it failed."""
        from ..report._lastfailed import key_ref

        positions, statuses, failed = self.positions, self.statuses, _FAILED
        order: Sequence[int] = range(len(positions))
        if any(a > b for a, b in zip(positions, islice(positions, 1, None))):
            order = sorted(order, key=positions.__getitem__)
        key = keeper.key
        for i in order:
            yield key_ref(key(positions[i])), statuses[i] in failed


def _warn_unwritten(error: Any) -> None:
    print(f"evaldsl: {error}; the run goes on", file=sys.stderr)


def _report_writes(keeper: Any) -> bool:
    """Say where the record went, and where it could not go; False when a file was not written."""
    for path in keeper.written:
        print(f"evaldsl: record written to {path}", file=sys.stderr)
    for error in keeper.failed.values():
        print(f"evaldsl: {error}; the report above is the only complete copy", file=sys.stderr)
    return not keeper.failed


@dataclass
class _Plan:
    """What a run will do, decided before anything runs."""

    subject: Any
    todo: Sequence[Any]
    keeper: Any
    """The `RecordKeeper`: the record files and where each finished case is in them."""
    digest: Any
    """The terminal summary's `Digest`, kept as cases finish."""
    models: Any = None
    """The run's `ModelSetup` (model, judge, cache), from `_models`."""
    executor: Any = None
    ran: _RanCases = field(default_factory=lambda: _RanCases())
    """The cases that ran this time, for the --lf cache."""
    selected: int = 0
    """How many cases were selected (those a resumed record had done included)."""
    stop: Any = None
    """Set (an `asyncio.Event`, made by `_drive`) when an endpoint is found down: the run is stopped."""
