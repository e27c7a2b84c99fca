"""`evaldsl check`, `fmt`, `compile` and `schema`: the language commands.

Argument parsing and printing only; each command calls the library (the
.evl files that paths name: `evaldsl.plan._paths`, shared with `run` and
`rescore`). None of this imports httpx or jinja2, so `check` starts fast.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path
from typing import Any

from ..plan._paths import PathProblem, evl_files, expand_paths
from . import ROOT_HELP, add_suite_cache_options


def add_language_commands(sub: Any) -> None:
    p = sub.add_parser("check", help="parse and compile .evl files; report every problem")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or directories (searched for *.evl)")
    p.add_argument("--error-format", choices=("long", "short"), default="long",
                   help="long: framed, with the source line (default); short: one line each")
    p.add_argument("--strict", action="store_true", help="warnings fail the check too")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--harness", metavar="MODULE:ATTR",
                     help="a harness whose custom predicates are known (unknown names become errors)")
    who.add_argument("--agent", metavar="MODULE:ATTR",
                     help="the agent the suites are for: warn when it cannot see their `system` or mock tools")
    p.add_argument("--root", metavar="DIR", help=ROOT_HELP)
    p.add_argument("--import-worlds", action="store_true",
                   help="import each suite's `world` file (runs its Python) so that its tools' names are "
                        "checked like declared tools; without it, no Python is run and they are not checked")
    add_suite_cache_options(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("fmt", help="rewrite .evl files in canonical layout (comments kept)",
                       epilog=_FMT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories, or - for stdin to stdout")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    p.add_argument("--diff", action="store_true", help="change nothing; print a unified diff")
    p.add_argument("--line-width", type=_width, default=100, metavar="N",
                   help="columns a line may take before fmt breaks it (default 100)")
    p.add_argument("--error-format", choices=("long", "short"), default="long",
                   help="how a file that does not parse is reported (as for check)")
    p.set_defaults(func=cmd_fmt)

    p = sub.add_parser("compile", help="compile one .evl file and print what it compiles to")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--json", action="store_true", help="the compiled suite as JSON, for tools")
    p.add_argument("--root", metavar="DIR", help=ROOT_HELP)
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("schema", help="print the JSON Schema of the .evl AST (or of the run record)")
    p.add_argument("--record", action="store_true", help="the run record's schema instead")
    p.set_defaults(func=cmd_schema)


def _predicates_of(spec: str | None) -> dict[str, Any] | None:
    if spec is None:
        return None
    from ..run._protocols import import_object, predicates_of

    return dict(predicates_of(import_object(spec)))


def _blind_subject(args: argparse.Namespace) -> str | None:
    """The agent or harness named on the command line when it takes no case context
    (as the warning names it); None when none is named or it takes one."""
    spec = args.harness or args.agent
    if spec is None:
        return None
    from ..run._protocols import import_object, receives_context

    obj = import_object(spec)
    if receives_context(obj, harness=bool(args.harness)):
        return None
    return f"{'harness' if args.harness else 'agent'} {spec!r}"


def cmd_check(args: argparse.Namespace) -> int:
    from ..compile._compiler import check_suite
    from ..compile._loading import cache_options
    from ..compile._reading import read_source
    from ..syntax._diagnostics import EvlError

    try:
        predicates = _predicates_of(args.harness)
        blind = _blind_subject(args)
    except Exception as exc:  # an unimportable agent or harness is a usage error, said in one line
        option = "--harness" if args.harness else "--agent"
        print(f"evaldsl: cannot load {option} {args.harness or args.agent}: {exc}", file=sys.stderr)
        return 4
    try:
        files = evl_files(args.paths, missing_ok=True)  # a missing file is its own E002, below
    except PathProblem as exc:
        for problem in exc.problems:
            print(f"evaldsl: {problem}", file=sys.stderr)
        return 4
    errors = warnings = 0
    unimported: list[str] = []
    from ..compile._suite_cache import suite_cache

    cache = suite_cache(args.suite_cache_dir, enabled=not args.no_suite_cache, root=args.root)
    kind = "check" + ("+cases" if blind else "") + ("+worlds" if args.import_worlds else "")
    for file in files:
        try:
            text = read_source(file)  # read once: the warnings are shown with it too

            def compiled(text: str = text, file: Path = file) -> Any:
                return check_suite(text, str(file), predicates=predicates, root=args.root, keep_cases=bool(blind),
                                   import_worlds=args.import_worlds)

            options = cache_options(kind, predicates, args.root)
            suite = compiled() if cache is None else cache.compiled(str(file), text, options, compiled)
            diagnostics, sources = list(suite.warnings), {str(file): text}
            if suite.world is not None and not suite.world.loaded:
                unimported.append(str(file))
            if blind:
                from ..run._context import unseen_settings

                unseen = unseen_settings([suite], blind)
                for line in unseen:
                    print(f"evaldsl: {line}", file=sys.stderr)
                warnings += len(unseen)
        except EvlError as exc:
            diagnostics, sources = exc.diagnostics, exc.sources
        if diagnostics:
            print(EvlError(diagnostics, sources).render(style=args.error_format))
            if args.error_format == "long":
                print()
        errors += sum(d.severity == "error" for d in diagnostics)
        warnings += sum(d.severity == "warning" for d in diagnostics)
    if unimported:
        print(_unimported_note(unimported), file=sys.stderr)
    noun = "file" if len(files) == 1 else "files"
    print(f"checked {len(files)} {noun}: {errors} error(s), {warnings} warning(s)", file=sys.stderr)
    return 1 if errors or (args.strict and warnings) else 0


def _unimported_note(files: list[str]) -> str:
    """What `check` could not check in suites whose world it did not import (said, never silently skipped)."""
    shown = files[0] if len(files) == 1 else f"{len(files)} files"
    return (f"note: {shown}: the world's file was not imported, so tool names and argument keys were not "
            "checked (the world's tools are unknown); --import-worlds imports it")


_FMT_EPILOG = """\
exit codes: 0 every file is (or now is) formatted; 1 with --check or --diff, a file
would be reformatted; 4 a file does not parse or cannot be read (nothing is written
to it), or no .evl file was found. The highest applicable code wins."""


def _width(text: str) -> int:
    value = int(text)
    if value < 20:
        raise argparse.ArgumentTypeError("the line width must be at least 20")
    return value


def cmd_fmt(args: argparse.Namespace) -> int:
    from ..compile._reading import decode_source, read_source
    from ..syntax._diagnostics import EvlError
    from ..syntax._format import format_text

    if args.paths == ["-"]:
        try:
            text = decode_source(sys.stdin.buffer.read(), "<stdin>")
            sys.stdout.write(format_text(text, "<stdin>", line_width=args.line_width))
        except EvlError as exc:
            print(exc.render(style=args.error_format), file=sys.stderr)
            return 4
        return 0
    files = expand_paths(args.paths)
    if not files:
        print("evaldsl: no .evl files found", file=sys.stderr)
        return 4
    status = 0
    for file in files:
        try:
            text = read_source(file)  # the reader of check and run: no newline translation
            new = format_text(text, str(file), line_width=args.line_width)
        except EvlError as exc:
            print(exc.render(style=args.error_format), file=sys.stderr)
            status = 4
            continue
        if new != text:
            status = max(status, _changed(file, text, new, args))
    return status


def _changed(file: Path, text: str, new: str, args: argparse.Namespace) -> int:
    """Show, or write, a file's new layout; the exit code that asks for."""
    if args.diff:
        sys.stdout.writelines(difflib.unified_diff(_lines(text), _lines(new), str(file), str(file)))
    if args.check or args.diff:
        print(f"would reformat {file}", file=sys.stderr)
        return 1
    try:
        file.write_bytes(new.encode("utf-8"))
    except OSError as exc:
        print(f"evaldsl: cannot write {file}: {exc.strerror}", file=sys.stderr)
        return 4
    print(f"reformatted {file}", file=sys.stderr)
    return 0


