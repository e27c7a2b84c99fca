"""The compiler: settings, `use`, examples, partial credit, mock tools, load()."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evaldsl
from evaldsl import EvalContext, EvlError, RunArtifacts, ToolCall


def ctx(*calls: tuple[str, dict], text: str | None = None) -> EvalContext:
    return EvalContext(artifacts=RunArtifacts(
        tool_calls=[ToolCall(name=n, args=args) for n, args in calls], final_text=text))


def codes(text: str, **kw: object) -> list[str]:
    with pytest.raises(EvlError) as info:
        evaldsl.compile(text, "t.evl", **kw)  # type: ignore[arg-type]
    return [d.code for d in info.value.errors]


# -------------------------------------------------------------- settings --


def test_suite_defaults_and_case_overrides() -> None:
    suite = evaldsl.compile(
        'suite "S"\ndescription "about"\ntags a, b\nrepeat 3\ntimeout 2m\npass rate at least 0.5\n'
        'system "sys"\nmode single-turn\nmax turns 4\n\n'
        'case "one"\n  prompt "p"\n  tags b, c\n  repeat 1\n  timeout 500ms\n  expect no error\n'
        'case "two"\n  prompt "q"\n  skip\n  xfail "flaky"\n  expect no error\n',
        "t.evl",
    )
    assert (suite.name, suite.description) == ("S", "about")
    one, two = suite.cases
    assert one.settings.tags == ("a", "b", "c")
    assert (one.settings.repeat, one.settings.timeout_s, one.settings.pass_rate) == (1, 0.5, 0.5)
    assert (two.settings.repeat, two.settings.timeout_s) == (3, 120.0)
    assert (two.settings.system, two.settings.mode, two.settings.max_turns) == ("sys", "single-turn", 4)
    assert (two.settings.skip, two.settings.xfail) == ("", "flaky")
    assert one.settings.skip is None and one.settings.xfail is None


def test_defaults_when_nothing_is_set() -> None:
    case = evaldsl.compile('case "c"\n  prompt "p"\n  expect no error\n', "dir/my_suite.evl").cases[0]
    assert case.suite == "my_suite"  # the file's stem
    s = case.settings
    assert (s.repeat, s.pass_rate, s.timeout_s, s.mode, s.max_turns, s.tags) == (1, 1.0, 60.0, "agent", 10, ())
    assert (case.file, case.line, case.id) == ("dir/my_suite.evl", 1, "dir/my_suite.evl::c")


def test_suite_expectations_apply_to_every_case_first() -> None:
    suite = evaldsl.compile(
        'expect not called delete_repo\ncase "a"\n  prompt "p"\ncase "b"\n  prompt "q"\n  expect no error\n')
    assert [[e.label for e in c.expectations] for c in suite.cases] == [
        ["not called delete_repo"], ["not called delete_repo", "no error"]]
    assert suite.cases[1].expectations[0].from_suite and not suite.cases[1].expectations[1].from_suite


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('case "c"\n  expect no error\n', "E219"),
        ('case "c"\n  prompt "p"\n', "E220"),
        ('case "c"\n  prompt "p"\n  repeat 1.5\n  expect no error\n', "E211"),
        ('case "c"\n  prompt "p"\n  max turns 0\n  expect no error\n', "E211"),
        ('case "c"\n  prompt "p"\n  timeout 0s\n  expect no error\n', "E211"),
        ('case "c"\n  prompt "p"\n  mode chat\n  expect no error\n', "E212"),
        ('case "c"\n  prompt "p"\n  expect no error\ncase "c"\n  prompt "p"\n  expect no error\n', "E205"),
        ('case "c"\n  prompt "p"\n  expect final text matches /[/\n', "E202"),
        ('case "c"\n  prompt "p"\n  expect called t else called u for 0\n', "E210"),
        ('case "c"\n  prompt "$x"\n  expect final number is $x\n', "E201"),
    ],
)
def test_compile_errors(text: str, code: str) -> None:
    assert code in codes(text)


def test_every_compile_error_of_a_file_is_reported() -> None:
    found = codes('case "a"\n  prompt "p"\n  repeat 0\n  expect final text matches /(/\n'
                  'case "b"\n  expect no error\n')
    assert found == ["E211", "E202", "E219"]


# ------------------------------------------------------------------ tools --

TOOLS = '''tool read_file "Read a file"
  param path: string "relative path"
  param encoding?: one of [utf-8, latin-1]
  param lines?: array of integer
  when <path: matches /Cargo\\.toml$/> returns """
    [package]
    name = "agents"
    """
  when <path: contains "main.rs"> returns "fn main() {}"
  when <path: "secret"> fails "permission denied"
  otherwise returns "Error: File not found"

tool bare
'''


def test_tool_schema_and_canned_answers() -> None:
    suite = evaldsl.compile(TOOLS + 'case "c"\n  prompt "p"\n  expect called read_file\n')
    read, bare = suite.tools
    assert read.schema() == {"type": "function", "function": {
        "name": "read_file", "description": "Read a file", "parameters": {
            "type": "object", "required": ["path"], "properties": {
                "path": {"type": "string", "description": "relative path"},
                "encoding": {"enum": ["utf-8", "latin-1"]},
                "lines": {"type": "array", "items": {"type": "integer"}}}}}}
    answer = read.answer
    assert answer({"path": "x/Cargo.toml"}).text == '[package]\nname = "agents"'
    assert answer('{"path": "src/main.rs"}').text == "fn main() {}"  # JSON string arguments
    assert (answer({"path": "secret"}).ok, answer({"path": "secret"}).text) == (False, "permission denied")
    assert answer({"path": "nope"}).text == "Error: File not found"
    assert "missing required parameter `path`" in answer({}).text
    assert "parameter `path` must be a string" in answer({"path": 3}).text
    assert "must be one of" in answer({"path": "a", "encoding": "ascii"}).text
    assert "item 1 must be an integer" in answer({"path": "a", "lines": [1, "x"]}).text
    assert "not valid JSON" in answer("{oops").text
    unmatched = bare.answer({"q": 1})
    assert not unmatched.ok and "bare" in unmatched.text and '{"q": 1}' in unmatched.text
    assert suite.cases[0].tools == suite.tools


def test_undeclared_tools_and_params_are_flagged() -> None:
    assert codes(TOOLS + 'case "c"\n  prompt "p"\n  expect called read_fil\n') == ["E218"]
    suite = evaldsl.compile(TOOLS + 'case "c"\n  prompt "p"\n  expect called read_file with <pth: x>\n')
    (warn,) = suite.warnings
    assert (warn.code, warn.suggestion) == ("W302", "path")


def test_use_imports_tools_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "base.evl").write_text('tool search "Search"\n  param query: string\n')
    (tmp_path / "lib" / "tools.evl").write_text('use "base.evl"\ntool calc\n')
    (tmp_path / "other.evl").write_text('use "lib/base.evl"\n')
    main = tmp_path / "main.evl"
    main.write_text('use "lib/tools.evl"\nuse "other.evl"\ncase "c"\n  prompt "p"\n  expect called search\n')
    suite = evaldsl.load(main)[0]
    assert sorted(t.name for t in suite.tools) == ["calc", "search"]  # reached twice, declared once


def test_same_tool_declared_in_two_files_names_both(tmp_path: Path) -> None:
    (tmp_path / "a.evl").write_text("tool search\n")
    main = tmp_path / "main.evl"
    main.write_text('use "a.evl"\ntool search\ncase "c"\n  prompt "p"\n  expect called search\n')
    with pytest.raises(EvlError) as info:
        evaldsl.load(main)
    (err,) = info.value.errors
    assert err.code == "E208" and err.span.line == 2 and "a.evl:1" in (err.label or "")


def test_use_cycle_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "a.evl").write_text('use "b.evl"\n')
    (tmp_path / "b.evl").write_text('use "a.evl"\nuse "nope.evl"\n')
    with pytest.raises(EvlError) as info:
        evaldsl.load(tmp_path / "a.evl")
    assert sorted(d.code for d in info.value.errors) == ["E206", "E207"]


def test_sources_stand_in_for_use_files_on_disk(tmp_path: Path) -> None:
    (tmp_path / "lib.evl").write_text("tool search\n")
    main = 'use "lib.evl"\nuse "new.evl"\ncase "c"\n  prompt "p"\n  expect called search\n  expect called calc\n'
    edited = {tmp_path / "lib.evl": "tool lookup\n", str(tmp_path / "sub" / ".." / "new.evl"): "tool calc\n"}
    with pytest.raises(EvlError) as info:
        evaldsl.compile(main, str(tmp_path / "main.evl"), sources=edited)  # the buffer, not the disk
    assert [(d.code, "search" in d.message) for d in info.value.errors] == [("E218", True)]
    edited[tmp_path / "lib.evl"] = "tool search\n"
    suite = evaldsl.compile(main, str(tmp_path / "main.evl"), sources=edited)
    assert sorted(t.name for t in suite.tools) == ["calc", "search"]  # new.evl exists only as a source
    assert (tmp_path / "lib.evl").read_text() == "tool search\n" and not (tmp_path / "new.evl").exists()


# --------------------------------------------------------------- examples --


def test_inline_examples_fill_placeholders_and_templates() -> None:
    suite = evaldsl.compile(
        'case "adds {{a}} and {{b}}"\n  prompt "what is {{ a }} + {{b}}? {{ \\"{{\\" }}"\n'
        "  expect called $tool with <a: $a, b: $b>\n  expect final number is $sum\n"
        "  examples\n    | a | b | sum | tool |\n    | 2 | 2.50 | 4.5 | calculator |\n    | 10 | 32 | 42 | calc |\n")
    first, second = suite.cases
    assert (first.name, first.prompt) == ("adds 2 and 2.50", "what is 2 + 2.50? {{")
    assert [e.label for e in first.expectations] == [
        "called calculator with <a: 2, b: 2.50>", "final number is 4.5"]
    assert first.expectations[0](ctx(("calculator", {"a": 2, "b": 2.5, "op": "add"}))).passed
    assert not second.expectations[0](ctx(("calculator", {"a": 2, "b": 2.5}))).passed


def test_examples_from_files_and_setting_columns(tmp_path: Path) -> None:
    (tmp_path / "rows.csv").write_text("q,n,tags,skip\nhello,3,\"x, y\",\nbye,4,,not ready\n")
    (tmp_path / "rows.jsonl").write_text('{"q": "a", "n": 1, "xfail": true}\n\n{"q": "b", "n": 2}\n')
    (tmp_path / "rows.json").write_text('[{"q": "c", "n": 5, "args": {"k": [1]}}]')
    body = '  prompt "{{q}}"\n  expect final number is $n\n'
    (tmp_path / "s.evl").write_text(
        f'case "csv {{{{q}}}}"\n{body}  examples from "rows.csv"\n'
        f'case "jsonl {{{{q}}}}"\n{body}  examples from "rows.jsonl"\n'
        f'case "json {{{{q}}}}"\n{body}  expect called t with $args\n  examples from "rows.json"\n')
    cases = evaldsl.load(tmp_path)[0].cases
    assert [c.name for c in cases] == ["csv hello", "csv bye", "jsonl a", "jsonl b", "json c"]
    assert cases[0].settings.tags == ("x", "y") and cases[0].settings.skip is None
    assert cases[1].settings.skip == "not ready"
    assert cases[2].settings.xfail == "" and cases[3].settings.xfail is None
    assert cases[0].expectations[0].label == "final number is 3"
    args_check = cases[4].expectations[1]
    assert args_check(ctx(("t", {"k": [1], "extra": 0}))).passed  # subset rule for $args
    assert not args_check(ctx(("t", {"k": [1, 2]}))).passed


@pytest.mark.parametrize(
    ("table", "code"),
    [
        ("  examples\n", "E214"),
        ("  examples\n    | a | a |\n    | 1 | 2 |\n", "E214"),
        ("  examples\n    | a | b |\n    | 1 |\n", "E214"),
        ("  examples\n    | a |\n", "E214"),
        ('  examples from "missing.csv"\n', "E215"),
        ('  examples from "rows.txt"\n', "E215"),
    ],
)
def test_bad_tables(table: str, code: str) -> None:
    assert code in codes('case "c"\n  prompt "p"\n  expect no error\n' + table)


def test_unknown_template_name_suggests() -> None:
    with pytest.raises(EvlError) as info:
        evaldsl.compile('case "c {{nme}}"\n  prompt "p"\n  expect no error\n  examples\n    | name |\n    | x |\n')
    (err,) = info.value.errors
    assert (err.code, err.suggestion) == ("E201", "name")


def test_templates_without_examples_are_text_and_warn() -> None:
    suite = evaldsl.compile('case "c"\n  prompt "use {{x}} literally"\n  expect no error\n')
    assert suite.cases[0].prompt == "use {{x}} literally"
    assert [w.code for w in suite.warnings] == ["W304"]


def test_parametrized_case_names_must_stay_unique() -> None:
    assert codes('case "same"\n  prompt "{{a}}"\n  expect no error\n  examples\n    | a |\n    | 1 |\n    | 2 |\n') \
        == ["E205"]


# ---------------------------------------------------------- partial credit --


def test_partial_credit_takes_the_first_fallback_that_holds() -> None:
    exp = evaldsl.compile(
        'case "c"\n  prompt "p"\n  expect first call read_file else first call list_files for 0.5'
        " else called any tool for 0.25\n").cases[0].expectations[0]
    assert exp(ctx(("read_file", {}))).credit == 1.0
    half = exp(ctx(("list_files", {}), ("read_file", {})))
    assert half.credit == 0.5 and "first call list_files" in (half.detail or "")
    assert exp(ctx(("grep", {}))).credit == 0.25
    none = exp(ctx())
    assert none.credit == 0.0 and not none.passed


def test_not_and_or_compose_with_details() -> None:
    case = evaldsl.compile(
        'case "c"\n  prompt "p"\n  expect not called rm and (final text contains "ok" or final number is 3)\n')
    exp = case.cases[0].expectations[0]
    assert exp(ctx(text="ok")).passed
    assert exp(ctx(text="n = 3")).passed
    failed = exp(ctx(("rm", {"path": "/"}), text="ok"))
    assert not failed.passed and 'rm({"path": "/"})' in (failed.detail or "")
    neither = exp(ctx(text="no"))
    assert (neither.detail or "").startswith("none held:")


def test_custom_predicate_registry_is_checked_when_known() -> None:
    text = 'case "c"\n  prompt "p"\n  expect blocks_placed(n: 3)\n'
    evaldsl.compile(text)  # unknown registry: fine
    assert codes(text, predicates={"blocks_place": lambda *a, **k: True}) == ["E209"]
    ok = evaldsl.compile(text, predicates={"blocks_placed": lambda art, world, n: world == n})
    check = ok.cases[0].expectations[0]
    assert check(EvalContext(artifacts=RunArtifacts(), world=3,
                             predicates={"blocks_placed": lambda art, world, n: world == n})).passed


def test_judge_expectations_are_marked() -> None:
    case = evaldsl.compile('case "c"\n  prompt "p"\n  expect judge "kind"\n  expect no error\n').cases[0]
    assert [e.needs_judge for e in case.expectations] == [True, False] and case.needs_judge


# ---------------------------------------------------------------- loading --


def test_load_directory_sorted_and_library_files(tmp_path: Path) -> None:
    (tmp_path / "b.evl").write_text('case "b"\n  prompt "p"\n  expect no error\n')
    (tmp_path / "a.evl").write_text('case "a"\n  prompt "p"\n  expect no error\n')
    (tmp_path / "tools.evl").write_text("tool t\n")
    (tmp_path / "notes.txt").write_text("ignored")
    suites = evaldsl.load(tmp_path)
    assert [s.name for s in suites] == ["a", "b", "tools"]
    assert suites[2].cases == () and [t.name for t in suites[2].tools] == ["t"]


def test_malformed_file_fails_the_load_and_is_named(tmp_path: Path) -> None:
    (tmp_path / "good.evl").write_text('case "a"\n  prompt "p"\n  expect no error\n')
    (tmp_path / "bad.evl").write_text('case "a"\n  promt "p"\n')
    (tmp_path / "binary.evl").write_bytes(b"\x89PNG\x00\xff\xfe")
    with pytest.raises(EvlError) as info:
        evaldsl.load(tmp_path)
    files = sorted({d.file for d in info.value.errors})
    assert files == [str(tmp_path / "bad.evl"), str(tmp_path / "binary.evl")]
    assert "bad.evl:2:3" in str(info.value)


def test_missing_path_is_an_evl_error(tmp_path: Path) -> None:
    with pytest.raises(EvlError, match="no such file"):
        evaldsl.load(tmp_path / "nope")


def test_compiled_suite_json_is_serializable() -> None:
    suite = evaldsl.compile(TOOLS + 'case "c"\n  prompt "p"\n  setup <n: 1>\n  expect called read_file\n')
    data = json.loads(json.dumps(suite.to_json()))
    assert data["cases"][0]["setup"] == {"n": 1}
    assert data["cases"][0]["expectations"] == [{"label": "called read_file", "line": 17, "from_suite": False}]
    assert data["tools"][0]["name"] == "read_file"
