"""Settings statements -> `CaseSettings`: suite defaults, then case overrides.

Every value is validated here with a positioned error: `repeat` and `max
turns` are positive integers (at most `MAX_REPEAT` and `MAX_TURNS`), a
timeout is above 0 and at most a day, `pass rate at least` is in (0, 1], `mode` is
`agent` or `single-turn`. Tags add up (suite tags, then the case's).
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Any

from ..syntax import _ast as a
from ._errors import CompileProblem
from ._model import CaseSettings
from ._values import to_number, to_python, to_text, tool_name

MODES = ("agent", "single-turn")

MAX_REPEAT = 10_000
"""The most runs one case may ask for (a run per repeat is kept in memory and in the record)."""
MAX_TURNS = 1_000
"""The most model calls one model run may make."""
MAX_USER_TURNS = 100
"""The most messages a simulated user may write in one run (`user turns`, LANGUAGE.md 12)."""
MAX_TIMEOUT_S = 24 * 60 * 60.0
"""The longest timeout: a day. Longer is a typo, or a run nobody will wait for."""


def _positive_int(node: Any, what: str, limit: int, low_help: str | None = None) -> int:
    value = to_number(node)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < 1:
        raise CompileProblem(f"{what} must be a whole number of at least 1, not {value}", node, code="E211",
                             help=low_help)
    if value > limit:
        shown = f"{value:,}" if value.bit_length() < 64 else "a larger number"
        raise CompileProblem(f"{what} must be at most {limit:,}, not {shown}", node, code="E211",
                             help=f"{what} is bounded so a typo cannot exhaust memory or time")
    return value


def _timeout(duration: a.Duration) -> float:
    try:
        seconds = duration.seconds
    except OverflowError:  # more digits than a float holds
        seconds = float("inf")
    if seconds <= 0:
        raise CompileProblem("a timeout must be longer than 0", duration, code="E211")
    if not seconds <= MAX_TIMEOUT_S:
        shown = f"{duration.amount}{duration.unit}" if duration.amount.bit_length() < 64 else "a longer one"
        raise CompileProblem(f"a timeout must be at most 24h, not {shown}", duration,
                             code="E211", help="write a duration of a day or less: timeout 30m")
    return seconds


def apply(settings: CaseSettings, stmt: Any) -> CaseSettings:
    """Apply one settings statement; returns the new settings."""
    if isinstance(stmt, a.TagsStmt):
        tags = list(settings.tags)
        for tag in stmt.tags:
            text = str(to_python(tag)) if not isinstance(tag, a.Placeholder) else to_text(tag)
            if text not in tags:
                tags.append(text)
        return replace(settings, tags=tuple(tags))
    if isinstance(stmt, a.RepeatStmt):
        return replace(settings, repeat=_positive_int(stmt.count, "repeat", MAX_REPEAT))
    if isinstance(stmt, a.MaxTurnsStmt):
        return replace(settings, max_turns=_positive_int(stmt.count, "max turns", MAX_TURNS))
    if isinstance(stmt, a.UserTurnsStmt):
        return replace(settings, user_turns=_positive_int(
            stmt.count, "user turns", MAX_USER_TURNS,
            low_help=f"the simulated user writes 1 to {MAX_USER_TURNS} messages (10 when not set)"))
    if isinstance(stmt, a.PassRateStmt):
        rate = to_number(stmt.rate)
        if not 0 < rate <= 1:
            raise CompileProblem(f"a pass rate must be above 0 and at most 1, not {rate}", stmt.rate,
                                 code="E211", help="write a fraction: pass rate at least 0.8")
        return replace(settings, pass_rate=float(rate))
    if isinstance(stmt, a.TimeoutStmt):
        return replace(settings, timeout_s=_timeout(stmt.duration))
    if isinstance(stmt, a.SystemStmt):
        return replace(settings, system=to_text(stmt.text))
    if isinstance(stmt, a.ModeStmt):
        if stmt.mode not in MODES:
            close = difflib.get_close_matches(stmt.mode, MODES, n=1)
            raise CompileProblem(f"unknown mode `{stmt.mode}`", stmt, code="E212",
                                 suggestion=close[0] if close else None,
                                 help="modes: agent, single-turn")
        return replace(settings, mode=stmt.mode)
    if isinstance(stmt, a.SkipStmt):
        return replace(settings, skip=to_text(stmt.reason) if stmt.reason is not None else "")
    if isinstance(stmt, a.XfailStmt):
        return replace(settings, xfail=to_text(stmt.reason) if stmt.reason is not None else "")
    if isinstance(stmt, a.ToolsStmt):  # v2; its names are checked against the declared tools (`_offered`)
        return replace(settings, tools=tuple(tool_name(ref) for ref in stmt.tools))
    return settings


SETTING_TYPES = (a.TagsStmt, a.RepeatStmt, a.MaxTurnsStmt, a.PassRateStmt, a.TimeoutStmt,
                 a.SystemStmt, a.ModeStmt, a.SkipStmt, a.XfailStmt, a.UserTurnsStmt, a.ToolsStmt)


def apply_row_columns(settings: CaseSettings, row: dict[str, Any]) -> CaseSettings:
    """A `tags`, `skip` or `xfail` column sets that row's setting."""
    if "tags" in row:
        raw = to_python(row["tags"])
        extra = raw if isinstance(raw, list) else [t.strip() for t in str(raw).split(",") if t.strip()]
        tags = list(settings.tags) + [str(t) for t in extra if str(t) not in settings.tags]
        settings = replace(settings, tags=tuple(tags))
    for column in ("skip", "xfail"):
        if column in row:
            value = to_python(row[column])
            if isinstance(value, str):
                value = value.strip()
            if value in (None, False, 0, "", "false", "no", "0"):  # 0 == False too: flags read as flags
                continue
            reason = "" if value is True or value in (1, "true", "yes", "1") else str(value)
            settings = replace(settings, skip=reason) if column == "skip" else replace(settings, xfail=reason)
    return settings
