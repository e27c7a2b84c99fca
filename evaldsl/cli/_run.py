"""`evaldsl run`: its arguments, made into an `evaldsl.plan.RunRequest`; the outcome, made an exit code.

Argument parsing only; the run is the library's (`evaldsl.plan`: the agent, the suites and their
selection, the models, the record and its outputs, the run's end). With several ``--model`` values
the whole run is repeated per model, one record each, and a comparison table ends the output.

Records: ``--json FILE`` keeps one file; ``--out DIR`` adds a new
``DIR/<model>_<YYYYmmdd-HHMMSS>.json`` per run (a name is never reused, so
runs sharing a directory cannot clobber each other); ``--resume FILE``
finishes FILE in place, and only with the agent that started it (by name),
so one record never mixes two agents. ``.evaldsl/`` in the current directory
(pytest's ``.pytest_cache``) holds ``last.json``, the latest record, and
``lastfailed.json``, which ``--lf`` reads; when no selected case is in it,
``--lf`` runs every selected case, as pytest does.

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
import sys
import traceback
from typing import Any

from ..plan._defaults import DEFAULT_CONCURRENCY, LAST_FAILED
from . import (
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NO_TESTS,
    EXIT_OK,
    EXIT_USAGE,
    ROOT_HELP,
    add_suite_cache_options,
    positive_int,
)

_EPILOG = """\
exit codes: 0 all passed; 1 a case failed or errored; 2 interrupted (finished
cases are kept on disk; finish with --resume); 3 internal error, or the record
could not be written; 4 usage or compile error; 5 no case selected (an
empty --shard of a non-empty selection exits 0)."""

__all__ = ["DEFAULT_CONCURRENCY", "add_run_commands", "cmd_run", "run_request_of"]


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
    _add_model_options(p, who)
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
    p.add_argument("--root", metavar="DIR", help=ROOT_HELP)
    add_suite_cache_options(p)
    p.add_argument("--model-name", metavar="NAME", help="the agent's name in the record (default: its own)")
    p.add_argument("--shard", type=_shard, metavar="I/N",
                   help="run only the I-th of N slices of the selected cases (for CI matrices; see docs/scale.md)")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="where runs happen: this process (default) or a Ray cluster (pip install 'evaldsl[ray]')")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress on stderr; failures without the agent's final text and calls")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="-v: a line per finished case, on a terminal too; -vv: failures with the transcript")
    p.add_argument("--tb", choices=("long", "short", "line", "no"), default="short",
                   help="an agent's traceback: whole, its own frames (default), one line, or none")
    p.add_argument("--junit-xml", metavar="FILE", help="also write the results as JUnit XML (for CI)")
    p.add_argument("--markdown", metavar="FILE",
                   help="also write a Markdown summary (for CI job summaries and pull-request comments)")
    p.add_argument("--upload", metavar="URL",
                   help="POST the finished record to URL (bearer token from $EVALDSL_UPLOAD_TOKEN); "
                        "a failed upload is a warning")
    p.set_defaults(func=cmd_run)

    # ---- `evaldsl baseline`: registered here, implemented in _baseline.py (the baseline work) ----
    from .._baseline import add_baseline_command

    add_baseline_command(sub)


def _add_model_options(p: argparse.ArgumentParser, who: Any) -> None:
    """The model options (docs/models.md); ``--model`` joins ``who``, the --agent/--harness group."""
    who.add_argument("--model", action="append", metavar="PROVIDER:MODEL",
                     help="drive a model with the suites' mock tools instead of an agent "
                          "(openai:MODEL, anthropic:MODEL; repeatable: one record per model and a comparison)")
    g = p.add_argument_group("model runs")
    g.add_argument("--base-url", metavar="URL",
                   help="the API's base URL (default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL, or the public API)")
    g.add_argument("--temperature", type=float, metavar="T", help="sampling temperature (default: the API's)")
    g.add_argument("--max-tokens", type=positive_int, metavar="N", help="bound on each reply's tokens")
    g.add_argument("--seed", type=int, metavar="N", help="sampling seed, where the API has one")
    g.add_argument("--judge", metavar="PROVIDER:MODEL",
                   help="the model that grades `judge` expectations (default: the model under test)")
    g.add_argument("--judge-base-url", metavar="URL", help="the judge's base URL (default: --base-url)")
    g.add_argument("--judge-template", metavar="FILE", help="a jinja2 template replacing the judge's prompt")
    g.add_argument("--user-model", metavar="PROVIDER:MODEL",
                   help="the model that plays a case's `simulated user` (required by such cases)")
    g.add_argument("--user-base-url", metavar="URL", help="the user model's base URL (default: --base-url)")
    g.add_argument("--user-template", metavar="FILE",
                   help="a jinja2 template replacing the simulated user's instructions")
    g.add_argument("--no-cache", action="store_true", help="send every request; keep no replies")
    g.add_argument("--cache-dir", metavar="DIR", help="where replies are kept (default .evaldsl/cache)")


def _shard(text: str) -> Any:
    """argparse's ``type=`` for ``--shard``: a `Shard`, or the reason it is not one."""
    from ..run._shard import Shard, ShardError

    try:
        return Shard.parse(text)
    except ShardError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--shard {text!r}: ")) from None


