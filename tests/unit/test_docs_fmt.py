"""Every whole-file example of the docs and README, and every shipped suite, is in `fmt`'s layout.

An ``evl`` block of docs/*.md or README.md must come out of the formatter
unchanged (as `evaldsl fmt --check` would find it), so the docs show the
layout users get. The one exception is a block whose info string names
W303: it shows, on purpose, a line that `check` warns reads like a suite
line; for those, fmt must change the block, and its output must no longer
warn.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _docblocks import Block, fenced_blocks

from evaldsl import compile, format

ROOT = Path(__file__).resolve().parents[2]
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
BLOCKS = [b for doc in DOCS if doc.is_file() for b in fenced_blocks(doc) if b.kind == "evl"]
SHOWS_A_LAYOUT_FMT_FIXES = "W303"


def test_there_are_examples() -> None:
    assert len(BLOCKS) >= 20


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_example_is_in_fmt_layout(block: Block, tmp_path: Path) -> None:
    out = format(block.text, block.id)
    if SHOWS_A_LAYOUT_FMT_FIXES in block.words:
        assert out != block.text
        codes = {w.code for w in compile(out, str(tmp_path / "x.evl")).warnings}
        assert SHOWS_A_LAYOUT_FMT_FIXES not in codes
    else:
        assert out == block.text


SUITES = sorted((ROOT / "suites").rglob("*.evl"))


@pytest.mark.parametrize("path", SUITES, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_suite_is_in_fmt_layout(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")
    assert format(text, str(path)) == text
