"""What an `evaldsl run` starts from: the agent (or harness) named on the command line, the .evl
files and their cases, the selection (`-k`, `-m`, `--tag`, `--lf`) and the record to resume.

`_run` plans and drives the run with these; `_run._load` (compiling the
files) stays there, where the benchmarks time it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._run_end import LAST_FAILED


class _Usage(Exception):
    """A problem with what the user asked for: one line on stderr, exit 4."""



def _warn_unseen(suites: list[Any], subject: Any) -> None:
    """Warn, once per suite, about `system` and mock answers an agent without a context never sees."""
    if subject.context:
        return
    from dataclasses import replace

    from ..compile._model import outlined
    from ..run._context import unseen_settings

    # it reads each case's name, settings and tools: outlines without expectations have them
    described = [replace(suite, cases=outlined(suite.cases, labels=False)) for suite in suites]
    for line in unseen_settings(described, f"{subject.kind} {subject.name!r}"):
        print(f"evaldsl: {line}", file=sys.stderr)

def _check_model_tools(suites: list[Any]) -> None:
    """A model run offers the model the suite's declared tools and nothing else: a suite that declares
    none but expects calls by name would fail every such case for no reason of the model's. Refused
    before anything runs, naming the tools and the file, and saying how to declare them."""
    from .. import parse
    from ..compile._expect import called_names
    from ..syntax._diagnostics import EvlError

    for suite in suites:
        if suite.tools:
            continue  # names no declared tool has are already compile errors (E218)
        try:
            names = called_names(parse(Path(suite.file).read_text(encoding="utf-8"), suite.file))
        except (OSError, UnicodeDecodeError, EvlError):
            continue  # it compiled a moment ago: nothing to add here
        if names:
            shown = ", ".join(sorted(names))
            raise _Usage(
                f"{suite.file}: its cases expect calls of {shown}, but the suite declares no tools, so a "
                "--model run would offer the model none and those cases could only fail. Declare them "
                f"(`tool {sorted(names)[0]} \"what it does\"` with its `param` lines, docs/language.md "
                "section 6), or `use \"tools.evl\"` a library that does (`evaldsl import --use FILE` adds that "
                "line to an imported suite).")


def _check_targets(args: argparse.Namespace) -> None:
    """Refuse record paths that cannot be what they must, before anything is loaded or run."""
    if args.json and Path(args.json).is_dir():
        raise _Usage(f"--json {args.json}: is a directory; --json takes a record file (--out takes a folder)")
    if args.html and Path(args.html).is_dir():
        raise _Usage(f"--html {args.html}: is a directory; --html takes the .html file to write")
    if args.out and Path(args.out).exists() and not Path(args.out).is_dir():
        raise _Usage(f"--out {args.out}: is a file; --out takes a folder for records (--json takes a file)")
    from ._outputs import check_output_targets

    if problem := check_output_targets(args):
        raise _Usage(problem)

def _subject(args: argparse.Namespace, model: Any = None) -> Any:
    from ..run._protocols import agent_subject, harness_subject, import_object

    if model is not None:
        return agent_subject(model)
    if getattr(args, "agent_cmd", None) or getattr(args, "agent_url", None):
        return _bridge_subject(args)
    spec = args.agent or args.harness
    if not spec:
        raise _Usage("give the agent to run: --agent MODULE:ATTR, --harness MODULE:ATTR, --agent-cmd COMMAND, "
                     "--agent-url URL or --model PROVIDER:MODEL")
    option = "--agent" if args.agent else "--harness"
    try:
        obj = import_object(spec)
        return agent_subject(obj) if args.agent else harness_subject(obj)
    except (ImportError, TypeError) as exc:
        raise _Usage(f"{option} {spec}: {exc}") from None

def _bridge_subject(args: argparse.Namespace) -> Any:
    """--agent-cmd / --agent-url: a program or an endpoint as the agent (`evaldsl.agents`)."""
    from ..run._protocols import agent_subject

    option, value = ("--agent-cmd", args.agent_cmd) if args.agent_cmd else ("--agent-url", args.agent_url)
    try:
        if args.agent_cmd:
            from ..agents import CommandAgent

            return agent_subject(CommandAgent(value, upstream=args.upstream))
        from ..agents import HttpAgent

        return agent_subject(HttpAgent(value))
    except ValueError as exc:
        raise _Usage(f"{option} {value}: {exc}") from None

def _files(paths: list[str]) -> list[Path]:
    """The .evl files the paths name (directories searched recursively, as `check` does);
    a path that does not exist, or a directory without one, is a usage error."""
    from ._lang import PathProblem, evl_files

    try:
        return evl_files(paths)
    except PathProblem as exc:
        raise _Usage("\nevaldsl: ".join(exc.problems)) from None

def _unique_files(paths: list[Path]) -> list[Path]:
    """Each file once, at its first mention: `d d/x.evl ./d/x.evl` names d/x.evl three times."""
    seen: set[Path] = set()
    out = []
    for path in paths:
        resolved = path.resolve()
        if resolved not in seen:
            seen.add(resolved)
            out.append(path)
    return out

def _previous(args: argparse.Namespace, subject: Any) -> Any:
    """What --resume finishes (the record and its journal, `report._journal.Unfinished`), if any;
    refused when another agent made it."""
    if not args.resume:
        return None
    from ..report._json import RecordError
    from ..report._unfinished import read_unfinished

    try:
        previous = read_unfinished(args.resume)
    except RecordError as exc:
        raise _Usage(str(exc)) from None
    ours = args.model_name or subject.name
    if previous.meta.agent != ours:
        raise _Usage(f"--resume {args.resume}: the record is of agent {previous.meta.agent!r}, not {ours!r}; "
                     "one record holds one agent (--model-name sets this run's name)")
    return previous

def _keep_last_failed(selected: Sequence[Any]) -> tuple[Sequence[Any], bool]:
    """The selected cases that failed when they last ran; all of them (and False) when none did."""
    from ..report._json import RecordError
    from ..report._lastfailed import case_ref, read_lastfailed

    try:
        ids = read_lastfailed(LAST_FAILED)
    except RecordError as exc:
        raise _Usage(f"--lf: {exc}") from None
    if not ids:
        why = f"no failures recorded in {LAST_FAILED}" if ids is None else "no case failed last time"
        print(f"evaldsl: --lf: {why}; running every selected case", file=sys.stderr)
        return selected, False
    from ..compile._model import case_keys
    from ..run._select import picked

    failed = set(ids)
    kept = picked(selected, [i for i, (f, n) in enumerate(case_keys(selected)) if case_ref(f, n) in failed])
    if not kept:
        print(f"evaldsl: --lf: none of the {len(failed)} case(s) that failed last time is selected; "
              "running every selected case", file=sys.stderr)
        return selected, False
    return kept, True

def _select(flat: Sequence[Any], args: argparse.Namespace) -> Sequence[Any]:
    from ..run._select import SelectionError, select_cases

    try:
        return select_cases(flat, keyword=args.keyword, markers=args.markers, tags=args.tag)
    except SelectionError as exc:
        raise _Usage(str(exc)) from None
