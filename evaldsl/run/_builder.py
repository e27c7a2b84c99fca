"""Assembling an `EvalReport` from case results, complete or partial.

Case results arrive in the order they finish; a report lists them in file
and case order. `ReportBuilder` keeps that order and can produce a report
at any moment; `run_suite` resumes on it: a previous record's cases are
seeded into the builder and only the missing ones are run. (`evaldsl run`
keeps its results on disk instead: `report._keeper`.)

Also here: the run's metadata (version, times, suites, git commit). The git
commit is read from the `.git` directory with plain file reads (HEAD, the
ref, packed-refs), not by running `git`, so a run stays cheap and works
where git is not installed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from ..compile._model import CompiledCase, case_keys
from ._record import CaseResult, EvalReport, RunMeta
from ._select import case_key
from ._stats import summarize

Key = tuple[str, str]


class ReportBuilder:
    """Collects case results and builds reports in case order.

    Args:
        cases: the cases of the run, in file and case order.
        meta: the run's metadata; ``started_at`` is filled in when missing.
        previous: a record to resume: its cases count as done.
    """

    def __init__(
        self, cases: Sequence[CompiledCase], meta: RunMeta, previous: EvalReport | None = None
    ) -> None:
        self._order: list[Key] = []
        seen: set[Key] = set()
        for file, name in case_keys(cases):  # (of cases made when read: without making them)
            key = case_key(file, name)
            if key not in seen:
                seen.add(key)
                self._order.append(key)
        self._known = seen
        self._done: dict[Key, CaseResult] = {}
        if previous is not None:
            for result in previous.cases:
                key = case_key(result.file, result.name)
                self._done[key] = result
                if key not in seen:  # keep cases of the old record that are not loaded now
                    seen.add(key)
                    self._order.append(key)
        self.meta = meta.model_copy()
        if self.meta.started_at is None:
            self.meta.started_at = now()

    def add(self, result: CaseResult) -> None:
        """Record a finished case."""
        key = case_key(result.file, result.name)
        if key not in self._known:
            self._known.add(key)
            self._order.append(key)
        self._done[key] = result

    def is_done(self, case: CompiledCase) -> bool:
        """True when the case already has a result (from this run or a resumed record)."""
        return case_key(case.file, case.name) in self._done

    def results(self) -> list[CaseResult]:
        """The finished cases, in case order."""
        return [self._done[k] for k in self._order if k in self._done]

    def build(self, *, complete: bool) -> EvalReport:
        """A report of the cases finished so far."""
        cases = self.results()
        meta = self.meta.model_copy(update={"finished_at": now(), "complete": complete})
        return EvalReport(meta=meta, summary=summarize(cases), cases=cases)


def now() -> datetime:
    """The current time, UTC, to the microsecond."""
    return datetime.now(timezone.utc)


def suite_files(cases: Iterable[CompiledCase]) -> list[str]:
    """The distinct files of the cases, in order of first appearance."""
    return list(dict.fromkeys(file for file, _ in case_keys(cases)))


def git_commit(path: str | os.PathLike[str]) -> str | None:
    """The commit checked out in the git work tree holding ``path``; None when there is none."""
    try:
        git_dir = _find_git_dir(Path(path).resolve())
        if git_dir is None:
            return None
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head or None
        ref = head[4:].strip()
        common = _common_dir(git_dir)
        for base in (git_dir, common):
            ref_file = base / ref
            if ref_file.is_file():
                return ref_file.read_text(encoding="utf-8").strip() or None
        return _packed_ref(common / "packed-refs", ref)
    except (OSError, UnicodeDecodeError):
        return None


def _find_git_dir(start: Path) -> Path | None:
    here = start if start.is_dir() else start.parent
    for folder in (here, *here.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = dot_git.read_text(encoding="utf-8").strip()
            if text.startswith("gitdir:"):
                return (folder / text[7:].strip()).resolve()
    return None


def _common_dir(git_dir: Path) -> Path:
    pointer = git_dir / "commondir"
    if pointer.is_file():
        return (git_dir / pointer.read_text(encoding="utf-8").strip()).resolve()
    return git_dir


def _packed_ref(packed: Path, ref: str) -> str | None:
    if not packed.is_file():
        return None
    for line in packed.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == ref and not line.startswith(("#", "^")):
            return parts[0]
    return None
