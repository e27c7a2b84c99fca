"""Compile-time bounds, data files that are not files, and `--root` (issues 10 and 11)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaldsl import load
from evaldsl.compile._compiler import compile_suite
from evaldsl.compile._loading import compile_file
from evaldsl.syntax._diagnostics import EvlError


def errors(source: str, **kwargs: object) -> list[str]:
    try:
        compile_suite(source, "b.evl", **kwargs)  # type: ignore[arg-type]
    except EvlError as exc:
        return [f"{d.span.line}:{d.span.column} {d.code} {d.message}" for d in exc.diagnostics if d.span]
    return []


CASE = 'case "a"\n  prompt "p"\n  {}\n  expect final text is "x"\n'


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("repeat 1000000000000", "3:10 E211 repeat must be at most 10,000, not 1,000,000,000,000"),
        ("max turns 1001", "3:13 E211 max turns must be at most 1,000, not 1,001"),
        ("timeout 25h", "3:11 E211 a timeout must be at most 24h, not 25h"),
        ("timeout 86401s", "3:11 E211 a timeout must be at most 24h, not 86401s"),
    ],
)
def test_settings_are_bounded_with_a_positioned_error(setting: str, message: str) -> None:
    assert errors(CASE.format(setting)) == [message]


@pytest.mark.parametrize("setting", ["repeat 10000", "max turns 1000", "timeout 24h", "timeout 1440m"])
def test_the_bounds_themselves_are_allowed(setting: str) -> None:
    assert errors(CASE.format(setting)) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_examples_from_a_fifo_is_refused_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "rows.csv")
    suite = tmp_path / "s.evl"
    suite.write_text('case "a $x"\n  prompt "p $x"\n  examples from "rows.csv"\n  expect final text is "x"\n')
    # In a child process, so that a regression hangs (and is killed by the timeout) instead of the suite.
    code = f"from evaldsl.compile._loading import compile_file\ncompile_file({str(suite)!r})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20)
    assert "E215" in done.stderr and "rows.csv is not a regular file" in done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("command", ["check", "fmt --check", "compile", "run --agent evaldsl.demo:agent"])
def test_a_suite_or_use_file_that_is_a_fifo_is_refused_not_read(tmp_path: Path, command: str) -> None:
    os.mkfifo(tmp_path / "fifo.evl")
    (tmp_path / "uses.evl").write_text('use "fifo.evl"\ncase "a"\n  prompt "p"\n  expect no error\n')
    for name, expected in (("fifo.evl", "cannot read fifo.evl: not a regular file"),
                           ("uses.evl", "cannot use fifo.evl: not a regular file")):
        if command.startswith("fmt") and name == "uses.evl":
            continue  # fmt reads no `use` file
        # A child process: a regression hangs there (and is killed by the timeout), not the test suite.
        done = subprocess.run([sys.executable, "-m", "evaldsl", *command.split(), name], cwd=tmp_path,
                              capture_output=True, text=True, timeout=30)
        shown = done.stdout + done.stderr
        assert done.returncode != 0 and expected in shown and "Traceback" not in shown, (command, name, shown)


def test_examples_from_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "rows.csv").mkdir()
    suite = tmp_path / "s.evl"
    suite.write_text('case "a $x"\n  prompt "p $x"\n  examples from "rows.csv"\n  expect final text is "x"\n')
    with pytest.raises(EvlError, match="is not a regular file"):
        compile_file(suite)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "outside.evl").write_text("tool secret\n")
    (tmp_path / "rows.csv").write_text("x\n1\n")
    inner = tmp_path / "suites"
    inner.mkdir()
    (inner / "lib.evl").write_text("tool search\n")
    (inner / "s.evl").write_text(
        'use "lib.evl"\nuse "../outside.evl"\n'
        'case "a $x"\n  prompt "p $x"\n  examples from "../rows.csv"\n  expect final text is "x"\n'
    )
    return inner


def test_without_root_a_suite_may_read_outside_its_folder(tmp_path: Path) -> None:
    inner = _project(tmp_path)
    suite = compile_file(inner / "s.evl")
    assert {t.name for t in suite.tools} == {"search", "secret"}


def test_root_refuses_use_and_examples_outside_it(tmp_path: Path) -> None:
    inner = _project(tmp_path)
    with pytest.raises(EvlError) as caught:
        load(inner, root=inner)
    found = [(d.span.line, d.code, d.message) for d in caught.value.diagnostics if d.span]
    assert found == [
        (2, "E230", f"`use` file {tmp_path / 'outside.evl'} is outside the root {inner}"),
        (5, "E230", f"examples file {tmp_path / 'rows.csv'} is outside the root {inner}"),
    ]


def test_root_follows_symlinks(tmp_path: Path) -> None:
    inner = _project(tmp_path)
    (inner / "link.evl").symlink_to(tmp_path / "outside.evl")
    (inner / "s.evl").write_text('use "link.evl"\ncase "a"\n  prompt "p"\n  expect final text is "x"\n')
    with pytest.raises(EvlError, match="E230|outside the root"):
        compile_file(inner / "s.evl", root=inner)


def test_cli_root_option_on_check_compile_and_run(tmp_path: Path) -> None:
    inner = _project(tmp_path)
    for args in (["check"], ["compile"], ["run", "--agent", "evaldsl.demo:agent"]):
        path = str(inner / "s.evl")
        done = subprocess.run([sys.executable, "-m", "evaldsl", *args, path, "--root", str(inner)],
                              capture_output=True, text=True, timeout=60)
        shown = done.stdout + done.stderr
        assert done.returncode != 0 and "E230" in shown and "outside the root" in shown, (args, shown)
        assert "Traceback" not in shown
