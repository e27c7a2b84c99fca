"""`importers._use`: the ``use`` line `evaldsl import --use` adds and the tools nothing declares (the
CLI only prints what these say; tests/e2e/test_import_semantics.py runs the command)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaldsl import EvlError
from evaldsl.importers._use import undeclared_tools, with_use

SUITE = '''suite "imported"

case "lists"
  prompt "list the files"
  expect called list_files
  expect called read_file
'''


def test_the_use_line_goes_right_after_the_suite_line() -> None:
    assert with_use(SUITE, 'lib "x".evl').split("\n")[:3] == ['suite "imported"', 'use "lib \\"x\\".evl"', ""]


def test_the_tools_no_library_declares_are_named(tmp_path: Path) -> None:
    (tmp_path / "tools.evl").write_text('tool list_files "the files"\ntool read_file "a file"\n', encoding="utf-8")
    (tmp_path / "some.evl").write_text('tool list_files "the files"\n', encoding="utf-8")
    where = str(tmp_path / "out.evl")
    assert undeclared_tools(SUITE, where, uses=False) == ["list_files", "read_file"]
    assert undeclared_tools(with_use(SUITE, "tools.evl"), where, uses=True) == []
    for library in ("some.evl", "missing.evl"):  # a library that declares some (E218 for the rest), or none
        with pytest.raises(EvlError):
            undeclared_tools(with_use(SUITE, library), where, uses=True)
