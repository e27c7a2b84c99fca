"""A suite's cases when they are made as they are read: `LazyCases`, `SuiteCases`, and what reads them.

An `examples from` file's cases are made from its rows when read, never
kept (`LazyCases`); a suite with such cases holds them part by part
(`SuiteCases`). `case_keys` and `outlined` read any sequence of cases
without making more of them than they must.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate

from ._model_suite import CompiledCase
from ._positions import ByPosition


class _MadeWhenRead(ByPosition[CompiledCase]):
    """Cases that a sequence makes when they are read (`LazyCases`, `SuiteCases`)."""

    what = "case"


class LazyCases(_MadeWhenRead):
    """Cases made one at a time when asked for (the rows of an `examples from` file), never kept.

    ``len`` is free; ``cases[i]`` and iteration build each case anew from its
    row and the case's compiled template, so a file of 100,000 rows costs its
    rows' text, not 100,000 compiled cases. Two reads of one row give equal
    cases (not the same object): key cases by id or name, not by ``id()``.
    """

    def __init__(self, count: int, build: Callable[[int], CompiledCase],
                 keys: Sequence[tuple[str, str]] | None = None,
                 outline: Callable[[int, bool], CompiledCase] | None = None, *, one_case: bool = False) -> None:
        self._count, self._build, self._keys, self._outline = count, build, keys, outline
        self.one_case = one_case
        """Every row is made from one `case` block (the compiler's rows of an examples file): the rows share
        its shape (a conversation or not, a world or not), so its first row tells it for all."""

    def outlined(self, labels: bool = True) -> Sequence[CompiledCase]:
        """The same cases as outlines, made when read: what describes them, not what runs them (`outlined`)."""
        outline = self._outline
        if outline is None:
            return self
        return LazyCases(self._count, lambda i: outline(i, labels), self._keys, one_case=self.one_case)

    def keys(self) -> Iterator[tuple[str, str]]:
        """Each case's (file, name), in order, without making the cases when they are known."""
        if self._keys is not None:
            return iter(self._keys)
        return ((c.file, c.name) for c in self)

    def __len__(self) -> int:
        return self._count

    def _at(self, i: int) -> CompiledCase:
        return self._build(i)

    def __iter__(self) -> Iterator[CompiledCase]:
        build = self._build
        for i in range(self._count):
            yield build(i)

    def __repr__(self) -> str:
        return f"<{self._count} cases made from examples rows when asked for>"


def case_keys(cases: Iterable[CompiledCase]) -> Iterator[tuple[str, str]]:
    """Each case's (file, name), in order; for `LazyCases` and `SuiteCases`, without making them."""
    if isinstance(cases, (LazyCases, SuiteCases)):
        return cases.keys()
    return ((c.file, c.name) for c in cases)


def outlined(cases: Sequence[CompiledCase], labels: bool = True) -> Sequence[CompiledCase]:
    """The cases as far as a description of them goes, for passes that do not run them.

    Name, file, line, prompt, settings, setup and tools are the cases' own,
    and so are the expectations' labels, files and lines (none at all when
    ``labels`` is false), but an expectation made from an `examples from`
    row has no compiled check (calling it raises): such a row's outline
    costs about half of making its case. Cases held in memory are given as
    they are.
    """
    if isinstance(cases, (LazyCases, SuiteCases)):
        return cases.outlined(labels)
    return cases


class SuiteCases(_MadeWhenRead):
    """A suite's cases when some of them are `LazyCases`: the parts one after another, in order."""

    def __init__(self, parts: list[Sequence[CompiledCase]]) -> None:
        self._parts = [p for p in parts if len(p)]
        self._starts = list(accumulate((len(p) for p in self._parts), initial=0))

    def __len__(self) -> int:
        return self._starts[-1]

    def _at(self, i: int) -> CompiledCase:
        part = bisect_right(self._starts, i) - 1
        return self._parts[part][i - self._starts[part]]

    def __iter__(self) -> Iterator[CompiledCase]:
        for part in self._parts:
            yield from part

    @property
    def parts(self) -> list[Sequence[CompiledCase]]:
        """The parts, in order: cases held, or `LazyCases` (the rows of one case's examples file)."""
        return self._parts

    def keys(self) -> Iterator[tuple[str, str]]:
        """Each case's (file, name), in order (see `case_keys`)."""
        for part in self._parts:
            yield from case_keys(part)

    def outlined(self, labels: bool = True) -> Sequence[CompiledCase]:
        """The cases as outlines (see `outlined`), part by part."""
        return SuiteCases([outlined(part, labels) for part in self._parts])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (SuiteCases, tuple, list)):
            return len(self) == len(other) and all(x == y for x, y in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self)} cases, {sum(isinstance(p, LazyCases) for p in self._parts)} part(s) made when asked for>"
