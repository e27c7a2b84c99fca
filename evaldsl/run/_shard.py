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
import heapq
import operator
import re
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any, TypeVar

from ..compile._described import Describer as _Describer
from ..compile._described import FileLines, file_keys, hashed, kept, prefix_of

if TYPE_CHECKING:
    from ..compile._model import CompiledCase, CompiledSuite

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


def sharding_order(items: Sequence[T], file_of: Any, all_files: Iterable[str]) -> list[T]:
    """``items`` ordered by their file's relative path, stable inside a file."""
    keys = file_keys(all_files)
    fallback = file_keys(file_of(x) for x in items)  # a file outside all_files (should not happen)
    return sorted(items, key=lambda x: keys.get(file_of(x)) or fallback[file_of(x)])


def shard_cases(cases: Sequence[CompiledCase], shard: Shard, all_files: Iterable[str]) -> Sequence[CompiledCase]:
    """The cases of ``shard``, in their run order (made when read, when ``cases`` are: `picked`).

    Args:
        cases: the selected cases, in run order.
        shard: which slice.
        all_files: every loaded file (`RunMeta.suites`): the common root is theirs,
            so a selection that leaves a folder out does not move the root.
    """
    from ..compile._model import case_keys
    from ._select import picked

    # by position: cases made when read are new objects at each read; their files known without making them
    files = [file for file, _ in case_keys(cases)]
    ordered = sharding_order(range(len(files)), files.__getitem__, all_files)
    mine = sorted(i for p, i in enumerate(ordered) if p % shard.count == shard.index - 1)
    return picked(cases, mine)  # type: ignore[return-value]


def suite_version(cases: Iterable[CompiledCase], suites: Sequence[CompiledSuite] | None = None) -> str:
    """A fingerprint of the loaded cases: equal when the suites would run the same cases the same way.

    Covers each case's file (relative to the common root), name, prompt,
    settings, setup, expectation labels and declared tools (name and
    parameters). Not covered: the behaviour behind a custom predicate or a
    tool's canned answers written in Python.

    The fingerprint is the SHA-256 of every case's description (a line),
    sorted. The cases are read once, as outlines (`outlined`: an examples
    row's expectations are not compiled for it), and the lines are sorted
    in memory a batch at a time (`SORT_BATCH`), then merged. Sorted batches
    are kept as they are while they hold at most `RAW_BYTES` in all (a suite
    of 10,000 cases is never compressed: compressing and inflating its lines
    cost more than describing them); past that, every batch is kept
    compressed, so a run of 100,000 examples rows holds a few MB here, not
    every line.

    ``suites``: the suites ``cases`` were flattened from, if known. When ``cases`` are exactly their
    cases, in order, and each suite keeps its lines (`compile._described.describe`: made when it was
    compiled for the suite cache, and stored with it), no case is described here.
    """
    from ..compile._model import outlined

    if suites is not None:
        kept = _kept_lines(cases, suites)
        if kept is not None:
            return _hashed(kept)
    describe = _Describer()
    stored = _Batches()
    batch: dict[str, list[bytes]] = {}  # file -> the lines of the batch being made
    count = 0
    for case in outlined(cases) if isinstance(cases, Sequence) else cases:
        batch.setdefault(case.file, []).append(describe(case))
        count += 1
        if count == SORT_BATCH:
            stored.store(batch)
            count = 0
    stored.store(batch)
    batches = stored.by_file
    prefixes = _by_prefix(batches)
    if not stored.compressing:  # every line in memory already: each file's batches merged and joined in C
        blocks = []
        for prefix in sorted(prefixes):
            lines = list(chain.from_iterable(c for file in prefixes[prefix] for c in batches[file]))
            lines.sort()  # (sorted runs: a merge's work, not a sort's)
            blocks.append((prefix, b"\n".join(lines)))
        return hashed(blocks)
    digest = hashlib.sha256()
    pending = bytearray()  # the lines, "\n" between them, hashed a block at a time
    first = True
    for prefix in sorted(prefixes):
        for rest in heapq.merge(*(_lines(c) for file in prefixes[prefix] for c in batches[file])):
            if not first:
                pending += b"\n"
            first = False
            pending += prefix
            pending += rest
            if len(pending) > 1 << 20:
                digest.update(pending)
                pending.clear()
    digest.update(pending)
    return "sha256:" + digest.hexdigest()[:16]


