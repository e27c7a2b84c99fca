"""`CaseKeys`: the record's case keys in record order, each found by its key, in a few arrays."""

from __future__ import annotations

from array import array

Key = tuple[str, str]


class CaseKeys:
    """Case keys in record order, each found by its key: a few arrays, no object a case.

    A key's file is one of a few (its index kept), its name is UTF-8 in one
    buffer (lone surrogates passed through), and an open-addressing table
    of positions over the keys' hashes finds a key's position. About 40
    bytes a case, where a list and a dict of tuples took about 250.
    """

    __slots__ = ("_files", "_file_ids", "_file_of", "_names", "_ends", "_hashes", "_table", "_mask")

    def __init__(self) -> None:
        self._files: list[str] = []
        self._file_ids: dict[str, int] = {}
        self._file_of = array("l")
        self._names = bytearray()
        self._ends = array("q")
        self._hashes = array("q")
        self._table = array("q", bytes(8 * 64))  # position + 1 of the key in each slot; 0: free
        self._mask = 63

    def __len__(self) -> int:
        return len(self._ends)

    def key(self, position: int) -> Key:
        start = self._ends[position - 1] if position else 0
        name = self._names[start:self._ends[position]].decode("utf-8", "surrogatepass")
        return self._files[self._file_of[position]], name

    def holds(self, position: int, key: Key) -> bool:
        """True when ``key`` is the key at ``position`` (cheaper than `find` when the place is a good guess)."""
        if position >= len(self._ends):
            return False
        file_id = self._file_ids.get(key[0])
        if file_id is None or self._file_of[position] != file_id:
            return False
        start = self._ends[position - 1] if position else 0
        return self._names[start:self._ends[position]] == key[1].encode("utf-8", "surrogatepass")

    def find(self, key: Key) -> int:
        """The key's position, or -1."""
        file_id = self._file_ids.get(key[0])
        if file_id is None:
            return -1
        return self._slot(file_id, key[1].encode("utf-8", "surrogatepass"), hash((file_id, key[1])))[1]

    def place(self, key: Key) -> int:
        """The key's position, the key added after the others when it is new."""
        file_id = self._file_ids.get(key[0])
        if file_id is None:
            file_id = self._file_ids[key[0]] = len(self._files)
            self._files.append(key[0])
        name = key[1].encode("utf-8", "surrogatepass")
        hashed = hash((file_id, key[1]))
        slot, position = self._slot(file_id, name, hashed)
        if position >= 0:
            return position
        position = len(self._ends)
        self._file_of.append(file_id)
        self._names += name
        self._ends.append(len(self._names))
        self._hashes.append(hashed)
        self._table[slot] = position + 1
        if 2 * len(self._ends) > self._mask:
            self._grow()
        return position

    def _slot(self, file_id: int, name: bytes, hashed: int) -> tuple[int, int]:
        """(the slot of the key, or of the free slot where it would go; its position, or -1)."""
        table, mask, ends = self._table, self._mask, self._ends
        slot = hashed & mask
        while True:
            held = table[slot]
            if not held:
                return slot, -1
            p = held - 1
            if self._hashes[p] == hashed and self._file_of[p] == file_id and \
                    self._names[(ends[p - 1] if p else 0):ends[p]] == name:
                return slot, p
            slot = (slot + 1) & mask

    def _grow(self) -> None:
        self._mask = 2 * self._mask + 1
        table = self._table = array("q", bytes(8 * (self._mask + 1)))
        mask = self._mask
        for p, hashed in enumerate(self._hashes):
            slot = hashed & mask
            while table[slot]:
                slot = (slot + 1) & mask
            table[slot] = p + 1
