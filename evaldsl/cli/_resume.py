"""How an interrupted run ends and is finished: the command that resumes it, `--resume DIR`, a
second Ctrl-C while the record is kept, an endpoint found down. Imports no sibling module."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def keeping_the_record() -> Iterator[None]:
    """From an interrupt on, a further Ctrl-C is noted, not obeyed: it would stop the record's write
    half way (the journal would still hold the cases, but the record would not say so). Once the
    record is kept, Ctrl-C is ignored until the process ends: a handler restored then would still be
    handed a Ctrl-C that arrived during the write (Python runs a handler later than its signal
    arrives), and one that comes while the interpreter shuts down would kill it by the signal,
    exit status and all. Off the main thread (no signals there) nothing changes."""
    import signal

    def note(signum: int, frame: Any) -> None:
        print("evaldsl: interrupted again; the record is being kept (a moment)", file=sys.stderr)

    try:
        signal.signal(signal.SIGINT, note)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def resume_in_folder(args: argparse.Namespace, subject: Any) -> None:
    """`--resume DIR` (the --out folder of an earlier run): this agent's latest unfinished record there
    is finished; with none, a new record is kept there, as with --out DIR. So one command finishes a
    run of several --model values, each model's record once."""
    from ..report._json import RecordError
    from ..report._unfinished import read_unfinished

    folder, name = Path(args.resume), args.model_name or subject.name
    found: list[tuple[str, Path]] = []
    for path in folder.glob("*.json"):
        try:
            meta = read_unfinished(path).meta
        except (RecordError, OSError):
            continue  # not a record (a dashboard's data, say): not ours to finish
        if meta.agent == name and not meta.complete:
            found.append((meta.started_at.isoformat() if meta.started_at else "", path))
    args.out, args.resume = (None, str(max(found)[1])) if found else (str(folder), None)


def resume_target(keeper: Any, args: argparse.Namespace, last_record: Path) -> str | None:
    """What `--resume` takes to finish this run: the --out folder when several models run (each
    model's record is found there), else the record file (``.evaldsl/last.json`` when none was named)."""
    if len(args.model or []) > 1 and args.out:  # (a --resume DIR run has its folder as --out here)
        return str(args.out)
    written = keeper.written
    if written:
        return str(written[0])
    return str(last_record) if keeper.optional_kept else None


def resume_command(args: argparse.Namespace, target: str) -> str:
    """The command that finishes an interrupted run: the one given, its record options replaced by
    ``--resume TARGET`` (printed to be copied as it is)."""
    import shlex

    kept, skip = [], False
    for arg in getattr(args, "argv", None) or []:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--json", "--out", "--resume"):
            skip = "=" not in arg
            continue
        kept.append(arg)
    return shlex.join(["evaldsl", *kept, "--resume", target])


class EndpointDown(Exception):
    """The model (or judge) endpoint refused every connection before it ever answered."""
