"""Regex matching with a time limit: a catastrophic pattern fails its case, not the run.

`expect final text matches /^(a+)+$/` against forty `a`s and a `!` takes
Python's backtracking engine longer than anyone will wait, and it holds the
interpreter (and the event loop) while it does. Why not a linear-time engine
(google-re2): its `\\d`, `\\w`, `\\s`, `\\b`, `$` and case folding differ from
Python's `re` on Unicode text, and the language promises Python `re`
semantics (LANGUAGE.md); a second engine for "most" patterns would make the
meaning of a pattern depend on the text. So every match stays Python `re`,
and is given a time limit instead: the case's timeout (`set_match_limit`,
set by the runner before scoring a run; `DEFAULT_LIMIT_S` otherwise).

How: Python's regex engine checks for signals as it runs, so a one-shot
``SIGALRM`` interval timer (`signal.setitimer`) whose handler raises
`RegexTimeout` stops the match where it is. Arming and disarming the timer
costs two system calls, a microsecond or two per match. Signals are
delivered to the main thread only, which is where `evaldsl run` and the
pytest plugin score. A match asked for on another thread (a mock tool's
`when <q: matches /.../>` pattern, called by a sync agent on its worker
thread) is handed to the runner's event loop on the main thread
(`serve_matches`) and waits for it there: Python's regex engine holds the
interpreter lock while it runs, so a catastrophic match on a worker would
freeze every thread, the loop and its timers included, past any timeout.
On Windows (no ``setitimer``), or when the runner's loop is not on the main
thread (`run_suite` called from inside a running event loop runs on a
helper thread), matching is not time-limited (docs/running.md). A timer
that someone else had armed is put back, less the time the match took.

The limit is a context variable (`set_match_limit`): each run sets its
case's timeout, and a worker thread sees the value of the run that
submitted its job.

The handler is installed once and stays (installing one costs tens of
microseconds); it chains to the handler it replaced, so an alarm that is
not ours is handled as before (the default action included).
"""

from __future__ import annotations

import _signal
import contextlib
import contextvars
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

DEFAULT_LIMIT_S = 10.0
"""The time limit of a match outside the runner (a compiled check called directly)."""

_LIMIT: contextvars.ContextVar[float] = contextvars.ContextVar("evaldsl_match_limit", default=DEFAULT_LIMIT_S)
_state: dict[str, Any] = {"armed": False, "ours": False, "previous": _signal.SIG_DFL, "loop": None, "busy": None}
# loop: the runner's event loop on the main thread, which does the matches other threads ask for
# armed: a match is running; ours: the interval timer is set by us (perhaps after its match ended)
_CAN_ALARM = hasattr(_signal, "setitimer") and hasattr(_signal, "SIGALRM")
_setitimer = getattr(_signal, "setitimer", None)
_ITIMER_REAL = getattr(_signal, "ITIMER_REAL", 0)


class RegexTimeout(Exception):
    """A regex match took longer than its time limit (catastrophic backtracking?)."""

    error_kind = "regex_timeout"


def set_match_limit(seconds: float) -> None:
    """The time limit of the matches that follow in this context (the runner sets it to the case's timeout)."""
    _LIMIT.set(seconds)


def current_limit() -> float:
    """The time limit in force here (a case's timeout while the runner scores it)."""
    return _LIMIT.get()


def limit_at_most(seconds: float) -> contextvars.Token[float]:
    """Lower this context's limit to ``seconds`` (when it is higher) until `reset_limit` is given the token."""
    return _LIMIT.set(min(seconds, _LIMIT.get()))


def reset_limit(token: contextvars.Token[float]) -> None:
    """Put back the limit that `limit_at_most` lowered."""
    _LIMIT.reset(token)


@contextlib.contextmanager
def serve_matches(loop: asyncio.AbstractEventLoop, busy: Callable[[float], None] | None = None) -> Iterator[None]:
    """While the runner's ``loop`` runs on the main thread, matches asked for on other threads are done there.

    Args:
        busy: called with the seconds each such match held the loop (the runner's `LoopClock`).
    """
    if not _CAN_ALARM or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = _state["loop"], _state["busy"]
    _state["loop"], _state["busy"] = loop, busy
    try:
        yield
    finally:
        _state["loop"], _state["busy"] = previous


