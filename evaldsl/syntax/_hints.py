"""Hints for mistakes a newcomer makes, added to a syntax diagnostic once it is made.

The parser says what it expected where it stopped; for a few mistakes that
is true but not what helps. `60%` where a rate goes is a fraction
written as a percentage; `case adds numbers` is a name that lacks its
quotes. Each hint reads the diagnostic and its source line only, so the
parser's error path needs one call and no change of its own.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ._diagnostics import Diagnostic

_RATE_BEFORE = re.compile(r"\b(?:at\s+least|for)\s+(\d+(?:\.\d+)?)\s*$")
"""Where a fraction goes: `pass rate at least R`, `judge "..." at least R`, `... for CREDIT`."""
_NAMED = re.compile(r"(?P<head>\s*(?P<keyword>case|suite)\s+)(?P<name>[^\"$#\s][^#]*?)\s*(?:#.*)?$")


def with_hint(diagnostic: Diagnostic, text: str) -> Diagnostic:
    """The diagnostic with a `help` for a known mistake; unchanged when none applies or it has one."""
    span = diagnostic.span
    if diagnostic.help is not None or span is None:
        return diagnostic
    lines = text.split("\n")
    line = lines[span.line - 1] if 0 < span.line <= len(lines) else ""
    hint = (_percent(diagnostic, line[: span.column - 1]) or _unquoted_name(diagnostic, line, span.column)
            or _count_before_with(diagnostic, line))
    return replace(diagnostic, help=hint) if hint else diagnostic


_COUNT_THEN_WITH = re.compile(
    r'(?P<head>.*?\bcalled\s+(?:"[^"]*"|\S+))\s+(?P<count>once|twice|\d+\s+times|at\s+(?:least|most)\s+\d+\s+times'
    r'|between\s+\d+\s+and\s+\d+\s+times)\s+with\s+(?P<args>.*?)\s*(?:#.*)?$')


def _count_before_with(diagnostic: Diagnostic, line: str) -> str | None:
    """`called T twice with <...>`: the count comes after the arguments."""
    found = _COUNT_THEN_WITH.match(line)
    if diagnostic.message != "unexpected `with`" or found is None:
        return None
    head = found.group("head").strip()
    return f"the count comes after the arguments: {head} with {found.group('args')} {found.group('count')}"


def _percent(diagnostic: Diagnostic, before: str) -> str | None:
    """`at least 60%`: rates, thresholds and credits are fractions from 0 to 1."""
    number = _RATE_BEFORE.search(before)
    if diagnostic.message != "unexpected character `%`" or number is None:
        return None
    fraction = f"{float(number.group(1)) / 100:g}"
    return f"a rate is a fraction from 0 to 1: write `{fraction}`, not `{number.group(1)}%`"


def _unquoted_name(diagnostic: Diagnostic, line: str, column: int) -> str | None:
    """`case adds numbers`: a case's (or suite's) name is a string."""
    named = _NAMED.fullmatch(line)
    if diagnostic.code != "E100" or named is None or column != len(named.group("head")) + 1:
        return None
    name = named.group("name").replace("\\", "\\\\").replace('"', '\\"')
    return f'a {named.group("keyword")} name is a string, in quotes: {named.group("keyword")} "{name}"'
