"""docs/scale.md: every `evaldsl` command it shows parses, and its Python names exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

import evaldsl
from evaldsl.cli import build_parser

PAGE = Path(__file__).resolve().parents[2] / "docs" / "scale.md"
TEXT = PAGE.read_text(encoding="utf-8")
LINE = re.compile(r"^\s*(?:- run: )?(?:\w+=\S+ )?(evaldsl (?:run|merge) [^\n#]+)", re.MULTILINE)
COMMANDS = [m.group(1).strip() for m in LINE.finditer(TEXT)]


def test_the_page_shows_the_commands() -> None:
    assert len(COMMANDS) >= 5
    assert any("--shard ${{ matrix.shard }}/4" in c for c in COMMANDS)
    assert any(c.startswith("evaldsl merge") for c in COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_on_the_page_parses(command: str) -> None:
    argv = shlex.split(command.replace("${{ matrix.shard }}", "1"))[1:]
    args = build_parser().parse_args(argv)
    assert args.func is not None


def test_the_python_names_it_uses_are_exported() -> None:
    for name in ("RayExecutor", "Shard", "merge_records", "MergeError", "run_suite", "load"):
        assert name in evaldsl.__all__ and name in TEXT
