"""The examples of docs/running.md are run: its Python runs and its commands print what it shows.

Conventions of the page:

- a ```` ```python ```` block is executed in a fresh namespace, with a fresh
  temporary directory as the current directory (and first on ``sys.path``);
  ```` ```python no-run ```` blocks are skipped;
- a block whose info string has ``file=NAME`` (any language) is also written
  under NAME into every such directory, so later examples can load the
  suite or import the agent it shows;
- a ```` ```console ```` block whose first line is ``$ evaldsl ...`` is a
  terminal session: each ``$ evaldsl ...`` line is run (in-process) in a
  fresh directory holding the ``file=`` blocks and the dumped baseline
  (``suites/baseline``), and ``$ echo $?`` prints the last exit code. The
  lines after a command are what it printed, stdout then stderr, except the
  progress lines, which a terminal erases. Timings differ from run to run,
  so durations (``0.15ms``, ``1.00s``), timestamps in record names and the
  widths of padding and ``====`` rules are compared loosely; everything
  else must match. ```` ```console no-run ```` blocks are not run;
- a ```` ```json record ```` block must be a valid run record.

Every test is named by the line of its block (``running.md:120``).
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _docblocks import Block, fenced_blocks

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "running.md"
_PROGRESS = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+\S+::")
_DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:ms|s)\b")
_STAMP = re.compile(r"\d{8}-\d{6}")


BLOCKS = fenced_blocks(DOC) if DOC.is_file() else []
README = fenced_blocks(ROOT / "README.md")
PYTHON = [b for b in BLOCKS + README if b.kind == "python" and "no-run" not in b.words]
CONSOLE = [
    b for b in BLOCKS
    if b.kind == "console" and "no-run" not in b.words and b.text.startswith("$ evaldsl ")
]
RECORDS = [b for b in BLOCKS if b.kind == "json" and "record" in b.words]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh current directory holding the page's files; modules imported from it are forgotten."""
    names = [b.file for b in BLOCKS if b.file]
    assert len(names) == len(set(names)), "two blocks with the same file= name"
    for block in BLOCKS:
        if block.file:
            target = tmp_path / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        module_file = getattr(sys.modules[name], "__file__", None) or ""
        if module_file.startswith(str(tmp_path)):
            del sys.modules[name]


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: b.id)
def test_python_example(block: Block, workdir: Path) -> None:
    code = compile(block.text, f"{block.id}", "exec")
    exec(code, {"__name__": f"running_md_{block.line}"})  # noqa: S102 - running the page is the point


@pytest.mark.parametrize("block", CONSOLE, ids=lambda b: b.id)
def test_console_session(
    block: Block, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evaldsl._baseline import dump_baseline
    from evaldsl.cli import main

    dump_baseline(workdir / "suites" / "baseline")
    last_code = 0
    for command, shown in _session(block.text):
        if command == "echo $?":
            actual = [str(last_code)]
        else:
            words = shlex.split(command)
            assert words[0] == "evaldsl", f"{block.id}: only evaldsl commands run here: {command}"
            capsys.readouterr()
            last_code = main(words[1:])
            out = capsys.readouterr()
            progress_dropped = [ln for ln in out.err.splitlines() if not _PROGRESS.match(ln)]
            actual = out.out.splitlines() + progress_dropped
        assert _loose(actual) == _loose(shown), f"{block.id}: `{command}` printed:\n" + "\n".join(
            actual
        )


@pytest.mark.parametrize("block", RECORDS, ids=lambda b: b.id)
def test_record_example(block: Block) -> None:
    from evaldsl.run._record import EvalReport

    report = EvalReport.model_validate_json(block.text)
    assert report.schema_version == 3


def test_the_page_has_examples_of_every_kind() -> None:
    assert len(PYTHON) >= 10
    assert len(CONSOLE) >= 5
    assert RECORDS
    assert any("no-run" in b.words for b in BLOCKS if b.kind == "python")


def test_loose_comparison_still_tells_outputs_apart() -> None:
    assert _loose(["latency mean 0.15ms  p50 1.00s"]) == _loose(["latency mean 12.5s p50 0.01ms"])
    assert _loose(["=== 18 passed in 0.01s ==="]) == _loose(["== 18 passed in 10.20s ===="])
    assert _loose(["18 passed"]) != _loose(["17 passed"])
    assert _loose(["runs 9"]) != _loose(["runs 8"])


def _session(text: str) -> list[tuple[str, list[str]]]:
    """The ``$`` commands of a console block, each with the lines shown after it."""
    steps: list[tuple[str, list[str]]] = []
    for line in text.rstrip("\n").splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def _loose(lines: list[str]) -> list[str]:
    """Lines with timings, record-name timestamps, padding and rule widths made comparable."""
    out = []
    for line in lines:
        line = _DURATION.sub("<t>", line)
        line = _STAMP.sub("<stamp>", line)
        line = re.sub(r"=+", "=", line)
        out.append(" ".join(line.split()))
    while out and not out[-1]:
        out.pop()
    return out

