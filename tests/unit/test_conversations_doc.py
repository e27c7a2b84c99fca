"""docs/conversations.md, run: its Python blocks executed, its `$ evaldsl` lines run from the repository's root
(in a copy of the example's folder) with the exit code they are said to have (``exit=N`` on the fence; 0 otherwise), and a `text` block right after
a failing command found in what it printed."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _docblocks import Block, fenced_blocks

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "conversations.md"
BLOCKS = fenced_blocks(DOC)
PYTHON = [b for b in BLOCKS if b.kind == "python"]
CONSOLE = [b for b in BLOCKS if b.kind == "console"]


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: f"conversations.md:{b.line}")
def test_python_example(block: Block) -> None:
    exec(compile(block.text, f"conversations.md:{block.line}", "exec"),  # noqa: S102 - running the page
         {"__name__": f"conversations_md_{block.line}"})


@pytest.mark.parametrize("block", CONSOLE, ids=lambda b: f"conversations.md:{b.line}")
def test_console_example(block: Block, tmp_path: Path) -> None:
    line = block.text.strip().splitlines()[0]
    words = shlex.split(line.removeprefix("$ "))
    assert words[0] == "evaldsl"
    shutil.copytree(ROOT / "suites" / "examples" / "shop", tmp_path / "suites" / "examples" / "shop")
    proc = subprocess.run([sys.executable, "-m", "evaldsl", *words[1:]], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "HOME": str(tmp_path)})
    expected = next((int(w[5:]) for w in block.words if w.startswith("exit=")), 0)
    assert proc.returncode == expected, proc.stdout + proc.stderr
    after = [b for b in BLOCKS if b.line > block.line]
    if expected and after and after[0].kind == "text":
        assert after[0].text.strip() in proc.stderr


def test_the_page_has_examples() -> None:
    assert len(PYTHON) >= 2 and len(CONSOLE) >= 2
