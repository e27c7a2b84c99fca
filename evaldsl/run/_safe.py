"""Make what an agent returned (or raised) safe for the JSON run record.

Why here, when the artifacts come in: the record is written by pydantic as
JSON, and one value JSON has no form for (a `datetime` in tool args, a
`set`, an arbitrary object, a circular transcript, a lone surrogate
``"\\ud800"`` in the final text) used to stop the whole run when the record
was written, losing every finished case. Fixed at the door, the record,
the scoring and the terminal all see the same safe value, and a record read
back scores the same way.

The rule (docs/running.md, "What the record keeps"):

- a value JSON cannot hold is recorded as its ``repr`` (a tuple becomes a
  list, an int or float dict key its text, as JSON would have them);
- a string with lone surrogates keeps them as visible backslash escapes
  (``"\\\\ud800"``);
- NaN and the infinities become the strings ``"NaN"``, ``"Infinity"`` and
  ``"-Infinity"`` (JSON has no form for them; ``null`` would hide them);
- a circular reference is recorded as ``"<circular reference>"``, and
  nesting deeper than `MAX_DEPTH` as the ``repr`` of what is below.

Every such change is named in the run's ``warnings`` (``RunResult.warnings``),
with where it was, e.g. ``tool_calls[0].args.when: datetime recorded as its
repr``. A negative ``tokens`` or a negative or non-finite ``duration_s`` is
not repaired but refused: the run is an error naming the field.

Exceptions are rendered here too (`error_info`): an exception whose
``__str__`` (or ``repr``) raises, a message with lone surrogates, or one of
20 MB must still become a bounded, JSON-safe record entry.

Cost: plain JSON artifacts (the common case) are only walked once, with
exact type checks, and returned as they are; copying happens only when
something must change.
"""

from __future__ import annotations

import json
import math
import traceback
from collections.abc import Sequence
from typing import Any

from ..artifacts import RunArtifacts, ToolCall
from ._record import ERROR_KINDS, ErrorInfo
from ._trusted import made

MAX_DEPTH = 100
"""Nesting deeper than this is recorded as the repr of what lies below."""

MAX_MESSAGE = 65_536
"""Characters of an error message (or traceback) the record keeps; the rest is cut, and says so."""

MAX_REPR = 10_000
"""Characters of a repr the record keeps for a value JSON cannot hold."""

MAX_WARNINGS = 20
"""Warnings listed per run; more are counted in one last line."""

_FLOATS = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


class Refused(ValueError):
    """Artifacts with a field no repair can make true (``tokens=-5``)."""


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


_SCALARS = frozenset((int, bool, type(None)))


def _plain(value: Any, depth: int = 0) -> bool:
    """True when ``value`` is plain JSON (exact types, finite floats, UTF-8 strings, not too deep).

    Scalars inside containers are checked inline: this runs on every run, and
    a call per value would cost more than the rest of the check.
    """
    t = type(value)
    if t is dict:
        if depth >= MAX_DEPTH:
            return False
        for k, v in value.items():
            if type(k) is not str or not (k.isascii() or text_ok(k)):
                return False
            tv = type(v)
            if tv is str:
                if not (v.isascii() or text_ok(v)):
                    return False
            elif tv not in _SCALARS and not (tv is float and v - v == 0.0) and not _plain(v, depth + 1):
                return False
        return True
    if t is list:
        if depth >= MAX_DEPTH:
            return False
        for v in value:
            tv = type(v)
            if tv is str:
                if not (v.isascii() or text_ok(v)):
                    return False
            elif tv not in _SCALARS and not (tv is float and v - v == 0.0) and not _plain(v, depth + 1):
                return False
        return True
    if t is str:
        return value.isascii() or text_ok(value)
    if t in _SCALARS:
        return True
    return t is float and value - value == 0.0  # False for NaN and the infinities


