"""docs/models.md is true: its Python runs, its .evl compiles, its tables match the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _docblocks import Block, fenced_blocks

import evaldsl
from evaldsl.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "models.md"
BLOCKS = fenced_blocks(DOC)
PYTHON = [b for b in BLOCKS if b.kind == "python" and "no-run" not in b.words]
EVL = [b for b in BLOCKS if b.kind == "evl"]


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: b.id)
def test_python_examples_run(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(block.text, block.id, "exec"), {"__name__": "__doc_example__"})


@pytest.mark.parametrize("block", EVL, ids=lambda b: b.id)
def test_evl_examples_compile_without_warnings(block: Block) -> None:
    suite = evaldsl.compile(block.text, block.file or "<doc>")
    assert suite.cases and not suite.warnings


def _table_after(heading: str) -> list[str]:
    """The first cell (inside backticks) of each row of the first table after ``heading``."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(heading):]
    table = section[section.index("\n|"):].split("\n\n", 1)[0]
    return re.findall(r"^\| `([^`]+)`", table, flags=re.M)


def test_the_option_table_lists_every_model_option() -> None:
    documented = {row.split()[0] for row in _table_after("## 3. Options")}
    documented |= {"--max-tokens", "--seed"}  # written on one row with --temperature
    run = build_parser()._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    group = next(g for g in run._action_groups if g.title == "model runs")
    options = {o for a in group._group_actions for o in a.option_strings} | {"--model"}
    assert documented == options


def test_the_template_table_lists_what_the_template_is_given() -> None:
    from evaldsl.models._judge import load_template

    documented = set(_table_after("### 6.2 The judge's template"))
    seen: dict[str, object] = {}

    class Spy:
        def render(self, **kwargs: object) -> str:
            seen.update(kwargs)
            return ""

    judge = evaldsl.LLMJudge.__new__(evaldsl.LLMJudge)
    judge.template = Spy()
    judge.render(rubric="r", prompt="p", artifacts=evaldsl.RunArtifacts())
    assert documented == set(seen)
    assert load_template() is not None
