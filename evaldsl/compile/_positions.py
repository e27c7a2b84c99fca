"""`ByPosition`: a read-only sequence whose items are made from their position when read.

The compiler keeps large series (examples rows, their cases, lines of a .jsonl
file, the cases' keys) as compact buffers rather than lists of objects; each
item is made when it is asked for. This base gives them the indexing a
`Sequence` promises (negative positions, slices, `IndexError`) once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class ByPosition(Sequence[T]):
    """Subclasses give ``__len__`` (still abstract here) and ``_at``; ``what`` names an item in the `IndexError`."""

    what = "item"

    def _at(self, i: int) -> T:
        """The item at position ``i``, 0 <= i < len(self)."""
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...
    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(len(self)))]
        count = len(self)
        if i < 0:
            i += count
        if not 0 <= i < count:
            raise IndexError(f"{self.what} index out of range")
        return self._at(i)
