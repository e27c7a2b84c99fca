"""What the HTML dashboard receives: run records reduced to plain JSON-ready dicts.

The page is rendered in the browser from data, not from server-side HTML,
so the whole contract between Python and the page is this module's output
(`PageData`), tested without a browser. It is split in two on purpose:

- ``summary``: one small entry per run record and one per case, with a
  *cell* per case per record (status, pass rate, flaky, errors). The page
  parses it at load and keeps it in memory; 5,000 cases x 5 records is a
  few megabytes (3.7 MB in bench/bench_report.py).
- ``details``: per case, everything a record holds about it (prompt, every
  repeat's transcript, tool calls, final text, expectations, errors). Each
  case's details go into their own JSON block, parsed only when that case's
  expander opens, so a large record does not pay for transcripts at load.

Cases of several records line up by `case_key` (the case's file, made
relative and normalized, and its name), the identity that `--lf`,
`--resume` and `evaldsl compare` use, so the heatmap and the comparison
never disagree about which case is which. A case whose file moved is two
rows, one in each record, never merged by guesswork.

Only what the records hold reaches the page, and of their metadata only
what a reader needs (no command line, no selection): the record has no
environment variables or keys, and nothing here adds any.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..run._record import CaseResult, EvalReport
from ..run._select import case_key

PAGE_SCHEMA = 1
"""Version of the page's data layout (the JS checks it)."""


@dataclass
class PageData:
    """Everything the template needs; every value is JSON-ready."""

    title: str
    summary: dict[str, Any]
    """``runs``, ``cases`` (with ``cells``), ``suites``, ``tags``, ``comparison``."""
    details: list[list[dict[str, Any] | None]] = field(default_factory=list)
    """Per case (same order as ``summary["cases"]``), per record: the case's full results, or None."""


def build_page_data(
    records: Sequence[tuple[str, EvalReport]],
    *,
    title: str | None = None,
    comparison: dict[str, Any] | None = None,
) -> PageData:
    """Reduce run records to the dashboard's data.

    Args:
        records: ``(source, record)`` pairs in display order; ``source`` is the
            file the record was read from (its base name is shown).
        title: the page title; by default names the agents.
        comparison: the two-record comparison (see `evaldsl.report._html_compare`), if any.
    """
    keys, per_record = _align(records)
    cases: list[dict[str, Any]] = []
    details: list[list[dict[str, Any] | None]] = []
    for key in keys:
        found = [index.get(key) for index in per_record]
        first = next(c for c in found if c is not None)
        tags = sorted({t for c in found if c is not None for t in c.tags})
        cases.append({
            "suite": first.suite, "name": first.name, "file": first.file, "line": first.line, "tags": tags,
            "cells": [None if c is None else _cell(c) for c in found],
        })
        details.append([None if c is None else _detail(c) for c in found])
    summary = {
        "schema": PAGE_SCHEMA,
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runs": [_run_entry(source, record) for source, record in records],
        "cases": cases,
        "suites": sorted({str(c["suite"]) for c in cases}),
        "tags": sorted({str(t) for c in cases for t in c["tags"]}),
        "comparison": comparison,
    }
    labels = list(dict.fromkeys(r.meta.agent or "agent" for _, r in records))
    return PageData(title or f"evaldsl report: {', '.join(labels)}", summary, details)


def _align(records: Sequence[tuple[str, EvalReport]]) -> tuple[list[tuple[str, str]], list[dict[Any, CaseResult]]]:
    """Every case key in first-seen order, and each record's cases by key."""
    keys: dict[tuple[str, str], None] = {}
    per_record = []
    for _, record in records:
        index: dict[tuple[str, str], CaseResult] = {}
        for case in record.cases:
            key = case_key(case.file, case.name)
            copy = 1
            while key in index:  # not made by `evaldsl run`, but kept: nothing in a record is dropped
                copy += 1
                key = (key[0], f"{case.name} (#{copy})")
            index[key] = case
            keys.setdefault(key, None)
        per_record.append(index)
    return list(keys), per_record


def _run_entry(source: str, record: EvalReport) -> dict[str, Any]:
    """One leaderboard row."""
    meta, s = record.meta, record.summary
    return {
        "label": meta.agent or "agent",
        "source": os.path.basename(source),
        "backend": meta.backend,
        "started_at": meta.started_at.isoformat() if meta.started_at else None,
        "complete": meta.complete,
        "git_commit": meta.git_commit,
        "evaldsl_version": meta.evaldsl_version,
        "total": s.total, "passed": s.passed, "failed": s.failed, "errors": s.errors,
        "skipped": s.skipped, "xfailed": s.xfailed, "xpassed": s.xpassed, "runs": s.runs,
        "accuracy": s.accuracy, "average_score": s.average_score,
        "latency_p50_s": s.latency_p50_s, "latency_p95_s": s.latency_p95_s,
        "tokens_total": s.tokens_total,
    }


def _cell(case: CaseResult) -> dict[str, Any]:
    """One heatmap cell: a case in one record."""
    runs = len(case.runs)
    passed = sum(r.passed for r in case.runs)
    errors = sum(r.error is not None for r in case.runs)
    return {
        "status": case.status,
        "pass_rate": case.pass_rate,
        "score": case.score,
        "runs": runs,
        "passed": passed,
        "errors": errors,
        "flaky": 0 < passed < runs,
        "latency_s": case.latency_s,
        "error_kinds": sorted({r.error.kind or "unknown" for r in case.runs if r.error is not None}),
    }


def _detail(case: CaseResult) -> dict[str, Any]:
    """Everything a record holds about one case, for its expander."""
    return case.model_dump(mode="json", exclude={"suite", "name", "tags"})
