"""Joining run records (the shards of a CI matrix) into one record.

`merge_records` is what `evaldsl merge` calls. It only joins records that
describe one run split up: the same agent (name), the same backend, and the
same suite version (`RunMeta.suite_version`, the fingerprint of the loaded
cases). A record without a suite version was made before shards existed;
it is refused, since nothing tells whether it ran the same suites.

Every case is kept once. A case in two records is accepted only when both
results are identical (the same record given twice, say), and then kept
once with a warning; two different results of one case are refused, since
keeping either would silently drop the other.

Order: shard records (``meta.shard`` is ``I/N``) are put back into the
exact order of one unsharded run, by replaying the round-robin assignment
of `run._shard` over the cases' files; when that cannot be done (a shard is
missing or was interrupted) the cases are ordered by file (in the order of
``meta.suites``) and line, with a warning. The summary is recomputed from
the cases with the runner's own `summarize`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..run._record import CaseResult, EvalReport, RunMeta
from ..run._select import case_key
from ..run._shard import Shard, ShardError, sharding_order
from ..run._stats import summarize

Warn = Callable[[str], None]


class MergeError(ValueError):
    """Records that cannot be joined into one; the message says which and why."""


def merge_records(
    reports: Sequence[EvalReport], *, names: Sequence[str] | None = None, warn: Warn | None = None
) -> EvalReport:
    """Join records of one run split in shards into the record of the whole run.

    Args:
        reports: the records (at least one).
        names: how to call each record in messages (e.g. its file); default ``record 1``, ...
        warn: called with each warning (a missing shard, a case given twice identically,
            records from different evaldsl versions or commits); default: ignored.

    Raises:
        MergeError: different agents, backends or suite versions; a record without a
            suite version; shards of different N, or one shard given twice; one case
            with two different results.
    """
    if not reports:
        raise MergeError("nothing to merge: give at least one record")
    names = list(names) if names is not None else [f"record {i + 1}" for i in range(len(reports))]
    say: Warn = warn or (lambda _message: None)
    _check_same_run(reports, names, say)
    split = _split(reports, names, say)
    cases = _unique_cases(reports, names, say)
    ordered = _ordered(cases, split, reports, say)
    complete = all(r.meta.complete for r in reports) and not (split and split.missing)
    meta = _merged_meta(reports, complete=complete)
    return EvalReport(meta=meta, summary=summarize(ordered), cases=ordered)


def _check_same_run(reports: Sequence[EvalReport], names: list[str], warn: Warn) -> None:
    first = reports[0].meta
    for report, name in zip(reports, names):
        if report.meta.suite_version is None:
            raise MergeError(f"{name} has no suite version (it was made before evaldsl recorded one), so "
                             "nothing tells whether it ran the same suites: run it again to merge it")
    for field, what in (("agent", "agent"), ("backend", "backend"), ("suite_version", "suite version")):
        values = {getattr(r.meta, field) for r in reports}
        if len(values) > 1:
            listed = ", ".join(f"{n}: {getattr(r.meta, field)!r}" for r, n in zip(reports, names))
            raise MergeError(f"the records are not of one run: different {what}s ({listed})")
    for field, what in (("evaldsl_version", "evaldsl versions"), ("git_commit", "git commits"),
                        ("selection", "selections")):
        if any(getattr(r.meta, field) != getattr(first, field) for r in reports):
            listed = ", ".join(f"{n}: {getattr(r.meta, field)!r}" for r, n in zip(reports, names))
            warn(f"the records were made with different {what} ({listed}); the first one's is kept")


@dataclass(frozen=True)
class _Split:
    count: int
    """N of I/N."""
    shard_of: dict[int, int]
    """The position of each record among the inputs -> its shard index I."""

    @property
    def missing(self) -> list[str]:
        have = set(self.shard_of.values())
        return [f"{i}/{self.count}" for i in range(1, self.count + 1) if i not in have]


def _split(reports: Sequence[EvalReport], names: list[str], warn: Warn) -> _Split | None:
    """How the records split one run; None when none of them is a shard."""
    parsed: list[Shard | None] = []
    for report, name in zip(reports, names):
        try:
            parsed.append(Shard.parse(report.meta.shard) if report.meta.shard else None)
        except ShardError:
            raise MergeError(f"{name}: its shard {report.meta.shard!r} is not I/N") from None
    if all(s is None for s in parsed):
        return None
    if any(s is None for s in parsed) or len({s.count for s in parsed if s}) > 1:
        listed = ", ".join(f"{n}: {s or 'not sharded'}" for s, n in zip(parsed, names))
        raise MergeError(f"the records are not shards of one split ({listed})")
    shard_of: dict[int, int] = {}
    where: dict[int, str] = {}
    for position, (shard, name) in enumerate(zip(parsed, names)):
        assert shard is not None
        if shard.index in where:
            raise MergeError(f"shard {shard} is given twice ({where[shard.index]} and {name})")
        shard_of[position], where[shard.index] = shard.index, name
    split = _Split(next(s.count for s in parsed if s), shard_of)
    if split.missing:
        warn(f"shard(s) {', '.join(split.missing)} missing: the merged record is marked incomplete")
    return split


def _unique_cases(reports: Sequence[EvalReport], names: list[str], warn: Warn) -> list[tuple[CaseResult, int]]:
    """Every case once, with the position of its record; identical repeats kept once, others refused."""
    seen: dict[tuple[str, str], tuple[CaseResult, str]] = {}
    out: list[tuple[CaseResult, int]] = []
    for i, (report, name) in enumerate(zip(reports, names)):
        for case in report.cases:
            key = case_key(case.file, case.name)
            if key in seen:
                other, other_name = seen[key]
                if other.model_dump() != case.model_dump():
                    raise MergeError(f"case {case.id} has different results in {other_name} and {name}; "
                                     "merge keeps every case once and will not choose between them")
                warn(f"case {case.id} is in both {other_name} and {name}, identical: kept once")
                continue
            seen[key] = (case, name)
            out.append((case, i))
    return out


def _ordered(cases: list[tuple[CaseResult, int]], split: _Split | None,
             reports: Sequence[EvalReport], warn: Warn) -> list[CaseResult]:
    suites = list(dict.fromkeys(f for r in reports for f in r.meta.suites))
    if split is not None:
        replayed = _replay(cases, split, suites)
        if replayed is not None:
            return replayed
        warn("the shards do not add up to one run (a shard missing, interrupted or run with another "
             "selection): cases are ordered by file and line")
    return _by_file_and_line(cases, suites)


def _replay(cases: list[tuple[CaseResult, int]], split: _Split, suites: list[str]) -> list[CaseResult] | None:
    """The unsharded run's order, replaying `run._shard`'s round-robin; None when it does not fit."""
    queues: dict[tuple[int, str], deque[CaseResult]] = {}
    per_file: dict[str, list[CaseResult]] = {}
    for case, position in cases:
        queues.setdefault((split.shard_of[position], case.file), deque()).append(case)
        per_file.setdefault(case.file, [])
    p = 0
    for file in sharding_order(list(per_file), lambda f: f, suites):
        total = sum(len(q) for (_, f), q in queues.items() if f == file)
        for _ in range(total):
            queue = queues.get((p % split.count + 1, file))
            if not queue:
                return None
            per_file[file].append(queue.popleft())
            p += 1
    return [c for file in _file_order(per_file, suites) for c in per_file[file]]


def _by_file_and_line(cases: list[tuple[CaseResult, int]], suites: list[str]) -> list[CaseResult]:
    rank = {f: i for i, f in enumerate(_file_order({c.file: None for c, _ in cases}, suites))}
    return [c for c, _ in sorted(cases, key=lambda cp: (rank[cp[0].file], cp[0].line))]


def _file_order(files: Mapping[str, object], suites: list[str]) -> list[str]:
    """The files in the order of the run (``meta.suites``), others after in first-seen order."""
    return [f for f in suites if f in files] + [f for f in files if f not in suites]


def _merged_meta(reports: Sequence[EvalReport], *, complete: bool) -> RunMeta:
    first = reports[0].meta
    starts = [r.meta.started_at for r in reports if r.meta.started_at is not None]
    ends = [r.meta.finished_at for r in reports if r.meta.finished_at is not None]
    return first.model_copy(update={
        "started_at": min(starts) if starts else None,
        "finished_at": max(ends) if ends else None,
        "complete": complete,
        "shard": None,
        "suites": list(dict.fromkeys(f for r in reports for f in r.meta.suites)),
    })
