"""User code called while scoring, bounded by the case's timeout.

A custom predicate that never returns would hold the event loop, and with
it every case of the run, forever; the record would never be completed. So
user code run while scoring (a harness's custom predicates; a world's
``state()``) is called on a daemon thread of its own, and waited for at most
the case's timeout (the limit the runner sets before scoring a run, the same
one regex matches use, `_regex.set_match_limit`). Past it the call is
abandoned: Python cannot stop a thread, so it runs on in the background
until it returns or the process ends (docs/running.md says so), and the run
becomes an error that names what did not return and the bound.

Waiting holds the loop for up to that bound; the runner's `LoopClock` adds
scoring time to every other case's deadline, so no other case times out
because of it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from . import _regex


class ScoringTimeout(TimeoutError):
    """User code called while scoring did not return within the case's timeout."""

    error_kind = "predicate_timeout"


def call_bounded(what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, or `ScoringTimeout` naming ``what`` after the current limit."""
    limit = _regex.current_limit()
    box: list[Any] = []
    done = threading.Event()

    def call() -> None:
        try:
            box.append((True, fn(*args, **kwargs)))
        except BaseException as exc:  # raised again on the scoring thread
            box.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=call, name="evaldsl-scoring", daemon=True).start()
    if not done.wait(limit):
        raise ScoringTimeout(f"{what} did not return within {limit:g}s (the case's timeout); it was abandoned "
                             "and the run is an error")
    ok, value = box[0]
    if not ok:
        raise value
    return value
