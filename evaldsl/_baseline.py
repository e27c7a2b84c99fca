"""The shipped baseline suite: find it, compile it, dump it for editing.

The baseline (18 cases: arithmetic, language, tool use) lives as plain .evl
files, not as Python data, so that what `baseline()` runs is exactly what
`evaldsl baseline --dump DIR` hands a user to adapt. The files are found in
two places: inside an installed wheel, where pyproject force-includes
`suites/baseline` as `evaldsl/suites/baseline`, and in a source checkout or
editable install, at the repository's `suites/baseline`.

`tools.evl` there is a library (tools, no cases) that the other files `use`;
it is dumped with them but is not a suite of its own, so `baseline()` leaves
it out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .compile._model import CompiledSuite

__all__ = ["add_baseline_command", "baseline", "baseline_dir", "baseline_files", "dump_baseline"]


def baseline_dir() -> Path:
    """The directory holding the shipped baseline .evl files.

    Raises:
        FileNotFoundError: when neither the wheel's copy nor the checkout's exists.
    """
    package = Path(__file__).resolve().parent
    candidates = (package / "suites" / "baseline", package.parent / "suites" / "baseline")
    for candidate in candidates:
        if candidate.is_dir() and any(candidate.glob("*.evl")):
            return candidate
    looked = ", ".join(map(str, candidates))
    raise FileNotFoundError(f"the baseline suites are missing: looked in {looked}")


def baseline_files() -> dict[str, str]:
    """The baseline's files, file name -> text, sorted by name (the library included)."""
    from .compile._reading import read_source  # the one reader of .evl files

    paths = sorted(baseline_dir().glob("*.evl"))
    return {path.name: read_source(path) for path in paths}


def baseline() -> list[CompiledSuite]:
    """The baseline compiled: one suite per file with cases (18 cases in all).

    Returns:
        The compiled suites in file-name order; `tools.evl`, a library with
        no cases, is left out.
    """
    from . import load

    return [suite for suite in load(baseline_dir()) if suite.cases]


def dump_baseline(directory: str | Path, *, force: bool = False) -> list[Path]:
    """Write the baseline's files into `directory` (created if missing), for editing.

    Args:
        directory: where to write; the files keep their names.
        force: overwrite files that already exist there.

    Returns:
        The paths written, sorted by name.

    Raises:
        FileExistsError: when a file to write exists and `force` is false;
            nothing is written then.
    """
    target = Path(directory)
    files = baseline_files()
    clashes = [target / name for name in files if (target / name).exists()]
    if clashes and not force:
        raise _Clash(clashes, "pass force=True to overwrite them")
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = target / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


class _Clash(FileExistsError):
    """Files `dump_baseline` would overwrite; the message's hint suits the caller (API or CLI)."""

    def __init__(self, paths: list[Path], hint: str) -> None:
        self.paths = paths
        super().__init__(f"refusing to overwrite {', '.join(map(str, paths))} ({hint})")


# ------------------------------------------------------------------- CLI --


def add_baseline_command(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register `evaldsl baseline [--dump DIR] [--force]` on the CLI's subparsers."""
    parser = sub.add_parser(
        "baseline",
        help="list the shipped baseline suites, or dump them for editing",
        description=(
            "Without options, list the shipped baseline files and their case counts. "
            "With --dump DIR, write them into DIR to adapt to your own agent."
        ),
    )
    parser.add_argument("--dump", metavar="DIR", help="write the baseline .evl files into DIR")
    parser.add_argument("--force", action="store_true", help="overwrite existing files in DIR")
    parser.set_defaults(func=_baseline_command)


def _baseline_command(args: argparse.Namespace) -> int:
    if args.dump is None:
        if args.force:
            print("evaldsl baseline: --force only applies with --dump DIR", file=sys.stderr)
            return 4
        return _list_baseline()
    try:
        written = dump_baseline(args.dump, force=args.force)
    except _Clash as exc:  # the API's hint names a Python argument; here the option
        print(f"evaldsl baseline: {_Clash(exc.paths, 'use --force to overwrite them')}", file=sys.stderr)
        return 4
    except OSError as exc:
        print(f"evaldsl baseline: {exc}", file=sys.stderr)
        return 4
    for path in written:
        print(f"wrote {path}")
    return 0


def _list_baseline() -> int:
    from . import load

    total = 0
    for suite in load(baseline_dir()):
        name = Path(suite.file).name
        if not suite.cases:
            print(f"{name:<16} library (tools, no cases)")
            continue
        total += len(suite.cases)
        about = f"{suite.name}: {suite.description or ''}".rstrip()
        print(f"{name:<16} {len(suite.cases):>2} cases  {about}")
    print(f"{'total':<16} {total:>2} cases  (dump them with: evaldsl baseline --dump DIR)")
    return 0
