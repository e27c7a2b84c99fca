"""The shipped baseline: it compiles, the demo agent passes it, and it can be dumped.

Two further agents check that the baseline measures something: one that
knows nothing fails every case, and one that does the right thing under
other tool names passes exactly the portable cases, which is what the files'
comments promise (a tool-name mismatch only fails the convention cases).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path
from typing import ClassVar

import pytest

import evaldsl
from evaldsl._baseline import (
    add_baseline_command,
    baseline,
    baseline_dir,
    baseline_files,
    dump_baseline,
)
from evaldsl.artifacts import RunArtifacts
from evaldsl.demo import agent as demo_agent

FILES = ["arithmetic.evl", "language.evl", "tool_use.evl", "tools.evl"]
PORTABLE = {
    "divides to a decimal", "subtracts into the negatives", "solves a word problem",
    "answers with one exact word", "starts with the required prefix", "follows a list format",
    "returns only json", "answers in one word",
}


def _cases() -> list[evaldsl.CompiledCase]:
    return [case for suite in baseline() for case in suite.cases]


def _passing(agent: object) -> set[str]:
    """Names of the cases whose every expectation holds on one run (no runner needed)."""
    passed = set()
    for case in _cases():
        artifacts = agent.run(case.prompt)  # type: ignore[attr-defined]
        context = evaldsl.EvalContext(artifacts=artifacts, prompt=case.prompt)
        if artifacts.error is None and all(e(context).passed for e in case.expectations):
            passed.add(case.name)
    return passed


class _Silent:
    def run(self, instruction: str) -> RunArtifacts:
        return RunArtifacts(final_text="I don't know.")


class _RenamedTools:
    """The demo agent, with its tools under other names than the convention's."""

    names: ClassVar[dict[str, str]] = {"search": "web_search", "calculator": "calc", "send_email": "email"}

    def run(self, instruction: str) -> RunArtifacts:
        result = demo_agent.run(instruction)
        calls = [c.model_copy(update={"name": self.names[c.name]}) for c in result.tool_calls]
        return result.model_copy(update={"tool_calls": calls})


def test_baseline_compiles_to_three_suites_of_18_cases() -> None:
    suites = baseline()
    assert [s.name for s in suites] == ["Arithmetic", "Language", "Tool use"]
    assert [len(s.cases) for s in suites] == [6, 5, 7]
    assert all(not s.warnings for s in suites)
    assert all("baseline" in c.settings.tags for c in _cases())


def test_library_file_loads_as_a_suite_without_cases() -> None:
    loaded = {Path(s.file).name: s for s in evaldsl.load(baseline_dir())}
    assert sorted(loaded) == FILES
    assert loaded["tools.evl"].cases == ()
    assert sorted(t.name for t in loaded["tools.evl"].tools) == ["calculator", "search", "send_email"]
    assert sorted(t.name for t in loaded["tool_use.evl"].tools) == ["calculator", "search", "send_email"]


def test_baseline_files_are_the_shipped_files() -> None:
    files = baseline_files()
    assert list(files) == FILES
    for name, text in files.items():
        assert text == (baseline_dir() / name).read_text(encoding="utf-8")
        assert text.startswith(f"# {name}:"), f"{name} must open with its explanatory comment"
    for name in ("arithmetic.evl", "tool_use.evl"):
        assert 'use "tools.evl"' in files[name]
        assert "not a capability failure" in files[name]


def test_demo_agent_passes_every_case_expectation_by_expectation() -> None:
    assert _passing(demo_agent) == {case.name for case in _cases()}


def test_demo_tool_results_agree_with_the_declared_mock_tools() -> None:
    for suite in baseline():
        tools = {tool.name: tool for tool in suite.tools}
        for case in suite.cases:
            for call in demo_agent.run(case.prompt).tool_calls:
                answer = tools[call.name].answer(call.args)
                assert answer.ok and answer.text == call.result, (case.name, call.display())


def test_an_agent_that_knows_nothing_fails_every_case() -> None:
    assert _passing(_Silent()) == set()