def _plain_artifacts(art: RunArtifacts) -> bool:
    """True when every field of ``art`` is plain JSON and in range (one pass, checks inline)."""
    text = art.final_text
    if text is not None and (type(text) is not str or not (text.isascii() or text_ok(text))):
        return False
    tokens = art.tokens
    if tokens is not None and (type(tokens) is not int or tokens < 0):
        return False
    for count in (art.input_tokens, art.output_tokens):
        if count is not None and (type(count) is not int or count < 0):
            return False
    if art.error is not None or art.duration_s is not None:
        error, duration = art.error, art.duration_s
        if error is not None and (type(error) is not str or not text_ok(error)):
            return False
        if duration is not None and not (type(duration) in (int, float) and 0 <= duration < math.inf):
            return False
        if art.error_kind is not None and art.error_kind not in ERROR_KINDS:
            return False
    calls, transcript = art.tool_calls, art.transcript
    if type(calls) is not list or type(transcript) is not list or (transcript and not _plain(transcript)):
        return False
    for call in calls:
        if type(call) is not ToolCall:
            return False
        name, args, result = call.name, call.args, call.result
        if type(name) is not str or not (name.isascii() or text_ok(name)) or not _plain(args):
            return False
        if result is not None and (type(result) is not str or not result.isascii()) and not _plain(result):
            return False
    return True


NO_WARNINGS: tuple[str, ...] = ()


def make_safe(art: RunArtifacts, duration: float | None = None) -> tuple[RunArtifacts, Sequence[str]]:
    """``art`` made safe for the record, and a warning per change (none in the common case). ``duration``:
    the run's seconds, put in the copy of plain artifacts that hold none (what `_scoring` would set next).

    Raises:
        Refused: for a negative ``tokens`` or a negative or non-finite ``duration_s``.
    """
    try:
        if _plain_artifacts(art):
            return _own_copy(art, duration), NO_WARNINGS
    except RecursionError:  # pragma: no cover - _plain stops at MAX_DEPTH; a hostile __eq__ could still recurse
        pass
    fixer = _Fixer()
    fields: dict[str, Any] = {
        "final_text": fixer.optional_text(art.final_text, "final_text"),
        "error": fixer.optional_text(art.error, "error"),
        "error_kind": art.error_kind if art.error_kind in ERROR_KINDS else None,
        "tokens": _tokens(art.tokens),
        "input_tokens": _tokens(art.input_tokens),
        "output_tokens": _tokens(art.output_tokens),
        "duration_s": _duration(art.duration_s),
        "tool_calls": [fixer.call(c, f"tool_calls[{i}]") for i, c in enumerate(fixer.items(art.tool_calls))],
    }
    transcript = fixer.items(art.transcript, "transcript")
    top = (id(art.transcript),)
    fields["transcript"] = [fixer.value(v, f"transcript[{i}]", 1, top) for i, v in enumerate(transcript)]
    return RunArtifacts.model_construct(**fields), fixer.warnings()


def _own_copy(art: RunArtifacts, duration: float | None = None) -> RunArtifacts:
    """``art`` with its own containers (plain JSON already, see `_plain_artifacts`): an agent that keeps
    the list it returned, or a call's arguments, and changes them after its run ended (the next run's
    calls appended to the same list, say) changes nothing in this run's record. Strings are shared.
    ``duration`` goes in the copy when ``art`` holds none (one copy a run, not a second for it)."""
    calls, transcript = art.tool_calls, art.transcript
    fields = dict(art.__dict__)
    if duration is not None and fields["duration_s"] is None:
        fields["duration_s"] = duration
    elif not calls and not transcript:
        return art
    fields["tool_calls"] = [_constructed(ToolCall, {"name": c.name, "args": _copied(decoded_args(c.args)),
                                                    "result": _copied(c.result)}) for c in calls]
    fields["transcript"] = _copied(transcript) if transcript else []
    return _constructed(RunArtifacts, fields)


def _constructed(cls: type[Any], fields: dict[str, Any]) -> Any:
    """``cls.model_construct(**fields)`` when ``fields`` names every field in declaration order (both
    models forbid extras and have no private attributes), written out: pydantic's own loops over the
    fields cost more than the copy (about 7 us a run, bench/README.md, issue 28)."""
    return made(cls, fields, set(fields))


def decoded_args(args: Any) -> Any:
    """A call's arguments as the record keeps them, whatever the agent: arguments given as JSON text
    (as models send them) decoded once into the object they spell; text that is not a JSON object
    kept as it is (it matches no pattern, and the failure shows it)."""
    if type(args) is not str or not args.lstrip().startswith("{"):
        return args
    try:
        value = json.loads(args)
    except (ValueError, RecursionError):
        return args
    return value if type(value) is dict else args


