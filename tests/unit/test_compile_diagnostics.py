"""Compile diagnostics: errors that hid each other, errors in data files, inputs that used to crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaldsl import EvlError, compile
from evaldsl.cli import main
from evaldsl.compile._expect import one_edit_apart


def diags(text: str, tmp_path: Path | None = None) -> list:
    filename = str(tmp_path / "t.evl") if tmp_path else "t.evl"
    try:
        suite = compile(text, filename)
    except EvlError as exc:
        return exc.diagnostics
    return list(suite.warnings)


def codes(text: str, tmp_path: Path | None = None) -> list[tuple[str, int]]:
    return [(d.code, d.span.line if d.span else 0) for d in diags(text, tmp_path)]


# ---------------------------------------------------- errors that hid others --


def test_a_short_row_does_not_hide_the_placeholder_errors_of_its_case() -> None:
    text = ('case "t {{ a }}"\n  prompt "p"\n  examples\n    | a | b |\n    | 1 |\n    | 2 | 3 |\n'
            "  expect final number is $c\n")
    assert codes(text) == [("E214", 5), ("W307", 4), ("E201", 7)]  # `b` is used nowhere: W307


@pytest.mark.parametrize("rows", ["| Paris |", "| Paris | Mon | x |", "| Paris |\n    | Rome | Tue | x |"])
def test_a_short_row_that_is_the_only_row_does_not_hide_the_placeholder_errors(rows: str) -> None:
    """With no usable row, the placeholders are still checked, against the header."""
    text = ('tool t\n  param city: string\n'
            'case "in {{ city }} on {{ dya }}"\n  prompt "weather on {{ day }}"\n  examples\n'
            f'    | city | day |\n    {rows}\n  expect called t with <city: $cty>\n')
    found = diags(text)
    short = [(d.code, d.span.line) for d in found if d.code == "E214"]
    assert short and all(line >= 7 for _, line in short)
    unknown = sorted((d.span.line, d.message, d.suggestion) for d in found if d.code == "E201")
    assert unknown[0] == (3, "unknown example column `dya`", "day")
    assert unknown[1][:2] == (7 + rows.count("\n") + 1, "unknown example column `cty`") and unknown[1][2] == "city"
    assert len(unknown) == 2


def test_a_second_prompt_does_not_hide_a_duplicate_case_name() -> None:
    text = 'case "a"\n  prompt "p"\n  prompt "q"\n  expect no error\ncase "a"\n  prompt "p"\n  expect no error\n'
    assert codes(text) == [("E219", 3), ("E205", 5)]


# --------------------------------------------------------- not and typos --

TOOLS = 'tool get_weather "w"\n  param city: string\ntool send_email "e"\n  param to: string\n'


def test_a_tool_under_not_one_edit_from_a_declared_one_warns_with_the_did_you_mean() -> None:
    found = diags(TOOLS + 'case "a"\n  prompt "p"\n  expect not called get_wether\n')
    assert [(d.code, d.severity, d.suggestion) for d in found] == [("W305", "warning", "get_weather")]


def test_a_tool_under_not_far_from_every_declared_one_is_allowed_silently() -> None:
    assert diags(TOOLS + 'case "a"\n  prompt "p"\n  expect not called delete_repo\n') == []


def test_an_absent_key_is_not_an_undeclared_param() -> None:
    text = TOOLS + 'case "a"\n  prompt "p"\n  expect called send_email with <to: "x", cc: absent>\n'
    assert diags(text) == []
    text = text.replace("cc: absent", 'cc: "y"')
    assert [d.code for d in diags(text)] == ["W302"]


def test_a_warning_is_given_once_however_many_rows() -> None:
    text = (TOOLS + 'case "a {{ n }}"\n  prompt "p"\n  expect not called get_wether\n  examples\n'
            "    | n |\n    | 1 |\n    | 2 |\n    | 3 |\n")
    assert [d.code for d in diags(text)] == ["W305"]


@pytest.mark.parametrize("a,b,expected", [
    ("get_wether", "get_weather", True), ("get_weahter", "get_weather", True),
    ("get_weatherr", "get_weather", True), ("get_xeather", "get_weather", True),
    ("get_weather", "get_weather", False), ("get_wthr", "get_weather", False), ("ab", "ba", True),
    ("abc", "cab", False),
])
def test_one_edit_apart(a: str, b: str, expected: bool) -> None:
    assert one_edit_apart(a, b) is expected and one_edit_apart(b, a) is expected


# ------------------------------------------------------------- data files --

USE_FILE = 'case "c {{{{ city }}}}"\n  prompt "p"\n  examples from "{name}"\n  expect final number is $n\n'


def data_error(tmp_path: Path, name: str, content: str) -> str:
    return data_diag(tmp_path, name, content).message


def data_diag(tmp_path: Path, name: str, content: str) -> Any:
    (tmp_path / name).write_text(content, encoding="utf-8")
    found = [d for d in diags(USE_FILE.format(name=name), tmp_path) if d.severity == "error"]
    assert len(found) == 1
    return found[0]


def in_data_file(diag: Any, name: str, line: int, column: int) -> None:
    """The diagnostic is positioned in the data file itself, and names the .evl line that read it."""
    assert diag.code == "E215"
    assert diag.span.file.endswith(name) and (diag.span.line, diag.span.column) == (line, column)
    assert "t.evl:3)" in diag.message


def test_a_bad_csv_cell_names_the_file_row_column_and_value(tmp_path: Path) -> None:
    message = data_error(tmp_path, "rows.csv", 'city,n\nParis,3\n"Rome\nNord",abc\n')
    assert "rows.csv:3, column `n`, holds `abc`" in message  # the row starts on the file's line 3


def test_a_csv_row_of_the_wrong_length_is_shown_in_the_data_file(tmp_path: Path) -> None:
    diag = data_diag(tmp_path, "rows.csv", "city,n\nParis,3\nRome\n")
    in_data_file(diag, "rows.csv", 3, 1)
    with pytest.raises(EvlError) as info:
        compile(USE_FILE.format(name="rows.csv"), str(tmp_path / "t.evl"))
    assert "3 | Rome\n" in info.value.render()  # the long form shows the data line


def test_a_jsonl_syntax_error_is_at_the_files_own_line(tmp_path: Path) -> None:
    diag = data_diag(tmp_path, "rows.jsonl", '{"city": "a", "n": 1}\n\n{"city": "b", "n": 2}\n{"n": [1,}\n')
    in_data_file(diag, "rows.jsonl", 4, 10)


def test_nan_is_located_in_jsonl_and_json(tmp_path: Path) -> None:
    jsonl = '{"city": "a", "n": 1}\n{"city": "NaN", "n": NaN}\n'  # the NaN in a string is not the one
    diag = data_diag(tmp_path, "rows.jsonl", jsonl)
    in_data_file(diag, "rows.jsonl", 2, 22)
    assert "NaN is not a JSON number" in diag.message
    json_text = '[{"city": "a", "n": 1},\n {"city": "b",\n  "n": Infinity}]\n'
    in_data_file(data_diag(tmp_path, "rows.json", json_text), "rows.json", 3, 8)


def test_a_json_syntax_error_is_at_the_files_own_line(tmp_path: Path) -> None:
    in_data_file(data_diag(tmp_path, "rows.json", '[{"city": "a", "n": 1},\n {"n": }]\n'), "rows.json", 2, 8)


@pytest.mark.parametrize("depth", [200, 100_000])
def test_an_examples_file_nested_too_deep_is_an_error(tmp_path: Path, depth: int) -> None:
    deep = "[" * depth + "]" * depth
    message = data_error(tmp_path, "rows.json", f'[{{"city": "a", "n": 1, "x": {deep}}}]')
    assert "deeper than 64 levels" in message


def test_an_examples_file_nested_64_deep_is_read(tmp_path: Path) -> None:
    (tmp_path / "rows.json").write_text(json.dumps([{"city": "a", "n": 1, "x": json.loads("[" * 63 + "]" * 63)}]))
    assert diags(USE_FILE.format(name="rows.json"), tmp_path) == []


# ------------------------------------------------- no tracebacks, positioned --


@pytest.mark.parametrize("line", ["repeat " + "9" * 5000, "timeout " + "9" * 5000 + "s",
                                  "expect final number is 1e400"])
def test_a_number_too_large_is_a_positioned_error(line: str) -> None:
    found = diags(f'case "a"\n  prompt "p"\n  {line}\n  expect no error\n')
    assert [(d.code, d.span.line, d.span.column) for d in found] == [("E107", 3, len(line) - len(line.lstrip()) + 3
                                                                     + line.index(line.split()[-1]))]


@pytest.mark.parametrize("path,why", [
    ("a" * 300 + ".evl", "too long"), ("a\\u0000b.evl", "NUL"), ("a\\ud800b.evl", "lone surrogate"),
])
def test_a_use_path_no_file_can_have_is_e207(tmp_path: Path, path: str, why: str) -> None:
    found = diags(f'use "{path}"\ncase "a"\n  prompt "p"\n  expect no error\n', tmp_path)
    assert [(d.code, d.span.line, d.span.column) for d in found] == [("E207", 1, 5)]
    assert why in found[0].message


@pytest.mark.parametrize("path,why", [("a\\u0000b.csv", "NUL"), ("a\\ud800b.csv", "lone surrogate"),
                                      ("a" * 300 + ".csv", "too long")])
def test_an_examples_path_no_file_can_have_is_e215(tmp_path: Path, path: str, why: str) -> None:
    found = diags(USE_FILE.format(name=path), tmp_path)
    assert [(d.code, d.span.line) for d in found] == [("E215", 3)] and why in found[0].message


def test_check_exits_1_with_the_diagnostic_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "s.evl"
    suite.write_text('use "a\\u0000b.evl"\ncase "a"\n  prompt "p"\n  repeat ' + "7" * 4400 + "\n  expect no error\n")
    assert main(["check", "--error-format", "short", str(suite)]) == 1
    out = capsys.readouterr()
    assert "E107" in out.out + out.err and "Traceback" not in out.out + out.err


def test_a_long_source_line_is_shown_cut_around_the_caret() -> None:
    text = 'case "a"\n  prompt "p"\n  repeat ' + "9" * 5000 + "\n  expect no error\n"
    with pytest.raises(EvlError) as info:
        compile(text, "t.evl")
    long = info.value.render()
    assert max(len(line) for line in long.splitlines()) < 300
    assert "  repeat 999" in long and "...\n" in long  # the start of the line, then the cut
