"""What a failed or errored case did, for the terminal: its final text, its calls, its traceback.

A failure that says "no tool was called" is only half an answer; the reader
wants to see what the agent did instead. So, by default, each failed or
errored case in the short summary shows its final text (trimmed) and the
calls it made, and an agent's exception a short traceback of the agent's own
frames, as pytest's ``--tb=short`` does. How much is shown is the reader's
choice (`Details`): ``-q`` leaves the final text and calls out, ``-vv`` adds
the transcript, ``--tb`` picks the traceback's form.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Literal

from ..run._record import CaseResult, RunResult

TracebackStyle = Literal["long", "short", "line", "no"]
TEXT_SHOWN = 300
"""Characters of a final text shown (the record keeps it whole)."""
CALLS_SHOWN = 8
"""Calls shown a run; the rest are counted."""
CALL_SHOWN = 160
"""Characters of one call shown."""
MESSAGE_SHOWN = 200
"""Characters of one transcript message (``-vv``), or of an exception in ``--tb=line``, shown."""
LINE_SHOWN = 500
"""Characters of one traceback line shown (the record keeps the traceback, bounded)."""

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.*)$')


@dataclass(frozen=True)
class Details:
    """How much of a failed case is shown: ``verbosity`` 0 (``-q``), 1 (default), 2 (``-vv``);
    ``tb``, the traceback's form."""

    verbosity: int = 1
    tb: TracebackStyle = "short"

    def lines(self, case: CaseResult) -> list[str]:
        """The lines (indented two spaces) shown under a failed or errored case's failures."""
        run = _shown_run(case)
        if run is None:
            return []
        out: list[str] = []
        if run.error is not None and run.error.traceback and self.tb != "no":
            out.extend("  " + line for line in format_traceback(run.error.traceback, self.tb))
        art = run.artifacts
        if art is None or self.verbosity < 1:
            return out
        which = f" (run {run.index + 1} of {len(case.runs)})" if len(case.runs) > 1 else ""
        if run.conversation is not None and len(run.conversation.turns) > 1:
            out.extend(_turns(run, which))
            return out
        out.append(f"  final text{which}: {_text(art.final_text)}")
        calls = art.tool_calls
        if calls:
            shown = [_cut(c.display(), CALL_SHOWN) for c in calls[:CALLS_SHOWN]]
            more = f" (and {len(calls) - CALLS_SHOWN} more)" if len(calls) > CALLS_SHOWN else ""
            out.append(f"  calls{which}: " + ", ".join(shown) + more)
        else:
            out.append(f"  calls{which}: none")
        if self.verbosity >= 2 and art.transcript:
            out.append("  transcript:")
            out.extend("    " + _message(m) for m in art.transcript)
        return out


def _turns(run: RunResult, which: str) -> list[str]:
    """A conversation, a turn a few lines: its message, its calls, its reply."""
    assert run.conversation is not None
    out = [f"  conversation{which}: {len(run.conversation.turns)} turns, ended by {run.conversation.ended_by}"]
    for t in run.conversation.turns:
        who = "simulated user" if t.simulated else "user"
        out.append(f"    turn {t.turn} {who}: {_text(t.message)}")
        if t.artifacts is None:
            out.append("      (no answer)")
            continue
        calls = t.artifacts.tool_calls
        if calls:
            shown = [_cut(c.display(), CALL_SHOWN) for c in calls[:CALLS_SHOWN]]
            more = f" (and {len(calls) - CALLS_SHOWN} more)" if len(calls) > CALLS_SHOWN else ""
            out.append("      calls: " + ", ".join(shown) + more)
        out.append(f"      reply: {_text(t.artifacts.final_text)}")
    return out


def _shown_run(case: CaseResult) -> RunResult | None:
    """The run shown: the first that did not pass (an errored one first)."""
    failing = [r for r in case.runs if not r.passed]
    return next((r for r in failing if r.error is not None), failing[0] if failing else None)


def format_traceback(text: str, style: TracebackStyle) -> list[str]:
    """A recorded traceback in ``style``: ``long`` whole; ``short`` the frames of the agent's own code
    (not evaldsl's, not Python's own library), each with its source line, then the exception;
    ``line`` one line, where the agent raised and what."""
    lines = text.rstrip("\n").split("\n")
    if style == "long":
        return [_cut(line, LINE_SHOWN) for line in lines]
    frames, rest, i = [], [], 0
    while i < len(lines):
        match = _FRAME.match(lines[i])
        if match:
            source = lines[i + 1] if i + 1 < len(lines) and lines[i + 1].startswith("    ") else None
            frames.append((match, source))
            i += 2 if source is not None else 1
        elif lines[i].startswith("Traceback") or lines[i].startswith("  "):
            i += 1
        else:
            rest.append(lines[i])
            i += 1
    own = [(m, s) for m, s in frames if _users(m["file"])]  # none: evaldsl's own error, its line says it all
    last = rest[-1] if rest else ""
    if style == "line":
        if not own:
            return [last]
        m = own[-1][0]
        return [f"{_relative(m['file'])}:{m['line']}: {_cut(last, MESSAGE_SHOWN)}"]
    if not own:
        return []
    out = ["traceback (the agent's frames):"]
    for m, source in own:
        out.append(f"  {_relative(m['file'])}:{m['line']} in {m['func']}")
        if source is not None:
            out.append(f"    {_cut(source.strip(), LINE_SHOWN)}")
    return out  # the exception itself is the case's `error:` line, just above


def _relative(path: str) -> str:
    """``path`` from the current directory when it lies below it (as pytest shows frames)."""
    try:
        shown = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if shown.startswith("..") else shown


def _users(path: str) -> bool:
    """A frame of the user's code: not evaldsl's, not the standard library's or an installed package's."""
    if path.startswith("<"):
        return False
    real = os.path.abspath(path)
    return not (real.startswith(_PACKAGE + os.sep) or os.sep + "lib" + os.sep + "python" in real
                or "site-packages" in real)


def _text(value: str | None) -> str:
    if value is None:
        return "(none)"
    flat = json.dumps(value.strip(), ensure_ascii=False)
    return _cut(flat, TEXT_SHOWN)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _message(message: Any) -> str:
    if isinstance(message, dict):
        role = message.get("role", "?")
        content = message.get("content")
        body = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if message.get("tool_calls"):
            body = f"{body or ''} [tool calls: {json.dumps(message['tool_calls'], ensure_ascii=False)}]".strip()
        return _cut(f"{role}: {body}", MESSAGE_SHOWN)
    return _cut(json.dumps(message, ensure_ascii=False, default=str), MESSAGE_SHOWN)
