"""Shards: one deterministic slice of the selected cases, and the suite's version.

`--shard I/N` splits a run over N machines (a CI matrix): each machine
loads the same files, selects the same cases, and runs the I-th slice.
Every machine must compute the same slices, whatever the order in which
the files were named or found and wherever the checkout lives, so the slice
is defined on what every checkout agrees on:

1. the selected cases are ordered by their file's path *relative to the
   common root of the loaded files* (compared as path components, POSIX or
   Windows alike), keeping the order of the cases inside a file;
2. the case at position p (from 0) of that order goes to shard ``p mod N + 1``.

Round-robin rather than contiguous blocks: a file of slow cases (a browser
suite) is spread over every shard, and shard sizes differ by at most one.
Because the slice is a function of positions in a known order, `merge` can
put the cases of N shard records back into the exact order of one
unsharded run (`interleave`).

`suite_version` fingerprints the loaded cases (identity, prompt, settings,
setup, expectation labels, declared tools), so `merge` can refuse records
made from different suites.
"""

from __future__ import annotations

import hashlib
import ntpath
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..compile._model import CompiledCase

T = TypeVar("T")
_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


class ShardError(ValueError):
    """A ``--shard`` value that is not ``I/N`` with 1 <= I <= N."""


@dataclass(frozen=True)
class Shard:
    """The I-th of N slices (I from 1)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 1 <= self.index <= self.count:
            raise ShardError(f"shard {self.index}/{self.count}: I/N needs 1 <= I <= N")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/4"`` -> Shard(2, 4).

        Raises:
            ShardError: naming the value and the expected form.
        """
        m = _SHARD.fullmatch(text)
        if m is None:
            raise ShardError(f"--shard {text!r}: expected I/N, two whole numbers with 1 <= I <= N (e.g. 2/4)")
        index, count = int(m.group(1)), int(m.group(2))
        if count < 1 or not 1 <= index <= count:
            raise ShardError(f"--shard {text!r}: I/N needs 1 <= I <= N (shards are counted from 1)")
        return cls(index, count)


def file_keys(files: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Each file's path relative to the common root of ``files``, as a tuple of components."""
    parts = {f: _components(f) for f in dict.fromkeys(files)}
    if not parts:
        return {}
    dirs = [p[:-1] for p in parts.values()]
    common = dirs[0]
    for d in dirs[1:]:
        n = 0
        while n < min(len(common), len(d)) and common[n] == d[n]:
            n += 1
        common = common[:n]
    return {f: p[len(common):] for f, p in parts.items()}


def _components(path: str) -> tuple[str, ...]:
    flavour = ntpath if "\\" in path else posixpath
    norm = flavour.normpath(path).replace("\\", "/")
    return tuple(x for x in norm.split("/") if x not in ("", "."))


def sharding_order(items: Sequence[T], file_of: Any, all_files: Iterable[str]) -> list[T]:
    """``items`` ordered by their file's relative path, stable inside a file."""
    keys = file_keys(all_files)
    fallback = file_keys(file_of(x) for x in items)  # a file outside all_files (should not happen)
    return sorted(items, key=lambda x: keys.get(file_of(x)) or fallback[file_of(x)])


def shard_cases(cases: Sequence[CompiledCase], shard: Shard, all_files: Iterable[str]) -> list[CompiledCase]:
    """The cases of ``shard``, in their run order.

    Args:
        cases: the selected cases, in run order.
        shard: which slice.
        all_files: every loaded file (`RunMeta.suites`): the common root is theirs,
            so a selection that leaves a folder out does not move the root.
    """
    files = [c.file for c in cases]  # by position: cases made when read are new objects at each read
    ordered = sharding_order(range(len(files)), files.__getitem__, all_files)
    mine = {i for p, i in enumerate(ordered) if p % shard.count == shard.index - 1}
    return [c for i, c in enumerate(cases) if i in mine]


def suite_version(cases: Iterable[CompiledCase]) -> str:
    """A fingerprint of the loaded cases: equal when the suites would run the same cases the same way.

    Covers each case's file (relative to the common root), name, prompt,
    settings, setup, expectation labels and declared tools (name and
    parameters). Not covered: the behaviour behind a custom predicate or a
    tool's canned answers written in Python.
    """
    tools: dict[int, tuple[Any, str]] = {}  # a suite's cases share one tuple of tools: describe it once
    settings: dict[int, tuple[Any, str]] = {}  # and most share one settings object: its repr once too
    described_cases = []  # one pass: the cases may be made as they are read (LazyCases)
    for case in cases:
        held = tools.get(id(case.tools))
        if held is None or held[0] is not case.tools:
            held = tools[id(case.tools)] = (case.tools, repr(repr([(t.name, t.parameters) for t in case.tools])))
        kept = settings.get(id(case.settings))
        if kept is None or kept[0] is not case.settings:
            kept = settings[id(case.settings)] = (case.settings, repr(case.settings))
        labels = [e.label for e in case.expectations]
        # repr, not JSON: deterministic for these values (str, numbers, JSON-shaped setup) and cheaper;
        # repr((name, prompt, settings, setup, labels, tools)) written out, with the shared parts' repr kept
        described_cases.append((case.file, f"({case.name!r}, {case.prompt!r}, {kept[1]}, {case.setup!r}, "
                                           f"{labels!r}, {held[1]})"))
    keys = file_keys(file for file, _ in described_cases)
    # repr((key, *rest)) written out: "(" + repr(key) + ", " + what follows the "(" of repr(rest)
    entries = [f"({'/'.join(keys[file])!r}, {rest[1:]}" for file, rest in described_cases]
    entries.sort()  # the order files were named in is not part of the suite
    return "sha256:" + hashlib.sha256("\n".join(entries).encode("utf-8", "surrogatepass")).hexdigest()[:16]
