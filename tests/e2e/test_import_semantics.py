"""Imported suites judge runs exactly as their source formats' own rules do.

Each source format's rule is written here from the reference documents
(`../shared/reference/`): single-turn tool selection scores the first call
(golden 1, secondary 0.5, `"none"` wants no call); multi-turn wants the
expected tools as a subsequence and a judge score of 0.5 or more; eval-core's
catalogue has its own matching rules (subset args where arrays compare whole,
the last number, trimmed equality). Hypothesis draws runs, and every case's
pass / fail under the imported `.evl` must equal the reference's verdict.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import evaldsl
from evaldsl import EvalContext, RunArtifacts, ToolCall
from evaldsl.cli import main
from evaldsl.importers import import_text

TOOLS = ["list_files", "read_file", "search", "calculator"]
TEXTS = ["", "The answer is 4.", "hello there, friend", "HELLO", "Yes it is", "no", "  OK  ", "-1,024.50 in total",
         "3.33 or so", "main.rs contains a Hello World program"]
ARG_VALUES = st.one_of(st.sampled_from(["add", "mul", "x"]), st.integers(-2, 2), st.booleans(), st.none(),
                       st.lists(st.integers(0, 2), max_size=3))
ARGS = st.dictionaries(st.sampled_from(["op", "a", "b", "at"]), ARG_VALUES, max_size=3)
INNER = st.lists(st.dictionaries(st.sampled_from(["x", "y"]), st.integers(0, 1)), max_size=2)
CALLS = st.lists(st.builds(ToolCall, name=st.sampled_from(TOOLS),
                           args=st.one_of(ARGS, st.dictionaries(st.just("at"), INNER))), max_size=4)
RUNS = st.builds(RunArtifacts, tool_calls=CALLS, final_text=st.one_of(st.none(), st.sampled_from(TEXTS)))


def evl_passes(case: evaldsl.CompiledCase, run: RunArtifacts, judge: Any = None) -> bool:
    ctx = EvalContext(artifacts=run, prompt=case.prompt, judge=judge)
    return all([exp.check(ctx).credit > 0 for exp in case.expectations])


_SUITES: dict[str, evaldsl.CompiledSuite] = {}


def imported(items: list[dict[str, Any]], filename: str) -> evaldsl.CompiledSuite:
    if filename not in _SUITES:
        _SUITES[filename] = evaldsl.compile(import_text(json.dumps(items), filename).text)
    return _SUITES[filename]


# ---- single-turn JSON ------------------------------------------------------------------------

SINGLE = [
    {"input": "What files are in the current directory?", "expected_tool": "list_files"},
    {"input": "Read the Cargo.toml file", "expected_tool": "read_file", "secondary_tools": ["list_files"]},
    {"input": "Search or list", "expected_tool": "search", "secondary_tools": ["list_files", "read_file"]},
    {"input": "Tell me a joke", "expected_tool": "none"},
]


def single_turn_reference(item: dict[str, Any], run: RunArtifacts) -> tuple[bool, float]:
    actual = run.tool_calls[0].name if run.tool_calls else None
    if actual is None:
        return (True, 1.0) if item["expected_tool"] == "none" else (False, 0.0)
    if actual == item["expected_tool"]:
        return True, 1.0
    if actual in item.get("secondary_tools", []):
        return True, 0.5
    return False, 0.0


@settings(max_examples=150, deadline=None)
@given(run=RUNS)
def test_single_turn_json_matches_its_reference(run: RunArtifacts) -> None:
    suite = imported(SINGLE, "single.json")
    for item, case in zip(SINGLE, suite.cases):
        passed, score = single_turn_reference(item, run)
        ctx = EvalContext(artifacts=run, prompt=case.prompt)
        credits = [exp.check(ctx).credit for exp in case.expectations]
        assert (all(c > 0 for c in credits), credits[0]) == (passed, score), (item, run)


# ---- multi-turn JSON -------------------------------------------------------------------------

MULTI = [
    {"input": "What files are in this project?", "expected_tools": ["list_files"],
     "expected_content": "The project contains Cargo.toml"},
    {"input": "List all files then read main.rs", "expected_tools": ["list_files", "read_file"],
     "expected_content": "main.rs contains a Hello World program"},
    {"input": "Just answer", "expected_tools": [], "expected_content": "hello"},
]


def is_subsequence(expected: list[str], actual: list[str]) -> bool:
    it = iter(actual)
    return all(any(a == e for a in it) for e in expected)


@settings(max_examples=150, deadline=None)
@given(run=RUNS, score=st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]))
def test_multi_turn_json_matches_its_reference(run: RunArtifacts, score: float) -> None:
    suite = imported(MULTI, "multi.json")
    rubrics: list[str] = []

    def judge(*, rubric: str, prompt: str, artifacts: RunArtifacts) -> float:
        rubrics.append(rubric)
        return score

    for item, case in zip(MULTI, suite.cases):
        order_ok = is_subsequence(item["expected_tools"], [c.name for c in run.tool_calls])
        assert evl_passes(case, run, judge) == (order_ok and score >= 0.5), (item, run, score)
        assert item["expected_content"] in rubrics[-1]


# ---- eval-core RON ---------------------------------------------------------------------------

LAST_NUMBER = re.compile(r"(?<![\w.])-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?")


def subset(expected: Any, actual: Any) -> bool:
    """eval-core: objects recurse key by key; every other value must be equal (arrays whole).
    Numbers compare by value and booleans never equal numbers, as in .evl (see docs/import.md)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            _same(e, a) for e, a in zip(expected, actual))
    return _same(expected, actual)


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (dict, list)):
        return type(expected) is type(actual) and json.dumps(expected, sort_keys=True) == json.dumps(
            actual, sort_keys=True)
    return type(expected) is type(actual) and expected == actual if not isinstance(
        expected, (int, float)) else isinstance(actual, (int, float)) and expected == actual


