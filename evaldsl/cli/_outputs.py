"""The extra outputs of `evaldsl run`: ``--junit-xml``, ``--markdown`` and ``--upload``.

Kept out of `_run.py`, which only calls `add_output_options`,
`check_output_targets` and `write_outputs`. They are made from the final
record, after it is saved, so they always agree with it. A JUnit or
Markdown file that cannot be written is reported and makes the exit code 3
(as a record that cannot be written does); an upload that fails is only a
warning and changes nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--junit-xml", metavar="FILE", help="also write the results as JUnit XML (for CI)")
    p.add_argument("--markdown", metavar="FILE",
                   help="also write a Markdown summary (for CI job summaries and pull-request comments)")
    p.add_argument("--upload", metavar="URL",
                   help="POST the finished record to URL (bearer token from $EVALDSL_UPLOAD_TOKEN); "
                        "a failed upload is a warning")


def check_output_targets(args: argparse.Namespace) -> str | None:
    """A problem with an output path, found before anything runs; None when fine."""
    for option, path in (("--junit-xml", args.junit_xml), ("--markdown", args.markdown)):
        if path and Path(path).is_dir():
            return f"{option} {path}: is a directory; {option} takes a file"
    return None


def write_outputs(full: Any, args: argparse.Namespace, *, upload: bool = True) -> bool:
    """Write the JUnit and Markdown files asked for, then upload; False when a file was not written.

    ``full()`` gives the whole record; it is called only when one of them is asked for (a run keeps its
    cases on disk, and reading them back costs time and memory).
    """
    ok = True
    for path, module, what in ((args.junit_xml, "_junit", "JUnit XML"), (args.markdown, "_markdown",
                                                                         "Markdown summary")):
        if not path:
            continue
        import importlib  # each writer imported only when asked for (ElementTree is not free)

        write = getattr(importlib.import_module(f"..report.{module}", __package__), f"write{module}")
        try:
            write(full(), path)
        except OSError as exc:
            print(f"evaldsl: cannot write the {what} to {path}: {exc.strerror or exc}", file=sys.stderr)
            ok = False
        else:
            print(f"evaldsl: {what} written to {path}", file=sys.stderr)
    if upload and args.upload:
        from ..report._upload import print_upload, upload_record

        print_upload(upload_record(full(), args.upload))
    return ok


def report_markdown(args: argparse.Namespace, records: list[tuple[str, Any]]) -> int:
    """`evaldsl report --format markdown`: each record's summary; with two, their comparison first."""
    from ..report._compare import compare_records
    from ..report._markdown import markdown_comparison, markdown_summary

    parts = []
    if len(records) == 2:
        (name_a, a), (name_b, b) = records
        parts.append(markdown_comparison(compare_records(a, b), a_name=name_a, b_name=name_b))
    parts += [markdown_summary(report) for _, report in records]
    return _emit(args, "\n".join(parts), "Markdown summary")


def report_junit(args: argparse.Namespace, records: list[tuple[str, Any]]) -> int:
    """`evaldsl report --format junit`: one record as JUnit XML."""
    from ..report._junit import junit_xml

    if len(records) != 1:
        print(f"evaldsl: --format junit takes one record, not {len(records)}", file=sys.stderr)
        return 4
    return _emit(args, junit_xml(records[0][1]), "JUnit XML")


def _emit(args: argparse.Namespace, text: str, what: str) -> int:
    """To ``-o FILE`` (atomically) or stdout."""
    from ..report._json import write_atomic

    if not args.output:
        sys.stdout.write(text)
        return 0
    try:
        write_atomic(args.output, text)
    except OSError as exc:
        print(f"evaldsl: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 4
    print(f"evaldsl: {what} written to {args.output}", file=sys.stderr)
    return 0


REPORT_FORMATS = {"markdown": report_markdown, "junit": report_junit}
"""The `evaldsl report --format` entries made here (html is `_report.py`'s own)."""
