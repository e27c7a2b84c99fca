"""What a person sees: progress on stderr, then a summary on stdout.

Progress goes to stderr so that stdout carries only the report (and can be
piped). On a terminal it is one live line, redrawn in place: a bar, the
counts so far and the elapsed time; elsewhere (CI logs, pipes) it is one
plain line per finished case, since carriage returns make logs unreadable.
No dependency is needed for either: ANSI "erase line" is enough.

The summary follows pytest: a table (one row per suite, and the totals),
the statistics, a "short summary" spelling out every failed expectation
with its detail and ``file:line``, and a final count line. Colour is used
only on a terminal and never when ``NO_COLOR`` is set.
"""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import chain, islice
from typing import TextIO

from ..run._record import CaseResult, EvalReport, RunResult, Summary
from ..run._stats import CaseStats, case_stats, nearest_rank
from ._details import Details
from ._numbers import num as _num
from ._numbers import pct as _pct
from ._numbers import secs as _secs
from ._progress import _COLOURS, _LABELS, _paint, _shown

SHOWN_MESSAGE = 2_000
"""Characters of an error message the summary shows; the record keeps up to 65,536."""


def format_report(
    report: EvalReport, *, colour: bool = False, elapsed_s: float | None = None, note: str | None = None
) -> str:
    """The human summary of a report: table, statistics, failures, count line."""
    digest = Digest()
    for case in report.cases:
        digest.add(case)
    return digest.render(report.summary, colour=colour, elapsed_s=elapsed_s, note=note)


