"""The cyclic collector through the start-up of `evaldsl run`: off from the command's start until its
run starts, then what start-up made frozen and the collector on again.

Start-up (the parser's, the models', aiohttp's and the record's imports, the compile, the plan) makes
a few hundred thousand objects that live as long as the process and almost no garbage; left on, the
collector walks them again and again (about 30 collections before a model run's first request, one of
them over the whole heap) and finds them all alive. Frozen, they are never walked again. The pause is
the command line's alone (`cli/_run.py`): a library caller's collector is left as it is, and a run (a
user's agent, the runner) always has the collector on.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_paused = False
"""True from `start_up_paused` until the run starts (`run_starts`)."""


@contextmanager
def start_up_paused() -> Iterator[None]:
    """The collector off until `run_starts` (or the end of the block, when no run started); left
    alone when the caller already had it off."""
    global _paused
    if not gc.isenabled():
        yield
        return
    gc.disable()
    _paused = True
    try:
        yield
    finally:
        if _paused:  # planning failed (or nothing was selected): no run started
            _paused = False
            gc.enable()


def run_starts() -> None:
    """A run is about to start: if start-up paused the collector, freeze what start-up made and turn
    the collector on again. Nothing otherwise."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
