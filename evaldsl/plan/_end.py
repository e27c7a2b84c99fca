"""The end of a run: the journals folded into the records, ``.evaldsl/last.json`` and ``lastfailed.json``
written, the summary printed, the JUnit, Markdown, upload and dashboard made from the final record, and
where each went told.

Every output is attempted whatever the one before it did; one that cannot be written is said on the
plan's ``err`` stream and makes the outcome `Outcome.UNWRITTEN` (exit 3); a failed upload is only a
warning. JUnit, Markdown, HTML and the upload read the record back from disk (`FullRecord`), and only
when asked for.
"""

from __future__ import annotations

import os
import time
from typing import Any, TextIO

from ._defaults import LAST_FAILED, LAST_RECORD
from ._plan import RunPlan


class FullRecord:
    """The whole record, read back from disk when an output first asks for it (JUnit, Markdown, HTML, upload)."""

    def __init__(self, plan: RunPlan, summary: Any) -> None:
        self._plan, self._summary, self._report = plan, summary, None

    def __call__(self) -> Any:
        if self._report is None:
            self._report = self._plan.keeper.report(self._summary)
        return self._report


def note_cache(plan: RunPlan) -> None:
    """Keep the cache's counts in the record's meta."""
    cache = plan.models.cache
    if cache is not None and plan.models.backends:
        plan.keeper.meta.cache = {"directory": str(cache.directory), "hits": cache.hits, "misses": cache.misses}


def finish(plan: RunPlan, *, complete: bool) -> Any:
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
            print(f"evaldsl: warning: cannot write {path}: {exc.strerror or exc}", file=plan.err)
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


def print_report(plan: RunPlan, summary: Any, started: float, note: str | None) -> None:
    """The summary, the failures' details and ``note`` on the plan's ``out`` stream."""
    from ..report._progress import use_colour

    out = plan.out
    plan.digest.write(out, summary, colour=use_colour(out), elapsed_s=time.monotonic() - started,
                      note=note)  # a listing at a time: the text of 100,000 failures is never held whole
    out.flush()


def report_writes(plan: RunPlan) -> bool:
    """Say where the record went, and where it could not go; False when a file was not written."""
    keeper, err = plan.keeper, plan.err
    for path in keeper.written:
        print(f"evaldsl: record written to {path}", file=err)
    for error in keeper.failed.values():
        print(f"evaldsl: {error}; the report above is the only complete copy", file=err)
    return not keeper.failed


def write_outputs(plan: RunPlan, full: FullRecord, *, upload: bool = True) -> bool:
    """Write the JUnit and Markdown files asked for, then upload; False when a file was not written.

    ``full()`` gives the whole record; it is called only when one of them is asked for (a run keeps its
    cases on disk, and reading them back costs time and memory).
    """
    o, err = plan.request.outputs, plan.err
    ok = True
    for path, module, what in ((o.junit_xml, "_junit", "JUnit XML"), (o.markdown, "_markdown", "Markdown summary")):
        if not path:
            continue
        import importlib  # each writer imported only when asked for (ElementTree is not free)

        write = getattr(importlib.import_module(f"..report.{module}", __package__), f"write{module}")
        try:
            write(full(), path)
        except OSError as exc:
            print(f"evaldsl: cannot write the {what} to {path}: {exc.strerror or exc}", file=err)
            ok = False
        else:
            print(f"evaldsl: {what} written to {path}", file=err)
    if upload and o.upload:
        from ..report._upload import print_upload, upload_record

        print_upload(upload_record(full(), o.upload))
    return ok


def write_dashboard(plan: RunPlan, full: FullRecord) -> bool:
    """``--html FILE``: the dashboard of the final record; False (said on ``err``) when it cannot be written."""
    path, keeper, err = plan.request.outputs.html, plan.keeper, plan.err
    if not path:
        return True
    from ..report._html import render_html, write_html

    source = str(keeper.written[0]) if keeper.written else "this run"
    try:
        write_html(path, render_html([(source, full())]))
    except OSError as exc:
        print(f"evaldsl: cannot write the dashboard to {path}: {exc.strerror or exc}", file=err)
        return False
    print(f"evaldsl: dashboard written to {path}", file=err)
    return True


def warn_unwritten(err: TextIO) -> Any:
    """The keeper's ``on_error``: a record file that fails during the run is said once; the run goes on."""

    def warn(error: Any) -> None:
        print(f"evaldsl: {error}; the run goes on", file=err)

    return warn
