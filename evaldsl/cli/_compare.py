"""`evaldsl compare A.json B.json`: record B against record A.

Argument parsing and printing only: `compare_records` computes, and
`format_comparison` renders. Exit codes: 0 done (whatever the verdict);
1 with ``--fail-on-regression`` when a paired case regressed; 4 a record that
cannot be read or a bad option.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import positive_int

_EPILOG = """\
B is compared against A: positive deltas mean B did better. Only cases in
both records, run in both, with the same prompt are compared; the others are
listed. exit codes: 0 compared; 1 a case regressed (with
--fail-on-regression); 4 unreadable record or bad option."""


RESAMPLES, SEED = 10_000, 20_240_601
"""`report._compare`'s defaults, repeated so that building the parser (every command does) imports
nothing more; a test keeps them equal."""


def add_compare_command(sub: Any) -> None:
    p = sub.add_parser(
        "compare", help="compare two run records: flips, deltas, McNemar test, bootstrap interval",
        description="Compare run record B against run record A, case by case.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("a", metavar="A.json", help="the reference record (baseline)")
    p.add_argument("b", metavar="B.json", help="the record under test")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--fail-on-regression", action="store_true", help="exit 1 when any paired case regressed")
    p.add_argument("--resamples", type=positive_int, default=RESAMPLES, metavar="N",
                   help=f"bootstrap resamples (default {RESAMPLES:,})")
    p.add_argument("--seed", type=int, default=SEED, metavar="N", help=f"bootstrap seed (default {SEED})")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    from ..report._compare import compare_records
    from ..report._compare_text import format_comparison
    from ..report._json import RecordError, read_record

    try:
        a, b = read_record(args.a), read_record(args.b)
    except RecordError as exc:
        print(f"evaldsl: {exc}", file=sys.stderr)
        return 4
    cmp = compare_records(a, b, resamples=args.resamples, seed=args.seed)
    if args.json:
        print(cmp.model_dump_json(indent=2))
    else:
        print(format_comparison(cmp), end="")
    if args.fail_on_regression and cmp.regressed:
        print(f"evaldsl: {len(cmp.regressed)} case(s) regressed", file=sys.stderr)
        return 1
    return 0