def last_number(text: str | None) -> float | None:
    if text is None:
        return None
    found = LAST_NUMBER.findall(text)
    return float(found[-1].replace(",", "")) if found else None


def eval_core(expect: tuple[str, dict[str, Any]], run: RunArtifacts) -> bool:
    kind, f = expect
    names = [c.name for c in run.tool_calls]
    text = run.final_text
    if kind == "CalledTool":
        return f["tool"] in names
    if kind == "DidNotCallTool":
        return f["tool"] not in names
    if kind == "CalledToolWith":
        return any(c.name == f["tool"] and subset(f["args"], c.args) for c in run.tool_calls)
    if kind == "ToolCallCount":
        n = sum(1 for c in names if f.get("tool") in (None, c))
        return (f.get("min") is None or n >= f["min"]) and (f.get("max") is None or n <= f["max"])
    if kind == "CalledToolsInOrder":
        return is_subsequence(f["tools"], names)
    if kind == "NoToolCalls":
        return not names
    if kind == "FinalTextContains":
        if text is None:
            return False
        return f["text"].lower() in text.lower() if f.get("case_insensitive") else f["text"] in text
    if kind == "FinalTextEquals":
        return text is not None and text.strip() == f["text"].strip()
    if kind == "FinalTextMatches":
        return text is not None and re.search(f["regex"], text) is not None
    if kind == "FinalNumberEquals":
        n = last_number(text)
        return n is not None and abs(n - f["value"]) <= f.get("tolerance", 0.0)
    assert kind == "NoError"
    return run.error is None


def ron_of(expect: tuple[str, dict[str, Any]]) -> str:
    kind, fields = expect
    if not fields:
        return kind
    parts = []
    for key, val in fields.items():
        if key == "tool" and kind == "ToolCallCount":
            parts.append(f"tool: Some({json.dumps(val)})")
        elif key in ("min", "max"):
            parts.append(f"{key}: Some({val})")
        elif key == "args":
            parts.append(f"args: {_ron_value(val)}")
        else:
            parts.append(f"{key}: {_ron_value(val)}")
    return f"{kind}({', '.join(parts)})"


def _ron_value(val: Any) -> str:
    if isinstance(val, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_ron_value(v)}" for k, v in val.items()) + "}"
    if isinstance(val, list):
        return "[" + ", ".join(_ron_value(v) for v in val) + "]"
    if val is None:
        return "()"
    return json.dumps(val)


EXPECTS = st.one_of(
    st.builds(lambda t: ("CalledTool", {"tool": t}), st.sampled_from(TOOLS)),
    st.builds(lambda t: ("DidNotCallTool", {"tool": t}), st.sampled_from(TOOLS)),
    st.builds(lambda t, a: ("CalledToolWith", {"tool": t, "args": a}), st.sampled_from(TOOLS), st.one_of(
        ARGS, st.just({"at": [{"x": 1}]}), st.just({"at": [{"x": 0}, {"x": 1}]}))),
    st.builds(lambda t, lo, hi: ("ToolCallCount", {k: v for k, v in (("tool", t), ("min", lo), ("max", hi))
                                                   if v is not None}),
              st.one_of(st.none(), st.sampled_from(TOOLS)), st.one_of(st.none(), st.integers(0, 3)),
              st.one_of(st.none(), st.integers(0, 3))).filter(
        lambda e: e[1].get("min") is None or e[1].get("max") is None or e[1]["min"] <= e[1]["max"]),
    st.builds(lambda ts: ("CalledToolsInOrder", {"tools": ts}), st.lists(st.sampled_from(TOOLS), min_size=1,
                                                                          max_size=3)),
    st.just(("NoToolCalls", {})),
    st.builds(lambda t, ci: ("FinalTextContains", {"text": t, "case_insensitive": ci}),
              st.sampled_from(["hello", "Hello", "answer", "4"]), st.booleans()),
    st.builds(lambda t: ("FinalTextEquals", {"text": t}), st.sampled_from(["OK", "no", "HELLO"])),
    st.builds(lambda r: ("FinalTextMatches", {"regex": r}), st.sampled_from(
        ["(?i)^\\s*(yes|no)\\b", "\\d+\\.\\d+", "a/b", "^$"])),
    st.builds(lambda v, tol: ("FinalNumberEquals", {"value": v, "tolerance": tol}),
              st.sampled_from([4.0, -1024.5, 3.3, 0.0]), st.sampled_from([0.0, 0.05])),
    st.just(("NoError", {})),
)


