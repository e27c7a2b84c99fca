"""The summary's numbers: the table's groups (a suite's file a row), the statistics and the count line.

Kept apart from `_terminal.Digest`, which gathers them case by case: here is how the gathered
arrays become a `Summary` (the same sums, in the same order, as `summarize_stats`), and how the
table, the statistics and the rules around the listings are written.
"""

from __future__ import annotations

import shutil
from array import array
from itertools import chain

from ..run._record import RunResult, Summary
from ..run._stats import CaseStats, nearest_rank
from ._numbers import num as _num
from ._numbers import pct as _pct
from ._numbers import secs as _secs
from ._progress import _paint

_STATUSES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
_CODE = {status: i for i, status in enumerate(_STATUSES)}
_SKIPPED = _CODE["skipped"]


class _Group:
    """The table numbers of one (suite, file)'s cases, in the order they were added: what
    `summarize_stats` reads of their `CaseStats`, in arrays (a few bytes a case, no object each)."""

    __slots__ = ("first", "status", "score", "latency", "tokens")

    def __init__(self, first: int) -> None:
        self.first = first
        """The least position of the group's cases (the table's rows go in this order)."""
        self.status = bytearray()
        self.score = array("d")
        """``score or 0.0`` of each case that ran (not skipped), as the average reads it."""
        self.latency = array("d")
        """Each run's latency, of the cases that ran."""
        self.tokens: array[int] | list[int] = array("q")
        """Each run's token count (the runs that reported one), of the cases that ran."""

    def add_run(self, status: str, score: float | None, run: RunResult) -> None:
        """`add` of the `CaseStats` of a case that ran once, from its run (no tuples made)."""
        code = _CODE[status]
        self.status.append(code)
        if code == _SKIPPED:
            return
        self.score.append(score or 0.0)
        self.latency.append(run.latency_s)
        artifacts = run.artifacts
        if artifacts is not None and (tokens := artifacts.tokens) is not None:
            try:
                self.tokens.append(tokens)
            except OverflowError:  # past 2**63: plain integers from here on, as in `add`
                self.tokens = [*self.tokens, tokens]

    def add(self, stats: CaseStats) -> None:
        status, score, latencies, tokens = stats
        code = _CODE[status]
        self.status.append(code)
        if code == _SKIPPED:
            return
        self.score.append(score or 0.0)
        self.latency.extend(latencies)
        held = len(self.tokens)
        try:
            self.tokens.extend(tokens)
        except OverflowError:  # a count past 2**63 (the counts before it may be in): plain integers from here on
            self.tokens = [*self.tokens[:held], *tokens]


def _summary(groups: list[_Group]) -> Summary:
    """`summarize_stats` of the groups' cases, one group after another: the same sums in the same
    order, so the same numbers (tests/unit/test_report_terminal.py checks it), without an object a case."""
    counts = [0] * len(_STATUSES)
    for group in groups:
        for code, n in enumerate(_counts(group.status)):
            counts[code] += n
    total = sum(counts)
    ran = total - counts[_SKIPPED]
    runs = sum(len(g.latency) for g in groups)
    tokens = sum(len(g.tokens) for g in groups)
    ordered = sorted(chain.from_iterable(g.latency for g in groups))
    passed, xpassed = counts[_CODE["passed"]], counts[_CODE["xpassed"]]
    tokens_total = sum(chain.from_iterable(g.tokens for g in groups)) if tokens else None
    return Summary(
        total=total,
        passed=passed,
        failed=counts[_CODE["failed"]],
        errors=counts[_CODE["error"]],
        skipped=counts[_SKIPPED],
        xfailed=counts[_CODE["xfailed"]],
        xpassed=xpassed,
        runs=runs,
        accuracy=(passed + xpassed) / ran if ran else None,
        average_score=sum(chain.from_iterable(g.score for g in groups)) / ran if ran else None,
        latency_mean_s=sum(chain.from_iterable(g.latency for g in groups)) / runs if runs else None,
        latency_p50_s=nearest_rank(ordered, 50),
        latency_p95_s=nearest_rank(ordered, 95),
        tokens_total=tokens_total,
        tokens_mean=tokens_total / tokens if tokens_total is not None else None,
    )


def _counts(codes: bytearray) -> list[int]:
    return [codes.count(code) for code in range(len(_STATUSES))]


def _row(suite: str, file: str, s: Summary) -> list[str]:
    return [
        suite, file, str(s.total), str(s.passed), str(s.failed), str(s.errors), str(s.skipped),
        str(s.xfailed), str(s.xpassed),
        _pct(s.accuracy), _num(s.average_score), _secs(s.latency_p50_s),
    ]


def _statistics(s: Summary) -> str:
    ran = s.total - s.skipped
    lines = [
        f"accuracy {_pct(s.accuracy)} ({s.passed + s.xpassed}/{ran} cases that ran)"
        f"   average score {_num(s.average_score)}   runs {s.runs}",
        f"latency mean {_secs(s.latency_mean_s)}  p50 {_secs(s.latency_p50_s)}  p95 {_secs(s.latency_p95_s)}"
        + (f"   tokens {s.tokens_total:,} total, {s.tokens_mean:,.1f} mean" if s.tokens_total is not None else ""),
    ]
    return "\n" + "\n".join(lines)


def _final_line(s: Summary, colour: bool, elapsed_s: float | None) -> str:
    counts = [
        (s.failed, "failed"), (s.passed, "passed"), (s.skipped, "skipped"),
        (s.xfailed, "xfailed"), (s.xpassed, "xpassed"), (s.errors, "error" if s.errors == 1 else "errors"),
    ]
    text = ", ".join(f"{n} {word}" for n, word in counts if n) or "no cases ran"
    if elapsed_s is not None:
        text += f" in {elapsed_s:.2f}s"
    code = "31" if s.failed or s.errors else ("33" if not s.passed and not s.xpassed else "32")
    return _rule(text, colour, code)


def heading(text: str, colour: bool) -> str:
    """A rule naming what the block below it is about (``==== model openai:a (1 of 2) ====``)."""
    return _rule(text, colour, "1")


def _rule(text: str, colour: bool, code: str) -> str:
    width = min(100, max(40, shutil.get_terminal_size((80, 20)).columns))
    side = max(3, (width - len(text) - 2) // 2)
    return _paint(f"{'=' * side} {text} {'=' * side}", code, colour)
