"""Fenced blocks of Markdown docs, for the tests that run the docs' examples.

Shared by test_docs_examples.py (docs/language.md, README.md) and
test_running_doc.py (docs/running.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<info>[^`]*)$")


@dataclass(frozen=True)
class Block:
    """One fenced block (or inline example) of a doc."""

    doc: Path
    line: int
    kind: str
    words: tuple[str, ...]
    text: str

    column: int = 0
    """For an inline example, its column (a line may hold several)."""

    @property
    def id(self) -> str:
        where = f"{self.doc.name}:{self.line}"
        return f"{where}:{self.column}" if self.column else where

    @property
    def file(self) -> str | None:
        return next((w[5:] for w in self.words if w.startswith("file=")), None)


def fenced_blocks(doc: Path) -> list[Block]:
    """Every fenced block of a Markdown file, with the line of its opening fence."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m["fence"], len(m["indent"])
        words = tuple(m["info"].split())
        body, j = [], i + 1
        while j < len(lines) and not (
            lines[j].strip().startswith(fence) and set(lines[j].strip()) == {"`"}
        ):
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        assert j < len(lines), f"{doc.name}:{i + 1}: fence never closed"
        kind = words[0] if words else ""
        blocks.append(Block(doc, i + 1, kind, words[1:], "\n".join(body) + "\n"))
        i = j + 1
    return blocks