def run_request_of(args: argparse.Namespace) -> Any:
    """The `RunRequest` the parsed command line asks for (``args.argv``: the words given, as `main` sets it)."""
    from ..plan import Display, ModelOptions, Outputs, RunRequest, Selection

    models = ModelOptions(
        models=tuple(args.model or ()), base_url=args.base_url, temperature=args.temperature,
        max_tokens=args.max_tokens, seed=args.seed, judge=args.judge, judge_base_url=args.judge_base_url,
        judge_template=args.judge_template, user_model=args.user_model, user_base_url=args.user_base_url,
        user_template=args.user_template, cache=not args.no_cache, cache_dir=args.cache_dir)
    return RunRequest(
        paths=tuple(args.paths), agent=args.agent, harness=args.harness, agent_cmd=args.agent_cmd,
        agent_url=args.agent_url, upstream=args.upstream, models=models,
        selection=Selection(args.keyword, args.markers, tuple(args.tag), args.last_failed),
        concurrency=args.concurrency, exitfirst=args.exitfirst,
        outputs=Outputs(args.json, args.out, args.html, args.junit_xml, args.markdown, args.upload),
        resume=args.resume, shard=args.shard, executor=args.executor, root=args.root,
        suite_cache=not args.no_suite_cache, suite_cache_dir=args.suite_cache_dir, model_name=args.model_name,
        display=Display(args.quiet, args.verbose, args.tb), argv=tuple(getattr(args, "argv", None) or sys.argv[1:]))


def cmd_run(args: argparse.Namespace) -> int:
    """The `run` command; maps every outcome to its exit code."""
    from ..plan import NothingSelected, Outcome, PlanUsage, run_request
    from ..plan._ahead import allowed
    from ..plan._collector import start_up_paused

    try:
        with start_up_paused(), allowed():  # the collector off until the run starts; suites compiled ahead
            outcome = run_request(run_request_of(args))
    except PlanUsage as exc:
        print(f"evaldsl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except NothingSelected as exc:
        print(f"evaldsl: {exc}", file=sys.stderr)
        return EXIT_NO_TESTS
    except KeyboardInterrupt:
        print("evaldsl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:
        print("evaldsl: internal error (please report it):", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return EXIT_INTERNAL
    return {Outcome.PASSED: EXIT_OK, Outcome.FAILED: EXIT_FAILED, Outcome.UNWRITTEN: EXIT_INTERNAL,
            Outcome.INTERRUPTED: EXIT_INTERRUPTED}[outcome]
