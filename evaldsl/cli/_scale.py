"""`evaldsl run --shard I/N` and `--executor ray`: the CLI side (docs/scale.md).

Kept out of `_run.py` so that the run command's module stays about the
run; the work is `run._shard`'s and `run._ray`'s.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ._run_inputs import _Usage


def shard_type(text: str) -> Any:
    """argparse's ``type=`` for ``--shard``: a `Shard`, or the reason it is not one."""
    from ..run._shard import Shard, ShardError

    try:
        return Shard.parse(text)
    except ShardError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--shard {text!r}: ")) from None


def sharded(selected: Sequence[Any], args: argparse.Namespace, meta: Any, previous: Any) -> Sequence[Any]:
    """This shard's slice of the selected cases (all of them without ``--shard``).

    An empty slice is a note, not an error (exit 0: a CI matrix wider than
    the suite must not fail for it), and still writes its (empty) record for
    `evaldsl merge`. A shard record is resumed only by the same shard.
    """
    from ..run._shard import shard_cases

    shard = args.shard
    if previous is not None and previous.meta.shard != (str(shard) if shard else None):
        raise _Usage(f"--resume {args.resume}: the record is of shard {previous.meta.shard or 'none (all cases)'}, "
                     f"this run of {shard or 'all cases'}; resume a shard with the same --shard")
    if shard is None:
        return selected
    mine = shard_cases(selected, shard, meta.suites)
    meta.shard = str(shard)
    if not mine:
        print(f"evaldsl: shard {shard} holds none of the {len(selected)} selected case(s); nothing to run",
              file=sys.stderr)
    return mine


def executor(args: argparse.Namespace) -> Any:
    """None for the local runner; for ``--executor ray``, a `RayExecutor` connected to the cluster."""
    if args.executor != "ray":
        return None
    if getattr(args, "model", None):
        raise _Usage("--executor ray runs an --agent or a --harness; a --model run stays in this process "
                     "(its cost is waiting on the endpoint, which -j already spreads)")
    from ..run._ray import RayExecutor, RayUnavailable

    try:
        return RayExecutor(args.agent or args.harness, kind="agent" if args.agent else "harness", connect=True)
    except RayUnavailable as exc:
        raise _Usage(f"--executor ray: {exc}") from None