@settings(max_examples=200, deadline=None)
@given(expects=st.lists(EXPECTS, min_size=1, max_size=4), run=RUNS)
def test_eval_core_ron_matches_its_reference(expects: list[tuple[str, dict[str, Any]]], run: RunArtifacts) -> None:
    ron = "[" + ", ".join(f'(name: "c{i}", instruction: "p", expect: [{ron_of(e)}])'
                          for i, e in enumerate(expects)) + "]"
    result = import_text(ron, "generated.ron")
    suite = evaldsl.compile(result.text)
    for expect, case in zip(expects, suite.cases):
        assert evl_passes(case, run) == eval_core(expect, run), (expect, run, result.text)


# ---- eval-core's four-case calculator example, end to end through the CLI ---------------------

CALCULATOR_RON = """\
// The calculator example: a dependency-free agent checked with built-in assertions.
[
    (
        name: "adds-two-numbers",
        instruction: "what is 2 + 2?",
        expect: [
            CalledToolWith(tool: "calculator", args: { "op": "add" }),
            FinalNumberEquals(value: 4.0),
        ],
        tags: ["math"],
    ),
    (
        name: "divides-with-tolerance",
        instruction: "what is 10 / 3?",
        expect: [
            CalledTool(tool: "calculator"),
            ToolCallCount(tool: Some("calculator"), min: Some(1), max: Some(1)),
            FinalNumberEquals(value: 3.33, tolerance: 0.01),
        ],
    ),
    (
        name: "no-tools-for-chitchat",
        instruction: "hello there",
        expect: [
            NoToolCalls,
            FinalTextContains(text: "hello", case_insensitive: true),
        ],
    ),
    (
        name: "answers-yes-or-no",
        instruction: "is 7 prime?",
        expect: [
            FinalTextMatches(regex: "(?i)^\\\\s*(yes|no)\\\\b"),
            DidNotCallTool(tool: "search"),
            NoError,
        ],
    ),
]
"""

CALCULATOR_AGENT = '''
from evaldsl import RunArtifacts, ToolCall

REPLIES = {
    "what is 2 + 2?": ([ToolCall(name="calculator", args={"op": "add", "a": 2, "b": 2})], "The answer is 4."),
    "what is 10 / 3?": ([ToolCall(name="calculator", args={"op": "div", "a": 10, "b": 3})], "About 3.333"),
    "hello there": ([], "Hello! How can I help?"),
    "is 7 prime?": ([], "Yes, 7 is prime."),
}

def agent(prompt: str) -> RunArtifacts:
    calls, text = REPLIES[prompt]
    return RunArtifacts(tool_calls=calls, final_text=text)

def wrong(prompt: str) -> RunArtifacts:
    calls, text = REPLIES[prompt]
    return RunArtifacts(tool_calls=calls + calls, final_text="I think so: " + text.lower())
'''


def test_calculator_example_imports_checks_and_runs_like_eval_core(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "calculator.ron").write_text(CALCULATOR_RON)
    (tmp_path / "calc_agent.py").write_text(textwrap.dedent(CALCULATOR_AGENT))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["import", "calculator.ron", "-o", "suite"]) == 0
    assert main(["check", "--strict", "suite"]) == 0
    assert main(["fmt", "--check", "suite"]) == 0
    assert main(["run", "suite", "--agent", "calc_agent:agent", "--json", "good.json"]) == 0
    assert main(["run", "suite", "--agent", "calc_agent:wrong", "--json", "bad.json"]) == 1
    good = json.loads((tmp_path / "good.json").read_text())
    bad = json.loads((tmp_path / "bad.json").read_text())
    assert {c["name"]: c["status"] for c in good["cases"]} == dict.fromkeys(
        ["adds-two-numbers", "divides-with-tolerance", "no-tools-for-chitchat", "answers-yes-or-no"], "passed")
    # eval-core's verdicts for the `wrong` agent (doubled calls, text prefixed "I think so: " and lower-cased):
    # adds: args subset holds, last number 4 -> pass; divides: count 2 breaks [1, 1] -> fail;
    # chitchat: no calls, "hello" case-insensitive -> pass; yes/no: regex anchored at start -> fail.
    assert {c["name"]: c["status"] for c in bad["cases"]} == {
        "adds-two-numbers": "passed", "divides-with-tolerance": "failed",
        "no-tools-for-chitchat": "passed", "answers-yes-or-no": "failed"}
    sys.modules.pop("calc_agent", None)


