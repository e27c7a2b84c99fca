"""The `evaldsl` command line: argument parsing only; every command calls the library.

Commands register themselves here, one module per command family:
`_lang.py` (check, fmt, compile, schema), `_run.py` (run, baseline; the run
itself is `evaldsl.plan`'s), `_report.py`, `_compare.py`, `_rescore.py`,
`_upload.py`, `_import.py`, `_lsp.py`, `_merge.py`.
Exit codes follow pytest: 0 ok, 1 failures, 2 interrupted, 3 internal
error, 4 usage or compile error, 5 nothing selected.

No command module imports another (tests/unit/test_cli_layers.py): what
several commands share is either library work, and lives in the library
(`evaldsl.plan`: model options, the .evl files paths name, the recorded
command line), or a piece of argument parsing itself, and lives here, in
the package, which they import as ``from . import name``: the exit codes
the argparse ``type=`` functions and the options several commands take
alike (``--root``, the suite cache's). The package imports its command
modules only inside `build_parser`, so importing one of them (which loads
this package first) never meets a half-made package.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 2
EXIT_INTERNAL = 3
EXIT_USAGE = 4
EXIT_NO_TESTS = 5


ROOT_HELP = "refuse `use` and `examples from` paths outside DIR (for suites you did not write)"
"""``--root``'s help, one wording for check, compile, run and lsp."""


def add_suite_cache_options(p: argparse.ArgumentParser) -> None:
    """--suite-cache-dir and --no-suite-cache, as check and run take them (docs/running.md, "The suite cache")."""
    from ..compile._suite_cache import DIR_HELP, OFF_HELP

    p.add_argument("--suite-cache-dir", metavar="DIR", help=DIR_HELP)
    p.add_argument("--no-suite-cache", action="store_true", help=OFF_HELP)


def positive_int(text: str) -> int:
    """argparse's ``type=`` for a whole number of at least 1: one wording for a bad number everywhere
    (argparse names the option: ``argument -j/--concurrency: must be at least 1, not 0``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def positive_float(text: str) -> float:
    """argparse's ``type=`` for a number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
    return value


LANGUAGE_COMMANDS = frozenset({"check", "fmt", "compile", "schema"})
"""`_lang.py`'s commands: when the command line names one, only they are built (an editor's `check`
starts sooner: every other command's arguments are about 30 M instructions, bench/README.md)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (``command`` one of `LANGUAGE_COMMANDS`) the language commands' part."""
    from .. import __version__
    from ._lang import add_language_commands

    parser = argparse.ArgumentParser(
        prog="evaldsl",
        description="pytest, but for LLM agents: check, format and run .evl case files.",
    )
    parser.add_argument("--version", action="version", version=f"evaldsl {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_language_commands(sub)
    if command in LANGUAGE_COMMANDS:
        return parser
    from ._compare import add_compare_command
    from ._import import add_import_command
    from ._lsp import add_lsp_command
    from ._merge import add_merge_command
    from ._report import add_report_command
    from ._rescore import add_rescore_command
    from ._run import add_run_commands
    from ._upload import add_upload_command

    add_run_commands(sub)
    add_import_command(sub)
    add_lsp_command(sub)
    add_compare_command(sub)
    add_rescore_command(sub)
    add_upload_command(sub)
    add_report_command(sub)
    add_merge_command(sub)
    return parser


class _UsageExit(Exception):
    pass


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage; pytest's code for that is 4
        code = exc.code if isinstance(exc.code, int) else EXIT_USAGE
        return EXIT_USAGE if code == 2 else code
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args.argv = list(sys.argv[1:] if argv is None else argv)  # as given: a command printed back must work
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("evaldsl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
