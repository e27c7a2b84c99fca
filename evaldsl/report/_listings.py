"""What the short summary lists of a case: its failures, its partial credit, the values it had changed.

Each text is made once, as the case finishes (`_terminal.Digest` keeps it); JUnit, Markdown and the
pytest plugin word a failure with the same helpers (`failed_expectations`, `run_errors`).
"""

from __future__ import annotations

import json
from collections import Counter

from ..run._record import CaseResult, RunResult
from ._numbers import num as _num
from ._progress import _shown

SHOWN_MESSAGE = 2_000
"""Characters of an error message the summary shows; the record keeps up to 65,536."""


def _failure_body(case: CaseResult) -> str:
    """A failed case in the short summary, after its label."""
    head = f"{_shown(case.file)}:{case.line} {case.suite}::{case.name}"
    runs = case.runs
    n = len(runs)
    if n > 1:
        passed = sum(r.passed for r in runs)
        head += f"  ({passed}/{n} runs passed, needed {case.required_pass_rate:.0%})"
    lines = [head]
    if any(r.error is not None for r in runs):  # most failures are expectations: no Counter to make
        for (etype, message), count in run_errors(case).items():
            times = f" [{count} of {n} runs]" if n > 1 else ""
            lines.append(f"  error: {etype}: {_indent(message)}{times}")
    for label_, where, detail, count in failed_expectations(case):
        times = f" [failed in {count} of {n} runs]" if n > 1 else ""
        lines.append(f"  x expect {label_}  ({where}){times}")
        if detail:
            lines.append(f"      {_indent(detail, 6)}")
    return "\n".join(lines)


def _partial_body(case: CaseResult, partial: list[tuple[str, str, str | None, int]]) -> str:
    """A case that passed only through a fallback, after its label: the score, and each expectation
    that gave credit below 1."""
    lines = [f"{_shown(case.file)}:{case.line} {case.suite}::{case.name}  "
             f"(partial credit, score {_num(case.score)})"]
    n = len(case.runs)
    for label_, where, detail, count in partial:
        lines.append(f"  ~ expect {label_}  ({where})" + (f" [in {count} of {n} runs]" if n > 1 else ""))
        if detail:
            lines.append(f"      {_indent(detail, 6)}")
    return "\n".join(lines)


def partial_credits(case: CaseResult) -> list[tuple[str, str, str | None, int]]:
    """Each expectation that held only through a fallback (0 < credit < 1) in a passing run:
    label, file:line, its first detail, how many runs."""
    seen: dict[tuple[str, str], list] = {}  # type: ignore[type-arg]
    for run in case.runs:
        for e in run.expectations:
            if run.passed and 0 < e.credit < 1:
                turn = "" if e.turn is None else ", " + turn_name(run, e.turn)
                key = (e.label, f"{_shown(e.file)}:{e.line}{turn}")
                seen.setdefault(key, [e.detail, 0])[1] += 1
    return [(label, where, d, c) for (label, where), (d, c) in seen.items()]


def turn_name(run: RunResult, turn: int) -> str:
    """A conversation's turn as every report names it: ``turn 2 "Yes, the blue one"`` (the message cut at
    60 characters; a simulated user's marked so)."""
    turns = run.conversation.turns if run.conversation is not None else []
    if not 0 < turn <= len(turns):
        return f"turn {turn}"
    message = turns[turn - 1].message
    shown = json.dumps(message if len(message) <= 60 else message[:57] + "...", ensure_ascii=False)
    return f"turn {turn} {shown}" + (" (simulated)" if turns[turn - 1].simulated else "")


_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7f, 0xa0)) if chr(c) not in "\t\n"}
"""Control characters (but tab and line breaks) as visible escapes: an agent's message may hold a NUL or
an escape sequence that would clear or recolour the user's terminal."""


def shorten_message(text: str, limit: int = SHOWN_MESSAGE) -> str:
    """``text`` cut to ``limit`` characters for the terminal, its control characters shown as ``\\xNN``
    escapes; the record keeps the text as it was (and more of it)."""
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit:,} more characters, in the record)"
    return text.translate(_CONTROLS)


def _warning_line(case: CaseResult) -> str:
    """The line of a case whose runs' artifacts had to be changed to be recorded."""
    notes = list(dict.fromkeys(w for r in case.runs for w in r.warnings))
    shown = "; ".join(notes[:3]) + (f"; and {len(notes) - 3} more" if len(notes) > 3 else "")
    return f"{_shown(case.file)}:{case.line} {case.suite}::{case.name}: {shorten_message(shown, 300)}"


def run_errors(case: CaseResult) -> Counter[tuple[str, str]]:
    """Each distinct run error of a case, (type, message cut for a terminal), with how many runs had it."""
    return Counter((r.error.type, shorten_message(r.error.message)) for r in case.runs if r.error is not None)


def failed_expectations(case: CaseResult) -> list[tuple[str, str, str | None, int]]:
    """Each failing expectation once: label, file:line, its first detail, how many runs it failed.

    Not those of a run that the agent itself reported failed (``AgentError``: a backend that could not
    be reached, say): its error says it all, and its expectations, judged on what little the run left
    (no final text, no calls), would only repeat it once each."""
    seen: dict[tuple[str, str], list] = {}  # type: ignore[type-arg]
    shown: dict[str, str] = {}  # a case's expectations are mostly in its own file
    for run in case.runs:
        if run.error is not None and run.error.type == "AgentError":
            continue
        for e in run.expectations:
            if e.passed:
                continue
            file = shown.get(e.file)
            if file is None:
                file = shown[e.file] = _shown(e.file)
            key = (e.label, f"{file}:{e.line}" if e.turn is None else f"{file}:{e.line}, {turn_name(run, e.turn)}")
            if key in seen:
                seen[key][1] += 1
            else:
                seen[key] = [e.detail, 1]
    return [(label, where, d, c) for (label, where), (d, c) in seen.items()]


def _indent(text: str, by: int = 4) -> str:
    return text.replace("\n", "\n" + " " * by)
