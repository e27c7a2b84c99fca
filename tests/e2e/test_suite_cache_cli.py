"""`check` and `run` with the suite cache, as a user runs them in a project folder: the second
command prints what the first did, from the cache; the switches turn it off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaldsl.cli import main

SUITE = '''suite "shop"
use "tools.evl"

case "finds it"
  prompt "find shoes"
  expect called search
  expect final text contains "{{ plain }}"
'''
TOOLS = 'tool search "Search"\n  param query: string "what"\n'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "suite.evl").write_text(SUITE)
    (tmp_path / "tools.evl").write_text(TOOLS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    monkeypatch.delenv("EVALDSL_SUITE_CACHE", raising=False)
    monkeypatch.delenv("EVALDSL_SUITE_CACHE_DIR", raising=False)
    return tmp_path


def entries(folder: Path) -> list[Path]:
    return sorted((folder / "suites").glob("*.bin"))


def test_check_twice_prints_the_same_from_the_cache(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outputs = []
    for _ in range(2):
        assert main(["check", "suite.evl"]) == 0
        outputs.append(capsys.readouterr())
    assert outputs[0] == outputs[1]
    assert "warning[W304]" in outputs[0].out and "1 warning(s)" in outputs[0].err
    assert len(entries(project / ".evaldsl_cache")) == 1
    assert (project / ".evaldsl_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    (project / "tools.evl").write_text('tool lookup "Look up"\n')  # the `use` file changed: compiled again
    assert main(["check", "suite.evl"]) == 1
    assert "no declared tool is called `search`" in capsys.readouterr().out


def test_run_twice_writes_the_same_record(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = project / "shop_agent.py"
    agent.write_text("from evaldsl.artifacts import RunArtifacts, ToolCall\n"
                     "def agent(prompt):\n"
                     "    return RunArtifacts(final_text='{{ plain }}', tool_calls=[ToolCall(name='search')])\n")
    records = []
    for i in range(2):
        code = main(["run", "suite.evl", "--agent", "shop_agent:agent", "--json", f"r{i}.json", "-q",
                     "--suite-cache-dir", "cache"])
        assert code == 0
        case = json.loads((project / f"r{i}.json").read_text())["cases"][0]
        records.append((case["status"], [e["label"] for e in case["runs"][0]["expectations"]]))
    capsys.readouterr()
    assert records[0] == records[1] == ("passed", ["called search", 'final text contains "{{ plain }}"'])
    assert len(entries(project / "cache")) == 1
    assert not (project / ".evaldsl_cache").exists()


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_cache_can_be_turned_off(project: Path, how: str, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    args = ["check", "suite.evl"]
    if how == "flag":
        args.append("--no-suite-cache")
    else:
        monkeypatch.setenv("EVALDSL_SUITE_CACHE", "off")
    assert main(args) == 0
    assert not (project / ".evaldsl_cache").exists()


def test_a_damaged_entry_is_named_in_a_warning(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "suite.evl"]) == 0
    (entry,) = entries(project / ".evaldsl_cache")
    entry.write_bytes(entry.read_bytes()[:40])
    capsys.readouterr()
    assert main(["check", "suite.evl"]) == 0
    err = capsys.readouterr().err
    assert f"evaldsl: suite cache: ignoring the entry {entry.relative_to(project)}" in err
    assert "compiling" in err and "1 warning(s)" in err
