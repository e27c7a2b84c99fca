"""Importers: the RON reader, the emitted text, and positioned errors."""

from __future__ import annotations

import math

import pytest

import evaldsl
from evaldsl import EvlError
from evaldsl.importers import import_file, import_text
from evaldsl.importers._emit import count, name, regex, value
from evaldsl.importers._ron import Located, RonError, Struct, read_ron


def test_ron_reads_structs_lists_maps_options_and_comments() -> None:
    root = read_ron("""#![enable(implicit_some)]
    // a comment
    [ /* nested /* twice */ */
      EvalCase(name: "a", n: 1_000, x: 0x1F, f: -2.5e1, ok: true, o: Some("t"), none: None, unit: ()),
      (tags: ["x",], m: {"k": [1, 2]}, c: 'q', raw: r#"a "quoted" b"#, esc: "\\u{48}i\\n"),
    ]""")
    assert isinstance(root, Located)
    first, second = root.value
    assert isinstance(first, Struct) and first.name == "EvalCase"
    assert first.fields["n"] == 1000 and first.fields["x"] == 31 and first.fields["f"] == -25.0
    assert first.fields["ok"] is True and first.fields["unit"] is None
    assert first.fields["o"].name == "Some" and first.fields["o"].items == ["t"]
    assert first.fields["none"].name == "None"
    assert second.name is None and second.fields["c"] == "q"
    assert second.fields["raw"] == 'a "quoted" b' and second.fields["esc"] == "Hi\n"
    assert second.fields["m"].value["k"].value == [1, 2]


@pytest.mark.parametrize(("text", "where", "words"), [
    ('(name: "a"', 10, "close the struct"),
    ('(name "a")', 6, "`:`"),
    ('[1, 2', 5, "close the list"),
    ('"abc', 0, "never closed"),
    ('(a: 1, a: 2)', 7, "given twice"),
    ('/* open', 0, "never closed"),
    ("[" * 70 + "]" * 70, 64, "nest deeper"),
    ('(a: 1) x', 7, "end of the file"),
])
def test_ron_errors_say_where_and_what(text: str, where: int, words: str) -> None:
    with pytest.raises(RonError) as info:
        read_ron(text)
    assert info.value.offset == where
    assert words in str(info.value)


def test_emit_quotes_what_could_be_read_otherwise() -> None:
    assert name("search") == "search"
    assert name("any") == '"any"' and name("github:create_issue") == '"github:create_issue"'
    assert value({"op": "add", "then": [1, None, True]}) == '<op: "add", "then": [1, null, true]>'
    assert regex("a/b\nc\\/d") == "/a\\/b\\nc\\/d/"
    assert [count(1, 1), count(2, 2), count(3, 3), count(1, None), count(None, 2), count(1, 4), count(None, None)] == [
        "once", "twice", "3 times", "at least 1 times", "at most 2 times", "between 1 and 4 times",
        "at least 0 times"]


def test_single_turn_json_becomes_golden_secondary_and_negative_cases() -> None:
    result = import_text("""[
      {"input": "What files are here?", "expected_tool": "list_files"},
      {"input": "Read the Cargo.toml file", "expected_tool": "read_file", "secondary_tools": ["list_files"]},
      {"input": "Tell me a joke", "expected_tool": "none"}
    ]""", "file_tools.json")
    assert "expect first call read_file else first call list_files for 0.5" in result.text
    assert "expect no tool calls" in result.text
    assert (result.cases, result.expectations, result.warnings) == (3, 3, [])
    assert evaldsl.format(result.text) == result.text  # already canonical
    suite = evaldsl.compile(result.text)
    assert [c.name for c in suite.cases] == ["What files are here?", "Read the Cargo.toml file", "Tell me a joke"]


def test_multi_turn_json_becomes_order_and_judge() -> None:
    result = import_text("""[{"input": "List all files then read main.rs",
      "expected_tools": ["list_files", "read_file"],
      "expected_content": "main.rs contains a Hello World program"}]""", "multi.json")
    assert "expect called list_files then read_file" in result.text
    assert 'expect judge "The answer says what this expected answer says: main.rs contains' in result.text
    (case,) = evaldsl.compile(result.text).cases
    assert [e.needs_judge for e in case.expectations] == [False, True]


def test_unknown_fields_and_variants_are_kept_as_comments_and_reported(tmp_path) -> None:
    path = tmp_path / "s.ron"
    path.write_text('[(name: "a", instruction: "p", owner: "me",\n  expect: [NoError, Mystery(x: 1)])]')
    result = import_file(path)
    assert "# source field with no .evl statement: owner: \"me\"" in result.text
    assert "# not imported: Mystery(x: 1): no .evl form for the variant `Mystery`" in result.text
    codes = sorted((d.code, d.span.line, d.span.column) for d in result.warnings)
    assert codes == [("W501", 2, 21), ("W502", 1, 2)]


