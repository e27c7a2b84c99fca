"""What a run starts from: the agent (or harness, command, endpoint) asked for, the .evl files and their
compiled suites, the selection (``-k``, ``-m``, ``--tag``, ``--lf``) and the record to resume.

Each function reads the `RunRequest` and raises `PlanUsage` with one message when what was asked for
cannot be had; warnings go to the ``err`` stream given. `_build.build_plan` calls them in order.
`load_suites` is looked up on this module when called, so a benchmark can time or replace it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ._defaults import LAST_FAILED
from ._request import PlanUsage, RunRequest


def check_targets(request: RunRequest) -> None:
    """Refuse record and report paths that cannot be what they must, before anything is loaded or run."""
    o = request.outputs
    if o.json and Path(o.json).is_dir():
        raise PlanUsage(f"--json {o.json}: is a directory; --json takes a record file (--out takes a folder)")
    if o.html and Path(o.html).is_dir():
        raise PlanUsage(f"--html {o.html}: is a directory; --html takes the .html file to write")
    if o.out and Path(o.out).exists() and not Path(o.out).is_dir():
        raise PlanUsage(f"--out {o.out}: is a file; --out takes a folder for records (--json takes a file)")
    for option, path in (("--junit-xml", o.junit_xml), ("--markdown", o.markdown)):
        if path and Path(path).is_dir():
            raise PlanUsage(f"{option} {path}: is a directory; {option} takes a file")


def files_of(paths: Sequence[str]) -> list[Path]:
    """The .evl files the paths name (directories searched recursively, as `check` does);
    a path that does not exist, or a directory without one, is a usage error."""
    from ._paths import PathProblem, evl_files

    try:
        return evl_files(paths)
    except PathProblem as exc:
        raise PlanUsage("\nevaldsl: ".join(exc.problems)) from None


def subject_of(request: RunRequest, model: Any = None) -> Any:
    """The runnable subject: the ``model`` agent when given, else the agent, harness, command or endpoint
    the request names."""
    from ..run._protocols import agent_subject, harness_subject, import_object

    if model is not None:
        return agent_subject(model)
    if request.agent_cmd or request.agent_url:
        return _bridge_subject(request)
    spec = request.agent or request.harness
    if not spec:
        raise PlanUsage("give the agent to run: --agent MODULE:ATTR, --harness MODULE:ATTR, --agent-cmd COMMAND, "
                        "--agent-url URL or --model PROVIDER:MODEL")
    option = "--agent" if request.agent else "--harness"
    try:
        obj = import_object(spec)
        return agent_subject(obj) if request.agent else harness_subject(obj)
    except (ImportError, TypeError) as exc:
        raise PlanUsage(f"{option} {spec}: {exc}") from None


def _bridge_subject(request: RunRequest) -> Any:
    """--agent-cmd / --agent-url: a program or an endpoint as the agent (`evaldsl.agents`)."""
    from ..run._protocols import agent_subject

    cmd, url = request.agent_cmd, request.agent_url
    option, value = ("--agent-cmd", cmd) if cmd else ("--agent-url", url)
    try:
        if cmd:
            from ..agents import CommandAgent

            return agent_subject(CommandAgent(cmd, upstream=request.upstream))
        from ..agents import HttpAgent

        return agent_subject(HttpAgent(str(url)))
    except ValueError as exc:
        raise PlanUsage(f"{option} {value}: {exc}") from None


def load_suites(files: list[Path], subject: Any, request: RunRequest, ahead: Any = None) -> list[Any]:
    """Compile every file once (or take it from the suite cache), all errors at once; ``ahead``: a
    `_ahead.CompileAhead` compiling them in a second process, whose result is taken when it has one."""
    import gc

    from ..syntax._diagnostics import EvlError

    predicates = subject.predicates if subject.kind == "harness" else None
    # The collector paused through the compile and the imports it brings (lark, the parser), then what
    # they made frozen: left on, it walked everything the process had made (a full collection at the
    # parser's import, 5-6 % of a model run's first request) only to find it all alive.
    enabled = gc.isenabled()
    gc.disable()
    try:
        taken = ahead.take() if ahead is not None and predicates is None else None
        if taken is None:
            suites = compiled(files, request, predicates)
        elif taken[0] == "error":
            raise EvlError(*taken[1])
        else:
            suites = taken[1]
        gc.freeze()  # the compiled suites live as long as the process: the collector need not rescan them
    except EvlError as exc:
        raise PlanUsage("cannot run: the suites do not compile\n" + exc.render()) from None
    finally:
        if enabled:
            gc.enable()
    return suites


def compiled(files: Sequence[Path], request: RunRequest, predicates: Any = None) -> list[Any]:
    """The files compiled as ``request`` asks (each once, through its suite cache); `EvlError` with every
    file's problems. What `load_suites` compiles, and what `_ahead`'s child compiles for it."""
    from ..compile._loading import compile_files
    from ..compile._suite_cache import suite_cache
    from ._paths import unique_files

    cache = suite_cache(request.suite_cache_dir, root=request.root, enabled=request.suite_cache)
    return compile_files(unique_files(list(files)), predicates=predicates, root=request.root, cache=cache)


def warn_unseen(suites: list[Any], subject: Any, err: TextIO) -> None:
    """Warn, once per suite, about `system` and mock answers an agent without a context never sees."""
    if subject.context:
        return
    from dataclasses import replace

    from ..compile._model import outlined
    from ..run._context import unseen_settings

    # it reads each case's name, settings and tools: outlines without expectations have them
    described = [replace(suite, cases=outlined(suite.cases, labels=False)) for suite in suites]
    for line in unseen_settings(described, f"{subject.kind} {subject.name!r}"):
        print(f"evaldsl: {line}", file=err)


def check_model_tools(suites: list[Any]) -> None:
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
            raise PlanUsage(
                f"{suite.file}: its cases expect calls of {shown}, but the suite declares no tools, so a "
                "--model run would offer the model none and those cases could only fail. Declare them "
                f"(`tool {sorted(names)[0]} \"what it does\"` with its `param` lines, docs/language.md "
                "section 6), or `use \"tools.evl\"` a library that does (`evaldsl import --use FILE` adds that "
                "line to an imported suite).")


def previous_record(request: RunRequest, subject: Any) -> Any:
    """What --resume finishes (the record and its journal, `report._journal.Unfinished`), if any;
    refused when another agent made it."""
    if not request.resume:
        return None
    from ..report._json import RecordError
    from ..report._unfinished import read_unfinished

    try:
        previous = read_unfinished(request.resume)
    except RecordError as exc:
        raise PlanUsage(str(exc)) from None
    ours = request.model_name or subject.name
    if previous.meta.agent != ours:
        raise PlanUsage(f"--resume {request.resume}: the record is of agent {previous.meta.agent!r}, not {ours!r}; "
                        "one record holds one agent (--model-name sets this run's name)")
    return previous


def select(flat: Sequence[Any], request: RunRequest) -> Sequence[Any]:
    """The cases ``-k``, ``-m`` and ``--tag`` keep (``--lf`` is `keep_last_failed`, later)."""
    from ..run._select import SelectionError, select_cases

    s = request.selection
    try:
        return select_cases(flat, keyword=s.keyword, markers=s.markers, tags=list(s.tags))
    except SelectionError as exc:
        raise PlanUsage(str(exc)) from None


def keep_last_failed(selected: Sequence[Any], err: TextIO) -> tuple[Sequence[Any], bool]:
    """The selected cases that failed when they last ran; all of them (and False) when none did."""
    from ..report._json import RecordError
    from ..report._lastfailed import case_ref, read_lastfailed

    try:
        ids = read_lastfailed(LAST_FAILED)
    except RecordError as exc:
        raise PlanUsage(f"--lf: {exc}") from None
    if not ids:
        why = f"no failures recorded in {LAST_FAILED}" if ids is None else "no case failed last time"
        print(f"evaldsl: --lf: {why}; running every selected case", file=err)
        return selected, False
    from ..compile._model import case_keys
    from ..run._select import picked

    failed = set(ids)
    kept = picked(selected, [i for i, (f, n) in enumerate(case_keys(selected)) if case_ref(f, n) in failed])
    if not kept:
        print(f"evaldsl: --lf: none of the {len(failed)} case(s) that failed last time is selected; "
              "running every selected case", file=err)
        return selected, False
    return kept, True
