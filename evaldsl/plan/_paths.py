"""Which .evl files a list of paths names: the one rule `check`, `fmt`, `run` and `rescore` share.

Directories are searched recursively and sorted; a path that does not exist is refused with the
near names beside it. Light on purpose: `evaldsl check` imports it.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from pathlib import Path


def expand_paths(paths: Iterable[str]) -> list[Path]:
    """Files as given; directories become every *.evl below them, sorted (recursive)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob("*.evl") if p.is_file()))
        else:
            out.append(path)
    return out


class PathProblem(Exception):
    """Paths that name no .evl file to work on; ``problems`` holds one line for each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def evl_files(paths: Iterable[str], *, missing_ok: bool = False) -> list[Path]:
    """`expand_paths`, refusing a directory that holds no .evl file and (unless ``missing_ok``)
    a path that does not exist, with the near names in its directory.

    Raises:
        PathProblem: naming every such path, not only the first.
    """
    out: list[Path] = []
    problems: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = expand_paths([raw])
            if not found:
                problems.append(f"no .evl files under {raw}")
            out.extend(found)
        elif missing_ok or path.exists():
            out.append(path)
        else:
            problems.append(f"no such file or directory: {raw}{_near(raw)}")
    if problems:
        raise PathProblem(problems)
    return out


def _near(raw: str) -> str:
    """` (did you mean ...?)` naming the .evl files and folders beside a missing path that are
    close to its name; '' when none is."""
    stripped = raw.rstrip("/\\") or raw  # `suits/` is the name `suits`
    folder = os.path.dirname(stripped)
    try:
        names = [e.name for e in os.scandir(folder or ".") if e.is_dir() or e.name.endswith(".evl")]
    except OSError:
        return ""
    near = difflib.get_close_matches(os.path.basename(stripped), names, n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(os.path.join(folder, n) for n in near)}?)" if near else ""


def unique_files(paths: list[Path]) -> list[Path]:
    """Each file once, at its first mention: `d d/x.evl ./d/x.evl` names d/x.evl three times."""
    seen: set[Path] = set()
    out = []
    for path in paths:
        resolved = path.resolve()
        if resolved not in seen:
            seen.add(resolved)
            out.append(path)
    return out
