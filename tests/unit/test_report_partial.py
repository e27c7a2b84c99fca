"""The terminal summary marks a case that passed only through a fallback's partial credit."""

from __future__ import annotations

from evaldsl import RunArtifacts, ScriptedAgent, ToolCall, compile, run_suite
from evaldsl.report._terminal import format_report

SUITE = compile('''suite "Files"
case "reads the file"
  prompt "read"
  expect first call read_file else first call list_files for 0.5
  expect no error
case "fully right"
  prompt "list"
  expect first call read_file else first call list_files for 0.5
case "wrong"
  prompt "nothing"
  expect called read_file
''', "files.evl")


def listing(tool: str) -> RunArtifacts:
    return RunArtifacts(tool_calls=[ToolCall(name=tool, args={})], final_text="ok")


def test_a_pass_through_partial_credit_is_marked_with_the_fallback_that_gave_it() -> None:
    agent = ScriptedAgent({"read": listing("list_files"), "list": listing("read_file"), "nothing": "no"})
    lines = format_report(run_suite(agent, SUITE)).splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("=") and " partial credit " in line)
    assert lines[rule + 1:rule + 5] == [
        "PASSED files.evl:2 Files::reads the file  (partial credit, score 0.50)",
        "  ~ expect first call read_file else first call list_files for 0.5  (files.evl:4)",
        "      first call was list_files, not read_file; calls: list_files; "
        "fallback `first call list_files` held, credit 0.5",
        next(line for line in lines if " short summary " in line),  # failures come after
    ]
    assert not any("fully right" in line for line in lines)  # full credit: not listed
    assert "FAILED files.evl:9 Files::wrong" in lines


def test_repeats_say_in_how_many_runs_and_full_credit_lists_nothing() -> None:
    suite = compile('case "r"\n  repeat 2\n  prompt "p"\n'
                    '  expect first call read_file else first call list_files for 0.5\n', "r.evl")
    calls = iter(["list_files", "read_file"])
    report = run_suite(lambda prompt: listing(next(calls)), suite, concurrency=1)
    assert "  ~ expect first call read_file else first call list_files for 0.5  (r.evl:4) [in 1 of 2 runs]" \
        in format_report(report)
    full = run_suite(ScriptedAgent(default=listing("read_file")), suite)
    assert "partial credit" not in format_report(full)