class Digest:
    """What the summary shows of each case, kept as the cases finish, so that a run need not keep them.

    Per case: its table numbers (a `_Group`'s arrays: a status code, the
    score, each run's latency and token count); for a case that failed,
    passed on partial credit, or had its artifacts changed to be recorded,
    the text the summary prints of it, made at once (the label's colour is
    added at the end). Cases may be added in any order: ``position`` (the
    case's place in the record) puts the groups and the listings in record
    order.

    The texts go to a spool (in memory up to `SPOOL_BYTES`, then a temporary
    file) and what each is (position, kind, status, packed in one integer)
    and where it ends to two arrays, so a run of 100,000 failing cases holds
    about 40 bytes a case.

    Most cases ran once, without an error or a warning: `_add_plain` makes
    their numbers and texts without the general path's loops over the runs
    (tests/unit/test_report_terminal.py checks that both give the same).
    """

    SPOOL_BYTES = 1 << 20
    BLOCK = 1 << 16

    def __init__(self, details: Details | None = None) -> None:
        self.details = details if details is not None else Details()
        """How much of each failed case is shown beside its failures (final text, calls, traceback)."""
        self._shows_runs = type(self.details) is not Details or self.details.verbosity >= 1
        """False when a failed run without an error shows nothing below its failures (``-q``)."""
        self._groups: dict[tuple[str, str], _Group] = {}
        self._spool = tempfile.SpooledTemporaryFile(max_size=self.SPOOL_BYTES)
        self._spooled = 0
        self._pending = bytearray()
        """Texts not yet in the spool (at most `BLOCK` bytes)."""
        self._count = 0
        self._note_key = array("q")
        """Each note's ``position << 5 | kind << 3 | status code``: one append a note."""
        self._note_end = array("q")
        """Where each note's text ends in the spool (it starts where the one before ends)."""

    def _note(self, position: int, kind: int, status: str, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        self._spooled += len(data)
        self._note_key.append(position << 5 | kind << 3 | _CODE[status])
        self._note_end.append(self._spooled)
        self._pending += data  # the spool gets the texts a block at a time: a seek and a write a note cost more
        if len(self._pending) >= self.BLOCK:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._spool.seek(self._spooled - len(self._pending))
            self._spool.write(self._pending)
            self._pending.clear()

    def _note_order(self) -> Iterable[int]:
        """The notes' indexes in record order (a stable sort: notes of one position keep their order)."""
        keys = self._note_key
        if all(a <= b for a, b in zip(keys, islice(keys, 1, None))):  # so the positions are in order too
            return range(len(keys))  # cases mostly finish in record order: nothing to sort
        return sorted(range(len(keys)), key=lambda i: keys[i] >> 5)

    def _texts(self, kind: int, order: Iterable[int]) -> Iterator[tuple[str, str]]:
        """(status, text) of each note of ``kind``, in record order."""
        keys, ends = self._note_key, self._note_end
        self._flush()
        for i in order:
            key = keys[i]
            if key >> 3 & 3 == kind:
                start = ends[i - 1] if i else 0
                self._spool.seek(start)
                yield _STATUSES[key & 7], self._spool.read(ends[i] - start).decode("utf-8", "surrogatepass")

    def add(self, case: CaseResult, position: int | None = None) -> None:
        """Count one finished case (``position``: its place in the record; default: after the last)."""
        position = self._count if position is None else position
        self._count += 1
        group_key = (case.suite, case.file)
        group = self._groups.get(group_key)
        if group is None:
            group = self._groups[group_key] = _Group(position)
        elif position < group.first:
            group.first = position
        runs = case.runs
        if len(runs) == 1 and (run := runs[0]).error is None and not run.warnings:  # most cases: the fast path
            self._add_plain(case, run, group, position)
        else:
            self._add_general(case, group, position)

    def _add_general(self, case: CaseResult, group: _Group, position: int) -> None:
        """`add` of any case: repeats, errors and warnings included."""
        group.add(case_stats(case))
        if case.status in ("failed", "error"):
            self._note(position, _FAILURE, case.status, self._with_details(_failure_body(case), case))
        elif case.status in ("passed", "xpassed") and (partial := partial_credits(case)):
            self._note(position, _PARTIAL, case.status, _partial_body(case, partial))
        if any(r.warnings for r in case.runs):
            self._note(position, _WARNING, case.status, _warning_line(case))

    def _add_plain(self, case: CaseResult, run: RunResult, group: _Group, position: int) -> None:
        """`add` of a case of one run without an error or a warning (most cases): the same numbers and
        texts without the general path's tuples, counters and loops over the runs."""
        status = case.status
        group.add_run(status, case.score, run)
        if status == "failed" or status == "error":  # ("error" too: a CaseResult made by hand may say so)
            body = self._plain_failure_body(case, run)  # (no error, so no traceback: -q shows no details)
            self._note(position, _FAILURE, status, self._with_details(body, case) if self._shows_runs else body)
        elif status == "passed" or status == "xpassed":
            for e in run.expectations:
                if 0 < e.credit < 1 and run.passed:  # rare: the general path's text
                    self._note(position, _PARTIAL, status, _partial_body(case, partial_credits(case)))
                    break

    def _with_details(self, body: str, case: CaseResult) -> str:
        extra = self.details.lines(case)
        return body + "\n" + "\n".join(extra) if extra else body

    def _plain_failure_body(self, case: CaseResult, run: RunResult) -> str:
        """`_failure_body` of a case of one run without an error: its head and its failing expectations,
        made in one pass over them, the case's file shown once."""
        file = case.file
        shown = _shown(file)
        lines = [f"{shown}:{case.line} {case.suite}::{case.name}"]
        failed: set[int] = set()
        for e in run.expectations:
            if e.passed:
                continue
            line = e.line
            if line in failed:  # maybe one expectation twice, which `failed_expectations` lists once: rare
                return _failure_body(case)
            failed.add(line)
            turn = "" if e.turn is None else ", " + turn_name(run, e.turn)
            lines.append(f"  x expect {e.label}  ({shown if e.file == file else _shown(e.file)}:{line}{turn})")
            if detail := e.detail:
                lines.append("      " + detail.replace("\n", "\n      "))
        return "\n".join(lines)

    def summary(self) -> Summary:
        """The summary over every case added."""
        return _summary(list(self._groups.values()))

    def render(self, summary: Summary | None = None, *, colour: bool = False, elapsed_s: float | None = None,
               note: str | None = None) -> str:
        """The summary text (`format_report`'s)."""
        out = io.StringIO()
        self.write(out, summary, colour=colour, elapsed_s=elapsed_s, note=note)
        return out.getvalue()

    def write(self, out: TextIO, summary: Summary | None = None, *, colour: bool = False,
              elapsed_s: float | None = None, note: str | None = None) -> None:
        """Write `render`'s text to ``out`` a block at a time (the whole text is never held, and a stream
        without a buffer, as under PYTHONUNBUFFERED, is not written to once a listing)."""
        out = _Blocks(out)  # type: ignore[assignment]
        try:
            self._write(out, summary, colour=colour, elapsed_s=elapsed_s, note=note)
        finally:
            out.flush()

    def _write(self, out: TextIO, summary: Summary | None, *, colour: bool, elapsed_s: float | None,
               note: str | None) -> None:
        summary = summary or self.summary()
        out.write(self._table() + "\n" + _statistics(summary))
        order = self._note_order()
        for kind, title, code in ((_PARTIAL, "partial credit", "33"), (_FAILURE, "short summary", "31")):
            for i, (status, body) in enumerate(self._texts(kind, order)):
                if i == 0:
                    out.write("\n" + _rule(title, colour, code))
                out.write("\n" + _paint(_LABELS[status], _COLOURS[status], colour) + " " + body)
        for i, (_, body) in enumerate(self._texts(_WARNING, order)):
            out.write(("\nrecorded with changes (values JSON cannot hold; see `warnings` in the record):\n  "
                       if i == 0 else "\n  ") + body)
        if note:
            out.write("\n" + note)
        out.write("\n" + _final_line(summary, colour, elapsed_s) + "\n")

    def _table(self) -> str:
        groups = sorted(self._groups.items(), key=lambda item: item[1].first)
        header = [
            "suite", "file", "cases", "passed", "failed", "errors", "skipped", "xfailed", "xpassed",
            "accuracy", "score", "p50",
        ]
        rows = [_row(suite, _shown(file), _summary([group])) for (suite, file), group in groups]
        if len(groups) != 1:
            rows.append(_row("total", "", _summary([group for _, group in groups])))
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines = []
        for row in [header, *rows]:
            cells = [c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
            lines.append("  ".join(cells).rstrip())
        return "\n".join(lines)


class _Blocks:
    """A text stream's writes gathered into blocks of about `SIZE` characters."""

    SIZE = 1 << 16

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._parts: list[str] = []
        self._size = 0

    def write(self, text: str) -> None:
        self._parts.append(text)
        self._size += len(text)
        if self._size >= self.SIZE:
            self.flush()

    def flush(self) -> None:
        """Write what is gathered (the stream itself is not flushed)."""
        if self._parts:
            self._out.write("".join(self._parts))
            self._parts.clear()
            self._size = 0


_STATUSES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
_CODE = {status: i for i, status in enumerate(_STATUSES)}
_SKIPPED = _CODE["skipped"]
_FAILURE, _PARTIAL, _WARNING = 0, 1, 2


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


def shorten_message(text: str, limit: int = SHOWN_MESSAGE) -> str:
    """``text`` cut to ``limit`` characters for the terminal; the record keeps more."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit:,} more characters, in the record)"


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


def _indent(text: str, by: int = 4) -> str:
    return text.replace("\n", "\n" + " " * by)