def _lines(text: str) -> list[str]:
    """Lines as the parser sees them: a lone `\\r` (or U+2028) is not a line break."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def cmd_compile(args: argparse.Namespace) -> int:
    from ..compile._loading import compile_file
    from ..syntax._diagnostics import EvlError

    try:
        suite = compile_file(args.file, root=args.root)
    except EvlError as exc:
        if args.json:  # a tool reads stdout: the diagnostics, as JSON too
            print(json.dumps({"diagnostics": [diagnostic_json(d) for d in exc.diagnostics]},
                             indent=2, ensure_ascii=False))
        else:
            print(exc.render(), file=sys.stderr)
        return 1
    if args.json:
        data = {**suite.to_json(), "diagnostics": [diagnostic_json(d) for d in suite.warnings]}
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    print(f"suite {suite.name!r} ({suite.file}): {len(suite.cases)} case(s), {len(suite.tools)} tool(s)")
    if suite.world is not None:
        print(f"  world {json.dumps(suite.world.spec)}: {', '.join(t.name for t in suite.world.tools)}")
    for case in suite.cases:
        print(f"  case {case.name!r} (line {case.line})")
        for setting in _settings_shown(case.settings):
            print(f"    {setting}")
        for exp in case.expectations:
            print(f"    expect {exp.label}    [line {exp.line}]")
        for line in _conversation_shown(case):
            print(f"    {line}")
    return 0


def _conversation_shown(case: Any) -> list[str]:
    """A case's v2 lines as `compile` lists them: turns with their expectations, the simulated
    user, the `given` lines (nothing for a v1 case)."""
    shown = []
    for turn in case.turns:
        shown.append(f"user {json.dumps(turn.message, ensure_ascii=False)}    [line {turn.line}]")
        shown += [f"  expect {exp.label}    [line {exp.line}]" for exp in turn.expectations]
    if case.simulated_user is not None:
        first = case.simulated_user.split("\n", 1)[0]
        more = " ..." if "\n" in case.simulated_user else ""
        shown.append(f"simulated user {json.dumps(first, ensure_ascii=False)}{more} (user turns "
                     f"{case.settings.user_turns})")
    for rule in case.given:
        steps = " then ".join(f"{'returns' if s.ok else 'fails'} {json.dumps(s.text, ensure_ascii=False)}"
                              for s in rule.steps)
        shown.append(f"given {rule.tool} ... {steps}    [line {rule.line}]")
    return shown


def _settings_shown(settings: Any) -> list[str]:
    """The settings that change how a case runs or counts, written as in a .evl file."""
    shown = []
    if settings.tags:
        shown.append("tags " + ", ".join(settings.tags))
    if settings.skip is not None:
        shown.append("skip" + (f" {json.dumps(settings.skip)}" if settings.skip else ""))
    if settings.xfail is not None:
        shown.append("xfail" + (f" {json.dumps(settings.xfail)}" if settings.xfail else ""))
    if settings.repeat != 1:
        shown.append(f"repeat {settings.repeat}")
    if settings.pass_rate != 1.0:
        shown.append(f"pass rate at least {settings.pass_rate:g}")
    return shown


def diagnostic_json(diagnostic: Any) -> dict[str, Any]:
    """One diagnostic for tools: where (1-based, end exclusive; null for a whole-file problem),
    what, and the hint (`= help:` of the text form; `suggestion` is the did-you-mean name alone)."""
    span = diagnostic.span
    hints = [f"did you mean `{diagnostic.suggestion}`?"] if diagnostic.suggestion else []
    hints += [diagnostic.help] if diagnostic.help else []
    return {
        "file": diagnostic.file,
        "line": span.line if span else None,
        "column": span.column if span else None,
        "end_line": span.end_line if span else None,
        "end_column": span.end_column if span else None,
        "code": diagnostic.code,
        "severity": diagnostic.severity,
        "message": diagnostic.message,
        "label": diagnostic.label,
        "hint": "; ".join(hints) or None,
        "suggestion": diagnostic.suggestion,
    }


def cmd_schema(args: argparse.Namespace) -> int:
    if args.record:
        from ..run._record import record_schema

        schema = record_schema()
    else:
        from ..syntax._ast import Suite

        schema = Suite.model_json_schema()
    print(json.dumps(schema, indent=2))
    return 0
