"""`RunPlan`: what one run will do, decided before anything runs (`_build.build_plan` makes it,
`_drive.run_plan` carries it out), and `RanCases`, what it ran, for the ``--lf`` memory."""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, TextIO

from ._request import RunRequest

_STATUSES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
_FAILED = (_STATUSES.index("failed"), _STATUSES.index("error"))


class RanCases:
    """The cases that ran this time: each one's place in the record and its status, in two arrays
    (a run of 100,000 cases keeps 9 bytes a case here; the keeper has their keys)."""

    def __init__(self) -> None:
        self.positions = array("q")
        self.statuses = bytearray()

    def add(self, position: int, status: str) -> None:
        self.positions.append(position)
        self.statuses.append(_STATUSES.index(status))

    def in_order(self, keeper: Any) -> Iterator[tuple[str, bool]]:
        """Each case that ran, in record order: its id for the --lf cache (``file::name``, its key
        from the keeper, already normalized as `case_ref` normalizes it) and whether it failed."""
        from ..report._lastfailed import key_ref

        positions, statuses, failed = self.positions, self.statuses, _FAILED
        order: Sequence[int] = range(len(positions))
        if any(a > b for a, b in zip(positions, islice(positions, 1, None))):
            order = sorted(order, key=positions.__getitem__)
        key = keeper.key
        for i in order:
            yield key_ref(key(positions[i])), statuses[i] in failed


@dataclass
class RunPlan:
    """What a run will do, decided before anything runs: ready to hand to `run_plan`."""

    request: RunRequest
    """The request as this run reads it (``--resume DIR`` already resolved to a record or an --out folder)."""
    subject: Any
    """The runnable agent or harness (`run._protocols.Subject`)."""
    suites: list[Any]
    """The compiled suites, every file once."""
    todo: Sequence[Any]
    """The cases to run now: the selection, less those a resumed record has done, this shard's slice."""
    keeper: Any
    """The `RecordKeeper`: the record files and where each finished case is in them."""
    digest: Any
    """The terminal summary's `Digest`, kept as cases finish."""
    models: Any = None
    """The run's `ModelSetup` (model, judge, simulated user, cache)."""
    executor: Any = None
    """None for this process's runner; a `RayExecutor` for ``--executor ray``."""
    selected: int = 0
    """How many cases were selected (those a resumed record had done included)."""
    resumed: bool = False
    """True when the record of an earlier run is being finished."""
    ran: RanCases = field(default_factory=RanCases)
    """The cases that ran this time, for the --lf cache."""
    stop: Any = None
    """Set (an `asyncio.Event`, made when the run starts) when an endpoint is found down: the run is stopped."""
    out: TextIO = field(default_factory=lambda: sys.stdout)
    """Where the report goes."""
    err: TextIO = field(default_factory=lambda: sys.stderr)
    """Where progress, notes and warnings go."""
