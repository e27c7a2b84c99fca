"""`evaldsl fmt` as a script runs it: exit codes, the one reader, stdin, the line width."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evaldsl import compile
from evaldsl.cli import main

CASE = 'case "c"\n  prompt "p"\n  expect no error\n'


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_check_exit_codes_tell_reformat_from_does_not_parse(tmp_path: Path) -> None:
    tidy = write(tmp_path, "tidy.evl", CASE)
    messy = write(tmp_path, "messy.evl", CASE.replace("  prompt", "prompt"))
    broken = write(tmp_path, "broken.evl", 'case "c"\n  expect nonsense here\n')
    assert main(["fmt", "--check", str(tidy)]) == 0
    assert main(["fmt", "--check", str(messy)]) == 1
    assert main(["fmt", "--check", str(broken)]) == 4
    assert main(["fmt", "--check", str(tidy), str(messy), str(broken)]) == 4  # the worst wins
    assert main(["fmt", "--diff", str(messy)]) == 1
    assert main(["fmt", str(broken)]) == 4
    assert broken.read_bytes() == b'case "c"\n  expect nonsense here\n'


def test_a_missing_file_is_the_same_positioned_e002_as_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "nope.evl")
    assert main(["check", "--error-format", "short", missing]) == 1
    from_check = [ln for ln in capsys.readouterr().out.splitlines() if "E002" in ln]
    assert main(["fmt", "--error-format", "short", missing]) == 4
    from_fmt = [ln for ln in capsys.readouterr().err.splitlines() if "E002" in ln]
    assert from_fmt == from_check and len(from_fmt) == 1
    assert from_fmt[0].startswith(f"{missing}:") and "[Errno" not in from_fmt[0]


def test_no_evl_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["fmt", str(tmp_path / "empty")]) == 4


def test_a_lone_carriage_return_in_a_comment_stays_a_comment(tmp_path: Path) -> None:
    text = "# note\rtimeout 5s\n" + CASE
    path = write(tmp_path, "cr.evl", text)
    before = compile(text).cases[0].settings.timeout_s
    assert main(["fmt", str(path)]) in (0,)
    after_text = path.read_bytes().decode("utf-8")
    assert compile(after_text).cases[0].settings.timeout_s == before
    assert "timeout" not in after_text.split("\n")[1]  # no live `timeout` line appeared


def test_a_prompt_holding_a_lone_carriage_return_formats(tmp_path: Path) -> None:
    text = 'case "c"\n  prompt "a\rb"\n  expect no error\n'
    path = write(tmp_path, "p.evl", text)
    assert main(["check", str(path)]) == 0
    assert main(["fmt", str(path)]) == 0
    out = path.read_bytes().decode("utf-8")
    assert compile(out).cases[0].prompt == compile(text).cases[0].prompt == "a\rb"


def test_stdin_is_read_as_bytes_like_a_file() -> None:
    text = "# note\rtimeout 5s\n" + CASE.replace("  prompt", "prompt")
    done = subprocess.run([sys.executable, "-m", "evaldsl", "fmt", "-"], input=text.encode(),
                          capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode("utf-8")
    assert out.startswith("# note\rtimeout 5s\n") and '\n  prompt "p"\n' in out
    bad = subprocess.run([sys.executable, "-m", "evaldsl", "fmt", "-"], input=b"case \xff\n",
                         capture_output=True, check=False)
    assert bad.returncode == 4 and b"E001" in bad.stderr


def test_line_width_option(tmp_path: Path) -> None:
    path = write(tmp_path, "w.evl", 'case "c"\n  expect called t with <a: 1, b: 2>\n')
    assert main(["fmt", "--check", str(path)]) == 0
    assert main(["fmt", "--line-width", "30", str(path)]) == 0
    assert path.read_text() == 'case "c"\n  expect called t with <\n    a: 1,\n    b: 2,\n  >\n'
    assert main(["fmt", "--line-width", "5", str(path)]) == 4  # a usage error


def test_diff_shows_lines_as_the_parser_sees_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "d.evl", "# a\rb\n" + CASE.replace("  prompt", "prompt"))
    assert main(["fmt", "--diff", str(path)]) == 1
    diff = capsys.readouterr().out.split("\n")
    assert "-prompt \"p\"" in diff and "+  prompt \"p\"" in diff
    assert " # a\rb" in diff  # one line, unchanged: context
