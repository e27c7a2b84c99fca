"""`evaldsl import`: suites in the reference JSON and RON formats become `.evl` files.

Argument parsing and printing only; the work is `evaldsl.importers`.
Without ``-o``, one file's suite goes to standard output; with ``-o DIR``,
each FILE becomes ``DIR/<stem>.evl`` (an existing file is kept unless
``--force``); one FILE with ``-o NAME.evl`` is written to that file.
``--use LIB`` adds ``use "LIB"`` to each suite (the tools a `--model` run
offers); the cases naming tools that nothing declares are warned about.
Warnings (forms kept as comments) go to stderr, framed like
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
    p.add_argument("-o", "--output", metavar="DIR",
                   help="write DIR/<stem>.evl for each FILE (else stdout); with one FILE, -o NAME.evl writes that file")
    p.add_argument("--use", metavar="LIB", help='add `use "LIB"` to each suite: a .evl file declaring the tools its '
                   "cases name (the path as the .evl file will read it, relative to where it is written)")
    p.add_argument("--format", choices=("json", "ron"), help="the input format (default: by suffix)")
    p.add_argument("--force", action="store_true", help="overwrite .evl files that exist")
    p.add_argument("--error-format", choices=("long", "short"), default="long",
                   help="how errors and warnings are shown")
    p.set_defaults(func=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    from ..importers import import_file
    from ..importers._use import with_use
    from ..syntax._diagnostics import EvlError

    if args.output is None and len(args.files) > 1:
        print("evaldsl: several files need -o DIR (one .evl suite per file)", file=sys.stderr)
        return 4
    one_file = args.output is not None and args.output.endswith(".evl") and not Path(args.output).is_dir()
    if one_file and len(args.files) > 1:
        print(f"evaldsl: -o {args.output} names one .evl file; several files need -o DIR", file=sys.stderr)
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
        target = None if args.output is None else (
            Path(args.output) if one_file else Path(args.output) / (Path(raw).stem + ".evl"))
        text = result.text if args.use is None else with_use(result.text, args.use)
        _warn_undeclared(text, target, raw, with_use=args.use is not None)
        if target is None:
            sys.stdout.write(text)
        elif not _write(text, target, args.force):
            status = 4
            continue
        kept = len(result.warnings)
        print(f"imported {raw}: {result.cases} case(s), {result.expectations} expectation(s)"
              + (f", {kept} warning(s)" if kept else ""), file=sys.stderr)
    return status


def _warn_undeclared(text: str, target: Path | None, raw: str, *, with_use: bool) -> None:
    """Warn when the suite's cases expect calls of tools that nothing it reads declares (`undeclared_tools`)."""
    from ..importers._use import undeclared_tools
    from ..syntax._diagnostics import EvlError

    where = str(target) if target is not None else str(Path(raw).with_suffix(".evl"))
    try:
        missing = undeclared_tools(text, where, uses=with_use)
    except EvlError as exc:  # a `use` file that cannot be read from there, say
        print(f"evaldsl: warning: {raw}: the imported suite does not compile as written to {where}:\n"
              f"{exc.render(style='short')}", file=sys.stderr)
        return
    if missing:
        print(f"evaldsl: warning: {raw}: the cases name tools that nothing declares ({', '.join(missing)}); "
              "a --model run offers the model only declared tools, so it would refuse to start: declare them "
              "in a .evl library and pass --use LIB", file=sys.stderr)


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
