"""What `evaldsl run` and `check` say about paths that name no .evl file: one line each, exit 4."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaldsl.cli import main

GOOD = 'case "adds"\n  prompt "2+2"\n  expect final number is 4\n'


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "weather.evl").write_text(GOOD, encoding="utf-8")
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "calc.evl").write_text(GOOD, encoding="utf-8")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a suite", encoding="utf-8")
    (tmp_path / "paths_agent.py").write_text("def agent(prompt):\n    return {'final_text': '4'}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # `run` makes the current directory importable
    yield tmp_path
    sys.modules.pop("paths_agent", None)


def test_run_a_missing_file_says_so_with_near_names(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "wether.evl", "--agent", "paths_agent:agent"]) == 4
    err = capsys.readouterr().err
    assert err == "evaldsl: no such file or directory: wether.evl (did you mean weather.evl?)\n"


def test_run_names_each_bad_path_before_importing_the_agent(work: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "suites/calk.evl", "suits/", "empty/", "nowhere/x.evl", "weather.evl",
                 "--agent", "not_a_module:agent"])
    assert code == 4
    assert capsys.readouterr().err.splitlines() == [
        "evaldsl: no such file or directory: suites/calk.evl (did you mean suites/calc.evl?)",
        "evaldsl: no such file or directory: suits/ (did you mean suites?)",
        "evaldsl: no .evl files under empty/",
        "evaldsl: no such file or directory: nowhere/x.evl",
    ]


def test_run_and_check_say_the_same_of_an_empty_directory(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "empty/", "--agent", "paths_agent:agent"]) == 4
    run_err = capsys.readouterr().err
    assert main(["check", "empty/"]) == 4
    assert capsys.readouterr().err == run_err == "evaldsl: no .evl files under empty/\n"


def test_check_refuses_an_empty_directory_beside_good_ones(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "suites", "empty"]) == 4
    assert capsys.readouterr().err == "evaldsl: no .evl files under empty\n"


def test_good_paths_still_run(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "weather.evl", "suites", "-q", "--agent", "paths_agent:agent"]) == 0
    assert "2 passed" in capsys.readouterr().out