def _on_main_thread(regex: re.Pattern[str], text: str, what: str) -> re.Match[str] | None:
    """Do the match on the main thread's loop, under this thread's limit; wait for it here."""
    loop = _state["loop"]
    if loop is None or loop.is_closed():
        return regex.search(text)  # no runner's loop on the main thread: not time-limited (documented)
    limit, busy = _LIMIT.get(), _state["busy"]
    import concurrent.futures  # here: `check`, which never matches on another thread, does not import it

    done: concurrent.futures.Future[re.Match[str] | None] = concurrent.futures.Future()

    def job() -> None:
        if not done.set_running_or_notify_cancel():
            return
        token = _LIMIT.set(limit)
        start = time.perf_counter()
        try:
            done.set_result(search(regex, text, what))
        except BaseException as exc:  # RegexTimeout, or anything else: raised on the asking thread
            done.set_exception(exc)
        finally:
            _LIMIT.reset(token)
            if busy is not None:
                busy(time.perf_counter() - start)

    try:
        loop.call_soon_threadsafe(job)
    except RuntimeError:  # the loop closed meanwhile
        return regex.search(text)
    return done.result()


def _on_alarm(signum: int, frame: Any) -> None:
    if _state["armed"]:
        _state["armed"] = _state["ours"] = False
        raise RegexTimeout
    if _state["ours"]:  # our timer, due after its match had ended (see `disarm`): nothing to stop
        _state["ours"] = False
        return
    previous = _state["previous"]  # someone else's alarm: theirs to handle
    if callable(previous):
        previous(signum, frame)
    elif previous == _signal.SIG_DFL:  # the default action (end the process), as if we were not here
        _signal.signal(_signal.SIGALRM, _signal.SIG_DFL)
        os.kill(os.getpid(), _signal.SIGALRM)


def _install() -> bool:
    """Make `_on_alarm` the SIGALRM handler (once; again if someone replaced it), chaining the old one."""
    current = _signal.getsignal(_signal.SIGALRM)  # _signal: signal's wrappers convert to enums, slowly
    if current is _on_alarm:
        return True
    try:
        _signal.signal(_signal.SIGALRM, _on_alarm)
    except (ValueError, OSError):  # pragma: no cover - not the main interpreter
        return False
    _state["previous"] = _signal.SIG_DFL if current is None else current
    return True


def search(regex: re.Pattern[str], text: str, what: str) -> re.Match[str] | None:
    """``regex.search(text)``, stopped with `RegexTimeout` after the current limit.

    Args:
        what: what is matched, for the message (``the final text``).
    """
    if not _CAN_ALARM:
        return regex.search(text)
    if threading.current_thread() is not threading.main_thread():
        return _on_main_thread(regex, text, what)
    if _state["armed"]:
        return regex.search(text)
    if not _install():  # pragma: no cover
        return regex.search(text)
    limit = _LIMIT.get()
    start = time.monotonic()
    other_timer = _setitimer(_ITIMER_REAL, limit)[0]  # type: ignore[misc]
    if _state["ours"]:
        other_timer = 0.0  # what was left was our own timer, not someone else's
    _state["armed"] = _state["ours"] = True
    try:
        return regex.search(text)
    except RegexTimeout:
        raise RegexTimeout(
            f"matching /{regex.pattern}/ against {what} ({len(text):,} characters) took longer than "
            f"{limit:g}s and was stopped (catastrophic backtracking? nested quantifiers like (a+)+ "
            "make Python's regex engine exponential)"
        ) from None
    finally:
        _state["armed"] = False
        if other_timer > 0:  # someone else's timer: put it back now, less the time the match took
            _state["ours"] = False
            _setitimer(_ITIMER_REAL, max(1e-6, other_timer - (time.monotonic() - start)))  # type: ignore[misc]


def disarm() -> None:
    """Stop our timer, if one is still set (the runner calls it after scoring a run).

    A match leaves its timer set, so that a run with several matches costs
    one system call per match, plus this one, instead of two per match.
    """
    if _state["ours"]:
        _state["ours"] = False
        _setitimer(_ITIMER_REAL, 0)  # type: ignore[misc]
