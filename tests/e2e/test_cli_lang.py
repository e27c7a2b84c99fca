"""`evaldsl check`, `fmt`, `compile`, `schema` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaldsl.cli import main

GOOD = 'case "adds"\n  prompt "2+2"\n  expect called calculator with <op: add>\n'
MESSY = 'case   "adds"\nprompt "2+2"\n    expect called calculator with {"op": add}   # keep me\n'
BAD = 'case "a"\n  prompt "p"\n  expect caled search\n'


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_check_clean_file_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "good.evl", GOOD)
    assert main(["check", str(path)]) == 0
    assert "checked 1 file: 0 error(s), 0 warning(s)" in capsys.readouterr().err


def test_check_reports_every_error_in_every_file_framed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "a/bad.evl", BAD)
    write(tmp_path, "b/worse.evl", 'case "a"\n  promt "p"\n  expect final number is\n')
    write(tmp_path, "b/good.evl", GOOD)
    assert main(["check", str(tmp_path)]) == 1  # directories are searched recursively
    out = capsys.readouterr()
    assert "error[E101]: unknown predicate `caled`" in out.out
    assert "= help: did you mean `called`?" in out.out
    assert out.out.count("error[E100]") == 2  # both errors of worse.evl
    assert "3 |   expect caled search\n  |          ^^^^^ not a predicate of the language" in out.out
    assert "checked 3 files: 3 error(s)" in out.err


def test_check_short_format_is_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "bad.evl", BAD)
    assert main(["check", "--error-format", "short", str(path)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == [f"{path}:3:10: error[E101]: unknown predicate `caled`: not a predicate of the language"
                     " (did you mean `called`?)"]


def test_warnings_fail_only_with_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "w.evl", 'case "a"\n  prompt "p {{x}}"\n  expect no error\n')
    assert main(["check", str(path)]) == 0
    assert "warning[W304]" in capsys.readouterr().out
    assert main(["check", "--strict", str(path)]) == 1


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\xff", "E001"),
        ("", None),
        ('case "a"\r\n  prompt "p"\r\n  expect no error\r\n', None),
        ('\ufeffcase "a"\n\tprompt "p"\n\texpect no error\n', None),
        ('case "a"\n  prompt "p"\n  expect called t with ' + "<a: " * 1000 + "1" + ">" * 1000 + "\n", "E104"),
    ],
    ids=["binary", "empty", "crlf", "bom-tabs", "deep"],
)
def test_bad_input_gets_a_clean_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       content: str | bytes, expected: str | None) -> None:
    path = write(tmp_path, "x.evl", content)
    code = main(["check", "--error-format", "short", str(path)])
    out = capsys.readouterr().out
    assert "Traceback" not in out
    if expected is None:
        assert code == 0 and out == ""
    else:
        assert code == 1 and f"error[{expected}]" in out


def test_check_missing_path_and_no_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "missing.evl")]) == 1
    assert "E002" in capsys.readouterr().out
    (tmp_path / "empty_dir").mkdir()
    assert main(["check", str(tmp_path / "empty_dir")]) == 4
    assert capsys.readouterr().err == f"evaldsl: no .evl files under {tmp_path / 'empty_dir'}\n"


def test_fmt_check_diff_and_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "m.evl", MESSY)
    assert main(["fmt", "--check", str(path)]) == 1
    assert path.read_text() == MESSY
    assert main(["fmt", "--diff", str(path)]) == 1
    assert "+  expect called calculator with <op: add>  # keep me" in capsys.readouterr().out
    assert main(["fmt", str(path)]) == 0
    formatted = path.read_text()
    assert formatted == 'case "adds"\n  prompt "2+2"\n  expect called calculator with <op: add>  # keep me\n'
    assert main(["fmt", "--check", str(path)]) == 0


def test_fmt_leaves_a_broken_file_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "bad.evl", BAD)
    assert main(["fmt", str(path)]) == 4
    assert path.read_text() == BAD
    assert "unknown predicate" in capsys.readouterr().err


def test_compile_json_for_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "s.evl", 'suite "S"\n' + GOOD)
    assert main(["compile", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["name"] == "S"
    assert data["cases"][0]["expectations"][0] == {"label": "called calculator with <op: add>",
                                                  "line": 4, "from_suite": False}
    assert main(["compile", str(path)]) == 0
    assert "expect called calculator with <op: add>" in capsys.readouterr().out


def test_compile_json_on_a_bad_file_is_json_diagnostics(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "bad.evl", BAD + '  expect final number is 4 within\n')
    assert main(["compile", str(path), "--json"]) == 1
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert out.err == ""
    first = data["diagnostics"][0]
    assert first == {"file": str(path), "line": 3, "column": 10, "end_line": 3, "end_column": 15,
                     "code": "E101", "severity": "error", "message": "unknown predicate `caled`",
                     "label": "not a predicate of the language", "hint": "did you mean `called`?",
                     "suggestion": "called"}
    assert len(data["diagnostics"]) == 2 and data["diagnostics"][1]["line"] == 4
    assert main(["compile", str(tmp_path / "missing.evl"), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["diagnostics"][0]["code"] == "E002"


def test_compile_json_carries_the_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "w.evl", 'case "a"\n  prompt "p {{x}}"\n  expect no error\n')
    assert main(["compile", str(path), "--json"]) == 0
    [warning] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert (warning["code"], warning["severity"], warning["line"]) == ("W304", "warning", 2)


def test_compile_text_shows_the_settings_that_change_a_run(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "s.evl", 'tags math\ncase "a"\n  tags flaky\n  repeat 4\n  pass rate at least 0.75\n'
                 '  xfail "known"\n  prompt "p"\n  expect no error\ncase "b"\n  skip\n  prompt "q"\n'
                 '  expect no error\n')
    assert main(["compile", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "  case 'a' (line 2)", "    tags math, flaky", '    xfail "known"', "    repeat 4",
        "    pass rate at least 0.75", "    expect no error    [line 8]",
        "  case 'b' (line 9)", "    tags math", "    skip", "    expect no error    [line 12]",
    ]


def test_schema_is_the_ast_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "Suite" and "Called" in schema["$defs"]


def test_usage_errors_exit_4(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 4
    assert main(["check"]) == 4
    assert main(["no-such-command"]) == 4


def test_console_entry_points_run(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.evl", BAD)
    proc = subprocess.run([sys.executable, "-m", "evaldsl", "check", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "unknown predicate" in proc.stdout and "Traceback" not in proc.stderr