def _copied(value: Any) -> Any:
    """A copy of plain JSON (dicts and lists new, everything else shared): each container copied at once
    (in C), then only its containers copied again, a level down (most arguments hold none)."""
    kind = type(value)
    if kind is dict:
        copy = value.copy()
        for k, v in copy.items():
            if type(v) is dict or type(v) is list:
                copy[k] = _copied(v)  # (a value replaced, no key added: the iteration stands)
        return copy
    if kind is list:
        copy = value.copy()
        for i, v in enumerate(copy):
            if type(v) is dict or type(v) is list:
                copy[i] = _copied(v)
        return copy
    return value


def _tokens(value: Any) -> int | None:
    if value is None:
        return None
    if type(value) is bool or not isinstance(value, int) or value < 0:
        raise Refused(f"tokens must be a whole number of at least 0 (or None), not {safe_repr(value)}")
    return int(value)


def _duration(value: Any) -> float | None:
    if value is None:
        return None
    if type(value) is bool or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
        raise Refused(f"duration_s must be a finite number of seconds of at least 0 (or None), not {safe_repr(value)}")
    return float(value)


class _Fixer:
    """Copies a value into plain JSON, noting every change."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def warnings(self) -> list[str]:
        if len(self.notes) <= MAX_WARNINGS:
            return self.notes
        more = len(self.notes) - MAX_WARNINGS
        return self.notes[:MAX_WARNINGS] + [f"... and {more} more values changed the same way"]

    def note(self, where: str, what: str) -> None:
        self.notes.append(f"{where}: {what}")

    def optional_text(self, value: Any, where: str) -> str | None:
        if value is None:
            return None
        if type(value) is str or isinstance(value, str):
            return self.text(str.__str__(value), where)
        self.note(where, f"{_type_name(value)} recorded as its repr (expected a str)")
        return safe_repr(value)

    def text(self, value: str, where: str) -> str:
        if text_ok(value):
            return value
        self.note(where, "lone surrogates recorded as backslash escapes")
        return safe_text(value)

    def items(self, value: Any, where: str = "tool_calls") -> list[Any]:
        if type(value) is list:
            return value
        if isinstance(value, (list, tuple)):
            return list(value)
        self.note(where, f"{_type_name(value)} recorded as its repr (expected a list)")
        return [safe_repr(value)]

    def call(self, call: Any, where: str) -> ToolCall:
        if not isinstance(call, ToolCall):
            self.note(where, f"{_type_name(call)} recorded as its repr (expected a ToolCall)")
            return ToolCall.model_construct(name=safe_repr(call), args={}, result=None)
        name = call.name if isinstance(call.name, str) else safe_repr(call.name)
        return ToolCall.model_construct(
            name=self.text(str.__str__(name), f"{where}.name"),
            args=self.value(decoded_args(call.args), f"{where}.args", 1, ()),
            result=self.value(call.result, f"{where}.result", 1, ()),
        )

    def value(self, value: Any, where: str, depth: int, path: tuple[int, ...]) -> Any:
        """``value`` as plain JSON; ``path`` holds the ids of the containers above it."""
        if value is None or type(value) is bool or type(value) is int:
            return value
        if isinstance(value, str):
            return self.text(str.__str__(value), where)
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            if math.isfinite(value):
                return float(value)
            shown = _FLOATS[repr(float(value))]
            self.note(where, f"{shown} recorded as the string {shown!r} (JSON has no form for it)")
            return shown
        if isinstance(value, (dict, list, tuple)):
            if id(value) in path:
                self.note(where, "circular reference recorded as '<circular reference>'")
                return "<circular reference>"
            if depth > MAX_DEPTH:
                self.note(where, f"nested deeper than {MAX_DEPTH} levels; the rest recorded as its repr")
                return safe_repr(value)
            inner = path + (id(value),)
            if isinstance(value, dict):
                return {self.key(k, where): self.value(v, f"{where}.{self.key(k, where, quiet=True)}", depth + 1, inner)
                        for k, v in list(value.items())}
            return [self.value(v, f"{where}[{i}]", depth + 1, inner) for i, v in enumerate(list(value))]
        self.note(where, f"{_type_name(value)} recorded as its repr (JSON has no form for it)")
        return safe_repr(value)

    def key(self, key: Any, where: str, *, quiet: bool = False) -> str:
        if isinstance(key, str):
            return str.__str__(key) if text_ok(key) else (safe_text(key) if quiet else self.text(key, where))
        if key is None or isinstance(key, (bool, int, float)):
            return "null" if key is None else str(key).lower() if isinstance(key, bool) else repr(key)
        if not quiet:
            self.note(where, f"a {_type_name(key)} key recorded as its repr")
        return safe_repr(key)


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
