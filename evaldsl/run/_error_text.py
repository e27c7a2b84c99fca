"""Text the record keeps of what a run produced: UTF-8-safe, bounded; an exception as an `ErrorInfo`.

Why its own module: an agent's or a predicate's exception whose ``__str__`` (or
``repr``) raises, a message with lone surrogates, or one of 20 MB must still
become a bounded, JSON-safe record entry (`error_info`); the artifacts' own
repairs (`_safe`, `_fixer`) write their texts with the same helpers.
"""

from __future__ import annotations

import traceback
from typing import Any

from ._record import ERROR_KINDS, ErrorInfo

MAX_MESSAGE = 65_536
"""Characters of an error message (or traceback) the record keeps; the rest is cut, and says so."""

MAX_REPR = 10_000
"""Characters of a repr the record keeps for a value JSON cannot hold."""


def text_ok(s: str) -> bool:
    """True when ``s`` can be written as UTF-8 (holds no lone surrogate)."""
    if s.isascii():
        return True
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def safe_text(s: str) -> str:
    """``s`` with lone surrogates written as visible backslash escapes."""
    return s if text_ok(s) else s.encode("utf-8", "backslashreplace").decode("utf-8")


def clip(s: str, limit: int = MAX_MESSAGE) -> str:
    """``s`` cut to ``limit`` characters, saying how many were cut."""
    if len(s) <= limit:
        return s
    return f"{s[:limit]}... (cut: {len(s) - limit:,} more characters not kept)"


def safe_repr(value: Any) -> str:
    """``repr(value)``, bounded, safe for JSON; never raises."""
    try:
        text = repr(value)
        if type(text) is not str:
            raise TypeError("repr did not return a str")
    except Exception as exc:  # a hostile __repr__
        text = f"<{_type_name(value)} object; its repr raised {_type_name(exc)}>"
    return safe_text(clip(text, MAX_REPR))


def _type_name(value: Any) -> str:
    try:
        return str(type(value).__name__)
    except Exception:  # pragma: no cover - a metaclass with a hostile __name__
        return "object"


def exception_text(exc: BaseException, *, limit: int = MAX_MESSAGE) -> str:
    """An exception's message, never raising: ``str``, else ``repr``, else a placeholder; JSON-safe, bounded."""
    try:
        text = str(exc)
    except Exception:  # a hostile __str__
        text = ""
    if not text:
        try:
            text = repr(exc)
        except Exception:
            text = f"<{type(exc).__name__}: its message could not be read (str and repr raised)>"
    return clip(safe_text(text), limit)


def error_info(exc: BaseException, kind: str = "agent_raised") -> ErrorInfo:
    """An exception as a record entry: its type, message and traceback (each bounded), and its kind:
    the exception's own ``error_kind`` (evaldsl's errors say theirs: a backend's, a regex's time
    limit, a judge's), else ``kind``."""
    try:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except Exception:  # pragma: no cover - traceback formatting guards str() itself
        tb = None
    try:
        own = getattr(exc, "error_kind", None)
    except Exception:  # a hostile __getattr__
        own = None
    return ErrorInfo(type=type(exc).__name__, message=exception_text(exc), traceback=_record_text(tb),
                     kind=own if own in ERROR_KINDS else kind)


def cancelled_info(exc: BaseException, who: str) -> ErrorInfo:
    """A `CancelledError` nobody asked for, as that run's error."""
    detail = exception_text(exc, limit=2_000)
    message = f"{who} raised CancelledError, a cancellation the runner did not ask for"
    info = error_info(exc)
    info.type = "CancelledError"
    info.kind = "cancelled"
    info.message = f"{message}: {detail}" if detail and detail != "CancelledError()" else message
    return info


def _record_text(text: str | None) -> str | None:
    return None if text is None else clip(safe_text(text))
