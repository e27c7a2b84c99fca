"""`evaldsl run`: load suites, run them against an agent, report, persist.

Argument handling and wiring only; the work is the library's (`load`,
`select_cases`, `run_cases`, `RecordKeeper`, `Digest`). The model
options (``--model``, ``--judge``, sampling, cache) live in `_models`; with
several ``--model`` values the whole run is repeated per model, one record
each, and a comparison table (`report._models_table`) ends the output.

Records: ``--json FILE`` keeps one file; ``--out DIR`` adds a new
``DIR/<model>_<YYYYmmdd-HHMMSS>.json`` per run (a name is never reused, so
runs sharing a directory cannot clobber each other); ``--resume FILE``
finishes FILE in place, and only with the agent that started it (by name),
so one record never mixes two agents. Each is written when the run starts;
finished cases go to a journal beside it, folded into the record at the end
(`report._journal`). The run keeps in memory only what its summary needs
(`report._terminal.Digest`); JUnit, Markdown, HTML and the upload read the
record back from disk, and only when asked for. A record path that cannot
be written is found before anything runs (the first write happens then);
one that fails later is reported in one line, the run goes on, its report
is printed, and the exit code is 3.

``.evaldsl/`` in the current directory (pytest's ``.pytest_cache``) holds
``last.json``, the latest record, and ``lastfailed.json``, which ``--lf``
reads (`report._lastfailed` says why it is not the record); when no selected
case is in it, ``--lf`` runs every selected case, as pytest does.

Exit codes (pytest's): 0 every case passed (skipped, xfailed and xpassed do
not fail a run); 1 a case failed or errored; 2 interrupted (Ctrl-C; the
finished cases stay on disk); 3 internal error, or a record that could not
be written during the run; 4 usage error (bad option, an agent that cannot
be imported or is not an agent, a .evl file that does not compile, an
unreadable record, a record path that cannot be written, --resume with
another agent); 5 no case selected (a `--shard` that gets none of the selected
cases is 0: a CI matrix wider than the suite must not fail for it).
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._resume import EndpointDown, keeping_the_record, resume_command, resume_in_folder, resume_target
from ._run_end import (
    LAST_FAILED,
    LAST_RECORD,
    _finish,
    _Full,
    _note_cache,
    _Plan,
    _print_report,
    _report_writes,
    _warn_unwritten,
    _write_dashboard,
)
from ._run_inputs import (
    _check_model_tools,
    _check_targets,
    _files,
    _keep_last_failed,
    _previous,
    _select,
    _subject,
    _unique_files,
    _Usage,
    _warn_unseen,
)
from ._types import positive_int, recorded_command

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_INTERNAL, EXIT_USAGE, EXIT_NO_TESTS = 0, 1, 2, 3, 4, 5

_EPILOG = """\
exit codes: 0 all passed; 1 a case failed or errored; 2 interrupted (finished
cases are kept on disk; finish with --resume); 3 internal error, or the record
could not be written; 4 usage or compile error; 5 no case selected (an
empty --shard of a non-empty selection exits 0)."""


DEFAULT_CONCURRENCY = 8
"""The runner's default (`run._scheduler.DEFAULT_CONCURRENCY`, kept equal by a test); repeated
here so that building the parser, which every command does, does not import the runner."""


def add_run_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "run", help="run .evl suites against an agent",
        description="Run .evl suites against an agent and report, like pytest.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help=".evl files or directories of them")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--agent", metavar="MODULE:ATTR",
                     help="an agent object, class or function (the current directory is importable)")
    who.add_argument("--harness", metavar="MODULE:ATTR",
                     help="a harness (setup/run over a world, custom predicates) instead of an agent")
    who.add_argument("--agent-cmd", metavar="COMMAND",
                     help='a program as the agent: "cmd {prompt}" one-shot, else JSON Lines (docs/agents.md)')
    who.add_argument("--agent-url", metavar="URL", help="an agent behind an HTTP endpoint (docs/agents.md)")
    p.add_argument("--upstream", metavar="URL",
                   help="where --agent-cmd's recording model proxy forwards (default: $OPENAI_BASE_URL / "
                        "$ANTHROPIC_BASE_URL, else the public API)")
    from ._models import add_model_options

    add_model_options(p, who)
    p.add_argument("-j", "--concurrency", type=positive_int, default=DEFAULT_CONCURRENCY, metavar="N",
                   help=f"runs in flight at once (default {DEFAULT_CONCURRENCY})")
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop after the first failure or error")
    p.add_argument("-k", dest="keyword", metavar="EXPR",
                   help='select by case, suite or file name or tag: substrings, and/or/not, "quoted words"')
    p.add_argument("-m", dest="markers", metavar="EXPR", help="select by tags: exact tags with and/or/not")
    p.add_argument("--tag", action="append", default=[], metavar="TAG",
                   help="keep cases with this tag (repeatable: any of them)")
    p.add_argument("--lf", "--last-failed", dest="last_failed", action="store_true",
                   help=f"rerun only the cases that failed or errored when they last ran (kept in {LAST_FAILED})")
    p.add_argument("--json", metavar="FILE", help="write the run record to FILE")
    p.add_argument("--out", metavar="DIR", help="write the run record to DIR/<model>_<timestamp>.json")
    p.add_argument("--resume", metavar="FILE", help="finish an interrupted record: run only its missing cases")
    p.add_argument("--html", metavar="FILE", help="write the HTML dashboard of the run to FILE at the end")
    p.add_argument("--root", metavar="DIR",
                   help="refuse `use` and `examples from` paths outside DIR (for suites you did not write)")
    from ..compile._suite_cache import DIR_HELP, OFF_HELP

    p.add_argument("--suite-cache-dir", metavar="DIR", help=DIR_HELP)
    p.add_argument("--no-suite-cache", action="store_true", help=OFF_HELP)
    p.add_argument("--model-name", metavar="NAME", help="the agent's name in the record (default: its own)")
    from ._scale import shard_type

    p.add_argument("--shard", type=shard_type, metavar="I/N",
                   help="run only the I-th of N slices of the selected cases (for CI matrices; see docs/scale.md)")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="where runs happen: this process (default) or a Ray cluster (pip install 'evaldsl[ray]')")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress on stderr; failures without the agent's final text and calls")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="-v: a line per finished case, on a terminal too; -vv: failures with the transcript")
    p.add_argument("--tb", choices=("long", "short", "line", "no"), default="short",
                   help="an agent's traceback: whole, its own frames (default), one line, or none")
    from ._outputs import add_output_options

    add_output_options(p)
    p.set_defaults(func=cmd_run)

    # ---- `evaldsl baseline`: registered here, implemented in _baseline.py (the baseline work) ----
    from .._baseline import add_baseline_command

    add_baseline_command(sub)


def cmd_run(args: argparse.Namespace) -> int:
    """The `run` command; maps every outcome to its exit code."""
    try:
        return _run(args)
    except _Usage as exc:
        print(f"evaldsl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("evaldsl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:
        print("evaldsl: internal error (please report it):", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return EXIT_INTERNAL


def _run(args: argparse.Namespace) -> int:
    """Run once, or once per --model and then compare the models."""
    from ._models import ModelUsage, check_model_args

    try:
        check_model_args(args)
    except ModelUsage as exc:
        raise _Usage(str(exc)) from None
    specs: list[str | None] = list(args.model or [None])
    codes, done = [], []
    for n, spec in enumerate(specs, 1):
        if len(specs) > 1:  # one block a model: each says whose it is
            from ..report._progress import use_colour
            from ..report._terminal import heading

            print(heading(f"model {spec} ({n} of {len(specs)})", use_colour(sys.stdout)), flush=True)
        code, report, models = _run_one(copy.copy(args), spec)  # a copy: `--resume DIR` picks a record a model
        if code in (EXIT_INTERRUPTED, EXIT_USAGE, EXIT_NO_TESTS):
            return code
        codes.append(code)
        done.append((spec, report, models))
    if len(specs) > 1:
        from ..report._models_table import format_comparison

        print(format_comparison([(str(spec), report, m.cache) for spec, report, m in done]), end="")
    return EXIT_INTERNAL if EXIT_INTERNAL in codes else max(codes)


def _run_one(args: argparse.Namespace, spec: str | None) -> tuple[int, Any, Any]:
    """One run against one agent, harness or model: (exit code, the record's meta and summary, its ModelSetup)."""
    plan = _plan(args, spec)
    if isinstance(plan, int):
        return plan, None, None
    from ..report._json import RecordWriteError
    from ..report._progress import Progress
    from ..run._api import run_async

    progress = Progress(len(plan.todo), stream=_Null() if args.quiet else sys.stderr,  # type: ignore[arg-type]
                        live=False if args.verbose else None)
    keeper, digest, ran = plan.keeper, plan.digest, plan.ran

    def on_result(result: Any) -> None:
        position = keeper.add(result)  # a line in the journal: the result is on disk before anything else
        digest.add(result, position)
        ran.add(position, result.status)
        if not args.quiet:
            progress.update(result)
        if plan.models.backends and plan.models.down() is not None and plan.stop is not None:
            plan.stop.set()  # `_drive` cancels the run: no new case starts, those in flight are cancelled

    started = time.monotonic()
    try:
        keeper.start(digest.summary())  # the record exists from the start, so --resume works at once
    except RecordWriteError as exc:  # nothing has run yet: a usage error
        print(f"evaldsl: {exc}", file=sys.stderr)
        return EXIT_USAGE, None, None
    keeper.on_error = _warn_unwritten
    try:
        stopped = run_async(_drive(plan, args, on_result, progress))
    except EndpointDown as exc:
        progress.close()
        _note_cache(plan)
        return _interrupted(plan, started, args, down=str(exc)), None, plan.models
    except KeyboardInterrupt:
        with keeping_the_record():  # a second Ctrl-C must not leave the record half written
            progress.close()
            _note_cache(plan)
            return _interrupted(plan, started, args), None, plan.models
    progress.close()
    _note_cache(plan)
    summary = _finish(plan, complete=not stopped)
    notes = ["stopped after the first failure (-x)" if stopped else None, plan.models.cache_note()]
    _print_report(digest, summary, started, "\n".join(n for n in notes if n) or None)
    from ._outputs import write_outputs

    full = _Full(plan, summary)
    written = [_report_writes(keeper), write_outputs(full, args), _write_dashboard(args.html, full, keeper)]
    from ..run._record import EvalReport

    final = EvalReport(meta=keeper.meta, summary=summary)  # what the --model comparison reads
    if not all(written):  # every output attempted, whatever the first says
        return EXIT_INTERNAL, final, plan.models
    return (EXIT_OK if final.ok else EXIT_FAILED), final, plan.models


def _interrupted(plan: _Plan, started: float, args: argparse.Namespace, *, down: str | None = None) -> int:
    """Ctrl-C, or an endpoint found down (``down`` says why): keep and report the finished cases."""
    summary = _finish(plan, complete=down is not None and plan.digest.summary().total >= plan.selected)
    target = resume_target(plan.keeper, args, LAST_RECORD)
    kept = f" in {target}; finish it with: {resume_command(args, target)}" if target else ""
    done = f"{summary.total} of {plan.selected} cases finished and kept{kept}"
    if down is not None:
        _print_report(plan.digest, summary, started, f"stopped: the endpoint is down; {done}")
    else:
        _print_report(plan.digest, summary, started, f"interrupted: {done}")
    _report_writes(plan.keeper)
    from ._outputs import write_outputs

    full = _Full(plan, summary)
    write_outputs(full, args, upload=False)  # an interrupted run is not uploaded
    _write_dashboard(args.html, full, plan.keeper)
    if down is not None:  # last, where it is seen: one message for the whole run
        print(f"evaldsl: stopped: the endpoint is down: {down}. Check --base-url (or OPENAI_BASE_URL / "
              f"ANTHROPIC_BASE_URL) and that the server is running; "
              f"{plan.selected - summary.total} case(s) were not run{kept}", file=sys.stderr)
    else:
        print("evaldsl: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _plan(args: argparse.Namespace, spec: str | None = None) -> _Plan | int:
    """Import the agent (or make the model ``spec``'s), load and select the cases, set up
    the record; or an exit code."""
    from ..compile._model import case_keys
    from ..report._json import record_stem
    from ..report._keeper import RecordKeeper
    from ..report._terminal import Digest
    from ..run._api import flatten_cases
    from ..run._builder import now
    from ..run._select import case_key, picked
    from ._models import ModelUsage, model_setup, unreached_dropped
    from ._scale import executor, sharded

    _check_targets(args)
    files = _files(args.paths)  # before the agent: a typo in a path costs no import
    try:
        models = model_setup(args, spec)
    except ModelUsage as exc:
        raise _Usage(str(exc)) from None
    subject = _subject(args, models.agent)
    if args.resume and Path(args.resume).is_dir():
        resume_in_folder(args, subject)
    suites = _load(files, subject, args.root, args)
    _warn_unseen(suites, subject)
    if spec is not None:
        _check_model_tools(suites)
    flat = flatten_cases(suites)
    previous = unreached_dropped(_previous(args, subject), models)
    selected = _select(flat, args)
    if not selected:
        found = f"{len(flat)} loaded, all deselected" if flat else "the files hold no cases"
        print(f"evaldsl: no cases selected ({found})", file=sys.stderr)
        return EXIT_NO_TESTS
    from ..run._conversation import ConversationUsage, check_conversations

    try:  # a conversation the agent cannot hold, a simulated user no model plays: before anything runs
        check_conversations(subject, selected, user=models.user)
    except ConversationUsage as exc:
        raise _Usage(str(exc)) from None
    last_failed = False
    if args.last_failed:
        selected, last_failed = _keep_last_failed(selected)
    meta = _meta(args, subject, flat, previous, last_failed)
    for name, value in models.meta.items():
        setattr(meta, name, value)
    if models.agent is not None:
        meta.backend = "model"
    selected = sharded(selected, args, meta, previous)
    if meta.started_at is None:
        meta.started_at = now()
    paths = list(dict.fromkeys(p for p in (args.json, args.resume) if p))
    stem = record_stem(meta.agent, meta.started_at)
    keeper = RecordKeeper((case_key(f, n) for f, n in case_keys(flat)), meta, paths, out_dir=args.out, stem=stem,
                          optional=None if paths or args.out else LAST_RECORD)
    from ..report._details import Details

    digest = Digest(Details(verbosity=0 if args.quiet else 1 + (args.verbose >= 2), tb=args.tb))
    if previous is not None:
        keeper.resume(previous)
        for case in previous.results():  # read back one at a time: a large record is never held whole
            digest.add(case, keeper.position(case))
    if previous is not None:  # by key: the cases of examples rows are not made for it (`picked`)
        todo = picked(selected, [i for i, (f, n) in enumerate(case_keys(selected)) if not keeper.is_done(f, n)])
    else:
        todo = selected
    if previous is not None:
        print(f"evaldsl: resuming {args.resume}: {len(selected) - len(todo)} case(s) done, "
              f"{len(todo)} to run", file=sys.stderr)
    return _Plan(subject, todo, keeper, digest, models, executor(args) if todo else None, selected=len(selected))


def _meta(args: argparse.Namespace, subject: Any, flat: Sequence[Any], previous: Any, last_failed: bool) -> Any:
    """The record's metadata: the command line, the agent's name, the selection, the start time."""
    from ..run._api import fill_meta
    from ..run._record import RunMeta

    meta = RunMeta(command=recorded_command(sys.argv[1:]))
    if args.model_name:
        meta.agent = args.model_name
    if previous is not None and previous.meta.started_at is not None:
        meta.started_at = previous.meta.started_at
    selection = {"keyword": args.keyword, "markers": args.markers, "tags": args.tag or None,
                 "last_failed": last_failed or None}
    return fill_meta(meta, subject, flat, args.concurrency, {k: v for k, v in selection.items() if v})


async def _drive(plan: _Plan, args: argparse.Namespace, on_result: Any, progress: Any) -> bool:
    """Run the cases while refreshing the progress line; True when -x stopped the run."""
    import asyncio  # here, not at the top: `evaldsl check` never pays for it

    from ..run._api import run_cases

    plan.stop = asyncio.Event()
    stopping = asyncio.ensure_future(plan.stop.wait())
    task = asyncio.ensure_future(run_cases(
        plan.subject, plan.todo, concurrency=args.concurrency, exitfirst=args.exitfirst,
        on_result=on_result, judge=plan.models.judge, executor=plan.executor, halted=plan.stop.is_set,
        user=plan.models.user,
    ))
    try:
        while not task.done():
            await asyncio.wait({task, stopping}, timeout=0.2, return_when=asyncio.FIRST_COMPLETED)
            progress.tick()
            if plan.stop.is_set() and not task.done():  # an endpoint is down: stop as Ctrl-C stops
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                raise EndpointDown(plan.models.down())
    except asyncio.CancelledError:  # Ctrl-C: asyncio.run turns it into KeyboardInterrupt
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    finally:
        stopping.cancel()
        await plan.models.aclose()
        await _close_bridge(plan.subject)
    if plan.stop.is_set():  # no case started after the endpoint was found down: say so, once
        raise EndpointDown(plan.models.down())
    return task.result()


async def _close_bridge(subject: Any) -> None:
    """A command or HTTP agent's servers (the recording proxy, the tool server) and processes stop with
    the run (AGENTS.md), on this loop: a user's own agent is left as it is."""
    bridge = getattr(subject.run, "__self__", None)
    close = getattr(bridge, "aclose", None)  # a framework adapter holds nothing to close
    if close is not None and type(bridge).__module__.startswith("evaldsl.agents."):
        await close()


def _load(files: list[Path], subject: Any, root: str | None = None, args: Any = None) -> list[Any]:
    """Compile every file once (or take it from the suite cache), all errors at once."""
    from ..compile._loading import compile_files
    from ..compile._suite_cache import suite_cache
    from ..syntax._diagnostics import EvlError

    predicates = subject.predicates if subject.kind == "harness" else None
    cache = None if args is None else suite_cache(getattr(args, "suite_cache_dir", None), root=root,
                                                  enabled=not getattr(args, "no_suite_cache", False))
    try:
        suites = compile_files(_unique_files(files), predicates=predicates, root=root, cache=cache)
    except EvlError as exc:
        raise _Usage("cannot run: the suites do not compile\n" + exc.render()) from None
    import gc

    gc.freeze()  # the compiled suites live as long as the process: the collector need not rescan them
    return suites


class _Null:
    """A stream that drops everything (for --quiet)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