def _kept_lines(cases: Iterable[CompiledCase], suites: Sequence[CompiledSuite]) -> list[FileLines] | None:
    """Each suite's kept lines, when ``cases`` are the suites' cases one after another (the same objects);
    else None (a case left out or repeated, cases made when read, a suite that keeps no lines: compiled
    without the suite cache)."""
    if type(cases) is not list or len(cases) != sum(len(s.cases) for s in suites):
        return None
    out = []
    start = 0
    for suite in suites:
        held = suite.cases
        if type(held) is not tuple or not all(map(operator.is_, cases[start:start + len(held)], held)):
            return None
        start += len(held)
        lines = kept(suite)
        if lines is None:
            return None
        out.append(lines)
    return out


def _hashed(kept: list[FileLines]) -> str:
    """The fingerprint of the files' kept lines: what `suite_version` hashes of the same cases, from each
    file's sorted block (`compile._described.hashed`); a file loaded alone has its fingerprint kept too."""
    blocks: dict[str, list[tuple[bytes, str]]] = {}
    for lines in kept:
        for file, (_, packed, alone) in lines.items():
            blocks.setdefault(file, []).append((packed, alone))
    if len(blocks) == 1:
        (held,) = blocks.values()
        if len(held) == 1:
            return held[0][1]  # its fingerprint as the only file loaded (`describe_files`)
    prefixes = _by_prefix(blocks)
    merged = []
    for prefix in sorted(prefixes):
        parts = [zlib.decompress(b) for file in prefixes[prefix] for b, _ in blocks[file]]
        if len(parts) > 1:  # one key reached by two paths, or one file in two suites: its lines merged
            parts = [b"\n".join(sorted(chain.from_iterable(b.split(b"\n") for b in parts)))]
        merged.append((prefix, parts[0]))
    return hashed(merged)


def _by_prefix(files: Iterable[str]) -> dict[bytes, list[str]]:
    """The files under the prefix of each file key (`file_keys`: two paths may reach one key).

    A line hashed is "(" + repr(file key) + ", " + the rest of its description; no such prefix begins
    another (a str's repr ends at its first unescaped quote), so sorting whole lines is sorting by prefix,
    then by the rest: each prefix's lines, merged from its files, with the prefix put in front."""
    keys = file_keys(files)
    prefixes: dict[bytes, list[str]] = {}
    for file in keys:
        prefixes.setdefault(prefix_of(keys[file]), []).append(file)
    return prefixes


SORT_BATCH = 8192
"""Descriptions sorted in memory at once by `suite_version` (each sorted batch is then kept compressed)."""


RAW_BYTES = 8 << 20
"""The sorted batches `suite_version` keeps as they are, in bytes of lines; past it, all are compressed."""


class _Batches:
    """Each file's sorted batches of lines: lists of lines while they hold at most `RAW_BYTES`
    in all, then every one compressed (`_lines` reads either)."""

    def __init__(self) -> None:
        self.by_file: dict[str, list[list[bytes] | bytes]] = {}
        self._raw = 0  # bytes of lines held in lists
        self.compressing = False  # past `RAW_BYTES`: every batch is kept compressed

    def store(self, batch: dict[str, list[bytes]]) -> None:
        """Sort each file's lines of ``batch`` (as bytes: UTF-8 keeps the order of code points) and keep
        them; ``batch`` is emptied."""
        for file, lines in batch.items():
            lines.sort()
            held = self.by_file.setdefault(file, [])
            if self.compressing:
                held.append(_compressed(lines))
                continue
            held.append(lines)
            self._raw += sum(map(len, lines))
        batch.clear()
        if not self.compressing and self._raw > RAW_BYTES:
            for held in self.by_file.values():
                held[:] = [c if isinstance(c, bytes) else _compressed(c) for c in held]
            self.compressing = True


def _compressed(lines: list[bytes]) -> bytes:
    return zlib.compress(b"\n".join(lines), 1)


def _lines(stored: list[bytes] | bytes) -> Iterator[bytes]:
    """The lines of a stored batch, in order (a compressed one decompressed a piece at a time)."""
    if isinstance(stored, list):
        yield from stored
        return
    inflate = zlib.decompressobj()
    tail = b""
    for start in range(0, len(stored), 1 << 16):
        pieces = (tail + inflate.decompress(stored[start:start + (1 << 16)])).split(b"\n")
        tail = pieces.pop()
        yield from pieces
    yield from (tail + inflate.flush()).split(b"\n")
