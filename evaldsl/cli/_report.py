"""`evaldsl report`: turn run records into a report file (the HTML dashboard by default).

Argument handling only; the work is `evaldsl.report` 's. Each
``RECORD_OR_DIR`` is a JSON run record, or a directory whose ``*.json``
files are all records (sorted by name, not recursive: an ``--out`` folder).
Every record is read before anything is written; one that cannot be read
is a one-line error naming the file, exit 4. Two records also get the
comparison of the second (B) against the first (A).

``--format`` picks the output; each format is one entry in `FORMATS`, a
function ``(args, records) -> exit code``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_USAGE = 0, 4


class _Usage(Exception):
    """A problem with what the user asked for: one line on stderr, exit 4."""


def add_report_command(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "report", help="build a report (an HTML dashboard) from run records",
        description="Build a report from JSON run records: by default one self-contained HTML "
                    "dashboard (leaderboard, heatmap, every case's transcript); two records are also compared.",
    )
    p.add_argument("records", nargs="+", metavar="RECORD_OR_DIR",
                   help="run record files (--json/--out of `evaldsl run`), or directories of them")
    p.add_argument("-o", "--output", metavar="FILE", help="the file to write (required for html)")
    p.add_argument("--format", choices=sorted(FORMATS), default="html", help="what to write (default: html)")
    p.add_argument("--title", metavar="TEXT", help="the page title (default: names the agents)")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    try:
        records = read_records(args.records)
        return FORMATS[args.format](args, records)
    except _Usage as exc:
        print(f"evaldsl: {exc}", file=sys.stderr)
        return EXIT_USAGE


def read_records(paths: list[str]) -> list[tuple[str, Any]]:
    """Every record named, as ``(file, EvalReport)`` in the order given; `_Usage` on the first bad one."""
    from ..report._json import RecordError, read_record

    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.glob("*.json") if p.is_file())
            if not found:
                raise _Usage(f"{raw}: no *.json run records in this directory")
            files.extend(found)
        else:
            files.append(path)
    records = []
    for file in dict.fromkeys(files):
        try:
            records.append((str(file), read_record(file)))
        except RecordError as exc:
            raise _Usage(str(exc)) from None
    return records


def _html(args: argparse.Namespace, records: list[tuple[str, Any]]) -> int:
    if not args.output:
        raise _Usage("report --format html needs -o FILE (the dashboard is a file to open in a browser)")
    if Path(args.output).is_dir():
        raise _Usage(f"-o {args.output}: is a directory; give the .html file to write")
    from ..report._html import render_html, write_html
    from ..report._html_compare import comparison_for

    html = render_html(records, title=args.title, comparison=comparison_for(records))
    return _write(args.output, html, f"dashboard of {len(records)} record(s)", write_html)


def _markdown(args: argparse.Namespace, records: list[tuple[str, Any]]) -> int:
    """Each record's summary; with two, their comparison first."""
    from ..report._compare import compare_records
    from ..report._markdown import markdown_comparison, markdown_summary

    parts = []
    if len(records) == 2:
        (name_a, a), (name_b, b) = records
        parts.append(markdown_comparison(compare_records(a, b), a_name=name_a, b_name=name_b))
    parts += [markdown_summary(report) for _, report in records]
    return _emit(args, "\n".join(parts), "Markdown summary")


def _junit(args: argparse.Namespace, records: list[tuple[str, Any]]) -> int:
    """One record as JUnit XML."""
    from ..report._junit import junit_xml

    if len(records) != 1:
        raise _Usage(f"--format junit takes one record, not {len(records)}")
    return _emit(args, junit_xml(records[0][1]), "JUnit XML")


def _emit(args: argparse.Namespace, text: str, what: str) -> int:
    """To ``-o FILE`` (atomically) or stdout."""
    from ..report._json import write_atomic

    if not args.output:
        sys.stdout.write(text)
        return EXIT_OK
    return _write(args.output, text, what, write_atomic)


def _write(path: str, text: str, what: str, write: Callable[[str, str], Any]) -> int:
    """``write`` ``text`` to ``path``, said on stderr; a file that cannot be written is a usage error."""
    try:
        write(path, text)
    except OSError as exc:
        raise _Usage(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"evaldsl: {what} written to {path}", file=sys.stderr)
    return EXIT_OK


FORMATS: dict[str, Callable[[argparse.Namespace, list[tuple[str, Any]]], int]] = {
    "html": _html, "markdown": _markdown, "junit": _junit}
"""Output formats of `evaldsl report`: name -> writer."""
