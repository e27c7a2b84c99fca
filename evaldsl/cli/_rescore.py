"""`evaldsl rescore RECORD.json [PATH...]`: today's expectations over a record's stored answers.

Argument parsing and printing only; `run._rescore.rescore` does the work.
The suites default to the files the record names (``meta.suites``, relative
to where it was run). The new record goes to ``-o FILE`` or, by default,
``RECORD.rescored.json`` beside the old one, which is only read (an ``-o``
naming the old record is refused).

Judges: ``--judge PROVIDER:MODEL`` (with ``--judge-base-url``,
``--judge-template``, ``--no-cache``, ``--cache-dir``, as `evaldsl run` takes
them, built by the same `evaldsl.plan.model_setup`) grades `judge` expectations, and the
command says how many called it; without ``--judge`` such an expectation is
an error that says it needs one. Exit codes: 0 every rescored case passed; 1 a rescored case
failed or errored; 4 unreadable record, missing or non-compiling suite, or
bad option; 5 no case of the record could be rescored (all stale).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


class _Usage(Exception):
    pass


def add_rescore_command(sub: Any) -> None:
    p = sub.add_parser(
        "rescore", help="re-evaluate the current .evl expectations over a record's stored answers",
        description="Compile the current .evl files and evaluate their expectations over the artifacts "
                    "stored in RECORD, without calling the agent; write a new record.",
        epilog="Cases that no longer exist or whose prompt changed are listed as stale and left out. "
               "Judge expectations call the --judge model (and the command says how many did); without "
               "--judge they are errors. exit codes: 0 all rescored "
               "cases passed; 1 a case failed or errored; 4 usage, record or compile error; 5 nothing "
               "could be rescored.",
    )
    p.add_argument("record", metavar="RECORD", help="a run record (.json); it is only read")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help=".evl files or directories (default: the suites named in the record)")
    p.add_argument("-o", "--output", metavar="FILE", help="the new record (default: RECORD.rescored.json)")
    g = p.add_argument_group("the judge (for `judge` expectations; the agent or model is never called)")
    g.add_argument("--judge", metavar="PROVIDER:MODEL", help="the model that grades `judge` expectations")
    g.add_argument("--judge-base-url", metavar="URL", help="the judge's base URL (default: the provider's)")
    g.add_argument("--judge-template", metavar="FILE", help="a jinja2 template replacing the judge's prompt")
    g.add_argument("--no-cache", action="store_true", help="send every judge request; keep no replies")
    g.add_argument("--cache-dir", metavar="DIR", help="where judge replies are kept (default .evaldsl/cache)")
    p.set_defaults(func=cmd_rescore)


def cmd_rescore(args: argparse.Namespace) -> int:
    from ..plan import ModelOptions, PlanUsage, model_setup, recorded_command
    from ..report._json import RecordWriteError, record_json, write_atomic
    from ..report._progress import use_colour
    from ..report._terminal import format_report

    try:
        record, suites, target = _prepare(args)
        options = ModelOptions(judge=args.judge, judge_base_url=args.judge_base_url,
                               judge_template=args.judge_template, cache=not args.no_cache, cache_dir=args.cache_dir)
        setup = model_setup(options, None) if args.judge else None
    except (_Usage, PlanUsage) as exc:
        print(f"evaldsl: {exc}", file=sys.stderr)
        return 4
    if setup is None:
        for option in ("judge_base_url", "judge_template", "cache_dir"):
            if getattr(args, option) is not None:
                print(f"evaldsl: --{option.replace('_', '-')} applies to a judge (--judge)", file=sys.stderr)
                return 4
    result = _rescore(record, suites, setup, recorded_command(getattr(args, "argv", None) or sys.argv[1:]))
    new = result.report
    if new.cases:
        print(format_report(new, colour=use_colour(sys.stdout)), end="")
    for case in result.stale:
        print(f"evaldsl: stale: {case.file}::{case.name} ({case.reason}); not rescored", file=sys.stderr)
    if result.needs_judge:
        print(f"evaldsl: {result.needs_judge} judge expectation(s) could not be evaluated: they need a judge; "
              "give one with --judge PROVIDER:MODEL", file=sys.stderr)
    if result.judge_calls:
        assert setup is not None
        judge = setup.meta["judge"]
        print(f"evaldsl: {result.judge_calls} judge expectation(s) called the judge "
              f"{judge['provider']}:{judge['model']}", file=sys.stderr)
    if result.not_in_record:
        print(f"evaldsl: {result.not_in_record} case(s) of the suites are not in the record; run them to "
              "score them", file=sys.stderr)
    try:
        write_atomic(target, record_json(new))
    except OSError as exc:
        print(f"evaldsl: {RecordWriteError(target, exc)}", file=sys.stderr)
        return 3
    print(f"evaldsl: rescored {len(new.cases)} case(s) of {args.record} ({len(result.stale)} stale); "
          f"new record written to {target}", file=sys.stderr)
    if not new.cases:
        return 5
    return 0 if new.ok else 1


def _rescore(record: Any, suites: list[Any], setup: Any, command: str) -> Any:
    """`arescore` in one event loop with the judge's backends, which are closed after it."""
    from ..run._api import run_async
    from ..run._rescore import arescore

    async def drive() -> Any:
        try:
            return await arescore(record, suites, judge=setup.judge if setup else None, command=command)
        finally:
            if setup is not None:
                await setup.aclose()

    result = run_async(drive())
    if setup is not None:  # the new record names the judge that graded it
        result.report = result.report.model_copy(
            update={"meta": result.report.meta.model_copy(update={"judge": setup.meta["judge"]})})
    return result


def _prepare(args: argparse.Namespace) -> tuple[Any, list[Any], Path]:
    from ..report._json import RecordError, read_record

    try:
        record = read_record(args.record)
    except RecordError as exc:
        raise _Usage(str(exc)) from None
    target = Path(args.output) if args.output else _default_target(Path(args.record))
    if target.exists() and os.path.samefile(target, args.record):
        raise _Usage(f"-o {args.output}: that is the record being rescored; it is never overwritten")
    if target.is_dir():
        raise _Usage(f"-o {target}: is a directory; -o takes a file")
    paths = args.paths or record.meta.suites
    if not paths:
        raise _Usage(f"{args.record} names no suite files; give the .evl paths to rescore with")
    return record, _compile(paths, from_record=not args.paths), target


def _default_target(record: Path) -> Path:
    stem = record.name[:-5] if record.name.endswith(".json") else record.name
    return record.with_name(f"{stem}.rescored.json")


def _compile(paths: list[str], *, from_record: bool) -> list[Any]:
    from ..compile._loading import compile_files
    from ..plan._paths import expand_paths
    from ..syntax._diagnostics import EvlError

    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        where = "named in the record (relative to where it was run) " if from_record else ""
        raise _Usage(f"suite file(s) {where}not found: {', '.join(missing)}; give the .evl paths as arguments")
    try:
        return compile_files(expand_paths(paths))
    except EvlError as exc:
        raise _Usage("cannot rescore: the suites do not compile\n" + exc.render()) from None
