"""Golden files for the formatter (DESIGN rule 9: the formatter as an identity).

- `format/*.evl` are canonical: formatting one must give it back byte for
  byte. New syntax means a new line in one of these files.
- `format/messy/x.evl` must format to `format/messy/x.expected.evl`, which
  is itself canonical and means the same as `x.evl`.

`pytest --update-goldens` rewrites the files from the formatter's current
output, so a layout change shows up as a reviewed diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evaldsl.syntax._format import format_text
from evaldsl.syntax._parser import parse

HERE = Path(__file__).parent / "format"
CANONICAL = sorted(HERE.glob("*.evl"))
MESSY = sorted(p for p in (HERE / "messy").glob("*.evl") if not p.name.endswith(".expected.evl"))


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")  # no newline translation: bytes are compared


def comment_texts(text: str) -> list[str]:
    return sorted(c.text.rstrip() for c in parse(text).comments)


def test_there_are_goldens() -> None:
    assert len(CANONICAL) >= 5 and len(MESSY) >= 5


@pytest.mark.parametrize("path", CANONICAL, ids=lambda p: p.name)
def test_canonical_file_formats_to_itself(path: Path, update_goldens: bool) -> None:
    text = read(path)
    out = format_text(text, path.name)
    if update_goldens and out != text:
        path.write_bytes(out.encode("utf-8"))
        return
    assert out == text


@pytest.mark.parametrize("path", MESSY, ids=lambda p: p.name)
def test_messy_file_formats_to_its_expected_file(path: Path, update_goldens: bool) -> None:
    text = read(path)
    out = format_text(text, path.name)
    expected_path = path.with_name(path.stem + ".expected.evl")
    if update_goldens:
        expected_path.write_bytes(out.encode("utf-8"))
    expected = read(expected_path)
    assert out == expected
    assert format_text(expected) == expected
    assert parse(expected) == parse(text)
    assert comment_texts(expected) == comment_texts(text)