def test_import_cli_refuses_to_overwrite_and_needs_o_for_several_files(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "a.json").write_text('[{"input": "hi", "expected_tool": "none"}]')
    (tmp_path / "b.ron").write_text('(name: "b", instruction: "x", expect: [NoError])')
    monkeypatch.chdir(tmp_path)
    assert main(["import", "a.json", "b.ron"]) == 4
    assert "several files need -o" in capsys.readouterr().err
    assert main(["import", "a.json", "b.ron", "-o", "out"]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.evl", "b.evl"]
    assert main(["import", "a.json", "-o", "out"]) == 4
    assert "exists; --force replaces it" in capsys.readouterr().err
    assert main(["import", "a.json", "-o", "out", "--force"]) == 0
    assert main(["import", "b.ron"]) == 0
    assert 'case "b"' in capsys.readouterr().out


def test_import_cli_reports_a_malformed_file_and_converts_the_others(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "bad.json").write_text('[\n  {"input": "x", "expected_tool": "a",}\n]')
    (tmp_path / "good.json").write_text('[{"input": "hi", "expected_tool": "none"}]')
    monkeypatch.chdir(tmp_path)
    assert main(["import", "bad.json", "good.json", "-o", "out"]) == 4
    err = capsys.readouterr().err
    assert "error[E501]: not valid JSON" in err and "bad.json:2:" in err
    assert (tmp_path / "out" / "good.evl").exists() and not (tmp_path / "out" / "bad.evl").exists()


FILE_TOOLS = json.dumps([
    {"input": "What files are in the current directory?", "expected_tool": "list_files"},
    {"input": "Show me the contents of src/main.rs", "expected_tool": "read_file"},
    {"input": "Read the Cargo.toml file", "expected_tool": "read_file", "secondary_tools": ["list_files"]},
    {"input": "What is Rust?", "expected_tool": "none"},
])
FILE_LIBRARY = '''tool list_files "List the files in a directory"
  param path: string
  otherwise returns "Cargo.toml\\nsrc/"

tool read_file "Read a file"
  param path: string
  otherwise returns "fn main() {}"
'''


def test_import_o_a_file_name_writes_that_file(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "a.json").write_text('[{"input": "hi", "expected_tool": "none"}]')
    monkeypatch.chdir(tmp_path)
    assert main(["import", "a.json", "-o", "out.evl"]) == 0
    assert (tmp_path / "out.evl").is_file() and 'case "hi"' in (tmp_path / "out.evl").read_text()
    assert main(["import", "a.json", "a.json", "-o", "two.evl"]) == 4
    assert "names one .evl file; several files need -o DIR" in capsys.readouterr().err


def test_an_imported_suite_naming_undeclared_tools_is_warned_and_a_model_run_refuses_it(
    tmp_path, monkeypatch, capsys
) -> None:
    (tmp_path / "file_tools.json").write_text(FILE_TOOLS)
    monkeypatch.chdir(tmp_path)
    assert main(["import", "file_tools.json", "-o", "plain.evl"]) == 0
    err = capsys.readouterr().err
    assert "the cases name tools that nothing declares (list_files, read_file)" in err and "--use LIB" in err
    code = main(["run", "plain.evl", "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "-q"])
    err = capsys.readouterr().err
    assert code == 4  # before anything runs: no request is made (nothing listens on port 9)
    assert "plain.evl: its cases expect calls of list_files, read_file, but the suite declares no tools" in err
    assert 'use \\"tools.evl\\"' not in err and 'use "tools.evl"' in err


def test_import_use_adds_the_library_and_the_suite_checks_clean(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "file_tools.json").write_text(FILE_TOOLS)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "tools.evl").write_text(FILE_LIBRARY)
    monkeypatch.chdir(tmp_path)
    assert main(["import", "file_tools.json", "-o", "out", "--use", "tools.evl"]) == 0
    err = capsys.readouterr().err
    assert "nothing declares" not in err
    text = (tmp_path / "out" / "file_tools.evl").read_text()
    assert 'suite "file_tools"\nuse "tools.evl"\n' in text
    assert main(["check", "--strict", "out"]) == 0
    assert main(["fmt", "--check", "out"]) == 0
