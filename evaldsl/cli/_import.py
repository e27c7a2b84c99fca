"""`evaldsl import`: suites in the reference JSON and RON formats become `.evl` files.

Argument parsing and printing only; the work is `evaldsl.importers`.
Without ``-o``, one file's suite goes to standard output; with ``-o DIR``,
each FILE becomes ``DIR/<stem>.evl`` (an existing file is kept unless
``--force``). Warnings (forms kept as comments) go to stderr, framed like
`check`'s. A file that cannot be imported is an error naming the file and
position; the other files are still converted, and the exit code is 4.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_import_command(sub: Any) -> None:
    p = sub.add_parser(
        "import", help="convert JSON (single-/multi-turn) and eval-core RON suites to .evl",
        description="Convert suites written in the JSON single-turn, JSON multi-turn or eval-core "
                    "RON formats to formatted .evl suites that pass `evaldsl check`.",
        epilog="exit codes: 0 converted; 4 a file could not be imported or written (the others are).",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help=".json or .ron files")
    p.add_argument("-o", "--output", metavar="DIR", help="write DIR/<stem>.evl for each FILE (else stdout)")
    p.add_argument("--format", choices=("json", "ron"), help="the input format (default: by suffix)")
    p.add_argument("--force", action="store_true", help="overwrite .evl files that exist")
    p.add_argument("--error-format", choices=("long", "short"), default="long",
                   help="how errors and warnings are shown")
    p.set_defaults(func=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    from ..importers import import_file
    from ..syntax._diagnostics import EvlError

    if args.output is None and len(args.files) > 1:
        print("evaldsl: several files need -o DIR (one .evl suite per file)", file=sys.stderr)
        return 4
    status = 0
    for raw in args.files:
        try:
            result = import_file(raw, format=args.format)
        except EvlError as exc:
            print(exc.render(style=args.error_format), file=sys.stderr)
            status = 4
            continue
        if result.warnings:
            shown = EvlError(result.warnings, {result.source: result.source_text})
            print(shown.render(style=args.error_format), file=sys.stderr)
        if args.output is None:
            sys.stdout.write(result.text)
        elif not _write(result.text, Path(args.output) / (Path(raw).stem + ".evl"), args.force):
            status = 4
            continue
        kept = len(result.warnings)
        print(f"imported {raw}: {result.cases} case(s), {result.expectations} expectation(s)"
              + (f", {kept} warning(s)" if kept else ""), file=sys.stderr)
    return status


def _write(text: str, target: Path, force: bool) -> bool:
    if target.exists() and not force:
        print(f"evaldsl: {target} exists; --force replaces it", file=sys.stderr)
        return False
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"evaldsl: cannot write {target}: {exc.strerror or exc}", file=sys.stderr)
        return False
    print(f"wrote {target}", file=sys.stderr)
    return True
