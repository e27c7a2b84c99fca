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

Exceptions are rendered by `_error_text` (`error_info`; re-exported here
with the text helpers), and artifacts that are not plain JSON are copied
into plain JSON by `_fixer.Fixer`, which notes each change.

Cost: plain JSON artifacts (the common case) are walked once, with exact
type checks, and copied (their containers, so that an agent that changes
them later changes nothing recorded); only what must change is repaired.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from ..artifacts import RunArtifacts, ToolCall
from ._error_text import (  # noqa: F401 (the record's text helpers, imported from here by the runner)
    MAX_MESSAGE,
    MAX_REPR,
    cancelled_info,
    clip,
    error_info,
    exception_text,
    safe_repr,
    safe_text,
    text_ok,
)
from ._record import ERROR_KINDS
from ._trusted import made

MAX_DEPTH = 100
"""Nesting deeper than this is recorded as the repr of what lies below."""

MAX_WARNINGS = 20
"""Warnings listed per run; more are counted in one last line."""

_FLOATS = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


class Refused(ValueError):
    """Artifacts with a field no repair can make true (``tokens=-5``)."""


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
    from ._fixer import Fixer  # the rare path: artifacts that are not plain JSON

    fixer = Fixer()
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