def test_other_tool_names_fail_only_the_convention_cases() -> None:
    assert _passing(_RenamedTools()) == PORTABLE | {"uses no tool for chit-chat"}


def _run_suite():  # type: ignore[no-untyped-def]
    """`evaldsl.run_suite`, or the runner module's before it is re-exported."""
    found = getattr(evaldsl, "run_suite", None)
    if found is None:
        from evaldsl.run._api import run_suite as found
    return found


def test_demo_agent_passes_the_baseline_through_the_runner() -> None:
    report = _run_suite()(demo_agent, baseline())
    assert report.summary.total == 18
    assert report.summary.passed == 18
    assert report.summary.accuracy == 1.0
    assert {c.status for c in report.cases} == {"passed"}
    assert all(c.score == 1.0 for c in report.cases)


def test_the_runner_reports_the_renamed_tools_agent_case_by_case() -> None:
    report = _run_suite()(_RenamedTools(), baseline())
    passed = {c.name for c in report.cases if c.status == "passed"}
    assert passed == PORTABLE | {"uses no tool for chit-chat"}
    assert {c.status for c in report.cases} == {"passed", "failed"}


def test_cli_runs_the_baseline_against_the_demo(tmp_path, monkeypatch, capsys) -> None:
    from evaldsl.cli import main

    monkeypatch.chdir(tmp_path)  # `run` leaves .evaldsl/last.json in the current directory
    code = main(["run", str(baseline_dir()), "--agent", "evaldsl.demo:agent", "--json", "record.json"])
    assert code == 0, capsys.readouterr()
    record = json.loads((tmp_path / "record.json").read_text(encoding="utf-8"))
    assert record["summary"]["passed"] == record["summary"]["total"] == 18
    assert record["meta"]["agent"] == "evaldsl-demo"


# ------------------------------------------------------------------ dump --


def test_dump_writes_files_that_compile(tmp_path) -> None:
    written = dump_baseline(tmp_path / "mine")
    assert [p.name for p in written] == FILES
    suites = [s for s in evaldsl.load(tmp_path / "mine") if s.cases]
    assert [[c.name for c in s.cases] for s in suites] == [[c.name for c in s.cases] for s in baseline()]


def test_dump_refuses_to_overwrite_and_writes_nothing(tmp_path) -> None:
    (tmp_path / "language.evl").write_text("# my edits\n", encoding="utf-8")
    with pytest.raises(FileExistsError, match=r"language.evl \(pass force=True to overwrite them\)"):
        dump_baseline(tmp_path)
    assert (tmp_path / "language.evl").read_text(encoding="utf-8") == "# my edits\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["language.evl"]


def test_dump_with_force_overwrites(tmp_path) -> None:
    (tmp_path / "language.evl").write_text("# my edits\n", encoding="utf-8")
    dump_baseline(tmp_path, force=True)
    assert (tmp_path / "language.evl").read_text(encoding="utf-8") == baseline_files()["language.evl"]


def _cli(*argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="evaldsl")
    add_baseline_command(parser.add_subparsers())
    args = parser.parse_args(["baseline", *argv])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = args.func(args)
    return code, out.getvalue(), err.getvalue()


def test_cli_lists_files_and_case_counts() -> None:
    code, out, _ = _cli()
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["arithmetic.evl", "6", "cases"]
    assert lines[1].split()[:3] == ["language.evl", "5", "cases"]
    assert lines[2].split()[:3] == ["tool_use.evl", "7", "cases"]
    assert lines[3].split()[:2] == ["tools.evl", "library"]
    assert lines[4].split()[:3] == ["total", "18", "cases"]


def test_cli_dump_then_refuse_then_force(tmp_path) -> None:
    code, out, _ = _cli("--dump", str(tmp_path))
    assert code == 0 and out.count("wrote ") == 4
    code, _, err = _cli("--dump", str(tmp_path))
    assert code == 4 and "refusing to overwrite" in err
    assert err.rstrip().endswith("(use --force to overwrite them)") and "force=True" not in err
    assert len(err.splitlines()) == 1
    code, out, _ = _cli("--dump", str(tmp_path), "--force")
    assert code == 0 and out.count("wrote ") == 4