def test_duplicate_names_and_nameless_cases_get_unique_names() -> None:
    result = import_text('[(name: "a", instruction: "p", expect: [NoError]), '
                         '(name: "a", instruction: "q", expect: [NoError])]', "d.ron")
    assert [c.name for c in evaldsl.compile(result.text).cases] == ["a", "a (2)"]
    assert [d.code for d in result.warnings] == ["W503"]
    long = import_text(f'[{{"input": "{"word " * 30}", "expected_tool": "none"}}]', "l.json")
    (case,) = evaldsl.compile(long.text).cases
    assert case.name.endswith("...") and len(case.name) <= 60


@pytest.mark.parametrize(("text", "filename", "code", "line", "column", "words"), [
    ('[\n {"input": 1, "expected_tool": "a"}]', "a.json", "E502", 2, 2, "`input`"),
    ('[\n {"input": "x", "expected_tool": "a",}]', "a.json", "E501", 2, 38, "not valid JSON"),
    ('[{"input": "x", "expected_tool": NaN}]', "a.json", "E501", 1, 34, "NaN"),
    ('[{"input": "x"}]', "a.json", "E502", 1, 2, "neither"),
    ('[\n  (name: "a", expect: [])]', "a.ron", "E502", 2, 3, "`instruction`"),
    ('[(instruction: "a", expect: [Called(tool: 3)])]', "a.ron", "E502", 1, 1, None),
    ('[(instruction: "a", expect: [CalledTool(tool: 3)])]', "a.ron", "E502", 1, 41, "wrong type"),
    ('[(instruction: "a", expect: [CalledTool])]', "a.ron", "E502", 1, 30, "needs the field `tool`"),
])
def test_malformed_input_is_an_error_naming_file_and_position(text, filename, code, line, column, words) -> None:
    if words is None:  # an unknown variant is not an error: kept as a comment
        assert import_text(text, filename).warnings[0].code == "W501"
        return
    with pytest.raises(EvlError) as info:
        import_text(text, filename)
    (diag,) = info.value.diagnostics
    assert (diag.code, diag.span.file, diag.span.line, diag.span.column) == (code, filename, line, column)
    assert words in diag.message
    assert filename in info.value.render(style="short")


def test_values_without_an_evl_form_are_kept_as_comments() -> None:
    result = import_text('[(instruction: "a", expect: [FinalNumberEquals(value: inf), '
                         'FinalTextMatches(regex: "(?<=a+)b")])]', "x.ron")
    assert [d.code for d in result.warnings] == ["W501", "W501"]
    assert "no JSON form" in result.warnings[0].message and "does not compile" in result.warnings[1].message
    assert math.isinf(float("inf"))


def test_unreadable_file_is_e002(tmp_path) -> None:
    with pytest.raises(EvlError) as info:
        import_file(tmp_path / "missing.json")
    assert info.value.diagnostics[0].code == "E002"


def test_called_tool_with_compares_arrays_whole_as_eval_core_does() -> None:
    from evaldsl import EvalContext, RunArtifacts, ToolCall

    text = import_text('(instruction: "p", expect: [CalledToolWith(tool: "t", args: {"at": [{"x": 1}], "n": [1]})])',
                       "a.ron").text
    (case,) = evaldsl.compile(text).cases
    (exp,) = case.expectations

    def holds(args: dict) -> bool:
        return exp.check(EvalContext(artifacts=RunArtifacts(tool_calls=[ToolCall(name="t", args=args)]))).credit > 0

    assert holds({"at": [{"x": 1}], "n": [1], "extra": 0})  # objects: subset
    assert not holds({"at": [{"x": 1, "y": 2}], "n": [1]})  # an object inside an array: whole
    assert not holds({"at": [{"x": 1}], "n": [1, 2]})  # arrays: whole


def test_docs_import_examples_are_what_the_importer_writes() -> None:
    from pathlib import Path

    from tests.unit._docblocks import fenced_blocks

    blocks = fenced_blocks(Path(__file__).parents[2] / "docs" / "import.md")
    sources = {b.file: b.text for b in blocks if b.kind == "json" and b.file}
    outputs = [b for b in blocks if b.kind == "evl"]
    assert len(sources) == len(outputs) == 2
    for block in outputs:
        source = next(w.split("=", 1)[1] for w in block.words if w.startswith("imported-from="))
        assert import_text(sources[source], source).text == block.text
