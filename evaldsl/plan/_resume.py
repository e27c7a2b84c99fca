"""How an interrupted run ends and is finished: the command that resumes it, ``--resume DIR``, a
second Ctrl-C while the record is kept, an endpoint found down."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ._request import RunRequest


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


def resume_in_folder(request: RunRequest, subject: Any) -> RunRequest:
    """`--resume DIR` (the --out folder of an earlier run): the request that finishes this agent's latest
    unfinished record there; with none, the request that keeps a new record there, as with --out DIR. So
    one command finishes a run of several --model values, each model's record once."""
    from ..report._json import RecordError
    from ..report._unfinished import read_unfinished

    assert request.resume is not None
    folder, name = Path(request.resume), request.model_name or subject.name
    found: list[tuple[str, Path]] = []
    for path in folder.glob("*.json"):
        try:
            meta = read_unfinished(path).meta
        except (RecordError, OSError):
            continue  # not a record (a dashboard's data, say): not ours to finish
        if meta.agent == name and not meta.complete:
            found.append((meta.started_at.isoformat() if meta.started_at else "", path))
    out, resume = (None, str(max(found)[1])) if found else (str(folder), None)
    return replace(request, outputs=replace(request.outputs, out=out), resume=resume)


def resume_target(keeper: Any, request: RunRequest, last_record: Path) -> str | None:
    """What `--resume` takes to finish this run: the --out folder when several models run (each
    model's record is found there), else the record file (``.evaldsl/last.json`` when none was named)."""
    if len(request.models.models) > 1 and request.outputs.out:  # (a --resume DIR run has its folder as --out)
        return str(request.outputs.out)
    written = keeper.written
    if written:
        return str(written[0])
    return str(last_record) if keeper.optional_kept else None


def resume_command(argv: Any, target: str) -> str:
    """The command that finishes an interrupted run: the one given (``argv``, the words after
    ``evaldsl``), its record options replaced by ``--resume TARGET`` (printed to be copied as it is)."""
    import shlex

    kept, skip = [], False
    for arg in argv:
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
