"""`evaldsl merge`: join shard records into the record of the whole run.

Argument handling only; the rules (what may be joined, order, duplicates)
are `report._merge`'s. Prints the merged run's report, like `run` does.

Exit codes: 0 merged and written (the shards' own jobs carry pass/fail; a
merge step that should gate too can read the record); 3 the output could not
be written; 4 an unreadable record or records that are not of one run.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from . import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE


def add_merge_command(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "merge", help="join shard records (--shard I/N) into one record",
        description="Join the records of one run split with --shard I/N (or into parts) into one record: "
                    "same agent, backend and suite version; every case once; the summary recomputed.",
    )
    p.add_argument("records", nargs="+", metavar="RECORD", help="run records (JSON) to join")
    p.add_argument("-o", "--output", required=True, metavar="RECORD", help="where to write the merged record")
    p.add_argument("-q", "--quiet", action="store_true", help="do not print the merged report")
    p.set_defaults(func=cmd_merge)


def cmd_merge(args: argparse.Namespace) -> int:
    from ..report._json import RecordError, read_record, record_json, write_atomic
    from ..report._merge import MergeError, merge_records

    try:
        reports = [read_record(path) for path in args.records]
        merged = merge_records(reports, names=args.records, warn=_warn)
    except (RecordError, MergeError) as exc:
        print(f"evaldsl merge: {exc}", file=sys.stderr)
        return EXIT_USAGE
    merged.meta.command = shlex.join(["evaldsl", "merge", *args.records, "-o", args.output])
    try:
        write_atomic(args.output, record_json(merged))
    except OSError as exc:
        print(f"evaldsl merge: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_INTERNAL
    if not args.quiet:
        _print(merged)
    s = merged.summary
    print(f"evaldsl merge: {len(args.records)} record(s), {s.total} case(s) -> {args.output}", file=sys.stderr)
    return EXIT_OK


def _warn(message: str) -> None:
    print(f"evaldsl merge: warning: {message}", file=sys.stderr)


def _print(report: Any) -> None:
    from ..report._progress import use_colour
    from ..report._terminal import format_report

    print(format_report(report, colour=use_colour(sys.stdout)), end="", flush=True)
