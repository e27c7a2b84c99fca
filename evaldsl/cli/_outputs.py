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


def write_outputs(report: Any, args: argparse.Namespace, *, upload: bool = True) -> bool:
    """Write the JUnit and Markdown files asked for, then upload; False when a file was not written."""
    from ..report._junit import write_junit
    from ..report._markdown import write_markdown

    ok = True
    for path, write, what in ((args.junit_xml, write_junit, "JUnit XML"), (args.markdown, write_markdown,
                                                                          "Markdown summary")):
        if not path:
            continue
        try:
            write(report, path)
        except OSError as exc:
            print(f"evaldsl: cannot write the {what} to {path}: {exc.strerror or exc}", file=sys.stderr)
            ok = False
        else:
            print(f"evaldsl: {what} written to {path}", file=sys.stderr)
    if upload and args.upload:
        from ..report._upload import print_upload, upload_record

        print_upload(upload_record(report, args.upload))
    return ok
