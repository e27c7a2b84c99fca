"""The run record: its models, JSON round trip, atomic writing, unique names (the journal: test_report_keeper.py)."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.artifacts import RunArtifacts
from evaldsl.compile._model import CaseSettings, CompiledCase, CompiledExpectation, Outcome
from evaldsl.report._json import (
    RecordError,
    claim_unique,
    read_record,
    record_stem,
    write_atomic,
)
from evaldsl.report._lastfailed import case_ref, read_lastfailed, update_lastfailed
from evaldsl.run._api import run_suite
from evaldsl.run._builder import ReportBuilder, git_commit
from evaldsl.run._record import SCHEMA_VERSION, CaseResult, EvalReport, RunMeta
from evaldsl.run._scripted import ScriptedAgent


def case(name: str) -> CompiledCase:
    check = CompiledExpectation(label='final text is "ok"', file="t.evl", line=2,
                                check=lambda ctx: Outcome(1.0 if ctx.artifacts.final_text == "ok" else 0.0, "nope"))
    return CompiledCase(suite="t", name=name, file="t.evl", line=1, prompt=name, settings=CaseSettings(),
                        expectations=(check,))


def sample() -> EvalReport:
    agent = ScriptedAgent({"a": RunArtifacts(final_text="ok", tokens=5), "b": "no"})
    return run_suite(agent, [case("a"), case("b")])


def test_record_round_trips_through_json() -> None:
    report = sample()
    data = json.loads(report.model_dump_json())
    assert data["schema_version"] == SCHEMA_VERSION == 3
    assert set(data) == {"schema_version", "meta", "summary", "cases"}
    run = data["cases"][1]["runs"][0]
    assert set(run) == {"index", "passed", "score", "latency_s", "error", "expectations", "artifacts", "warnings",
                        "conversation"}
    assert run["conversation"] is None  # a single-prompt run without a world
    assert run["expectations"][0] == {"label": 'final text is "ok"', "passed": False, "credit": 0.0,
                                      "detail": "nope", "file": "t.evl", "line": 2, "turn": None}
    assert EvalReport.model_validate_json(report.model_dump_json()) == report


def test_every_record_field_is_documented() -> None:
    from evaldsl.run._record import record_schema

    schema = record_schema()
    ours = {k: v for k, v in schema["$defs"].items() if k not in ("RunArtifacts", "ToolCall")}
    missing = [f"{model}.{field}" for model, d in ours.items() for field, p in d["properties"].items()
               if not p.get("description")]
    missing += [f"EvalReport.{f}" for f, p in schema["properties"].items() if not p.get("description")]
    assert missing == []


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(ValueError):
        EvalReport.model_validate({"schema_version": 1, "surprise": True})


def test_builder_keeps_case_order_and_resumed_cases() -> None:
    cases = [case("a"), case("b"), case("c")]
    old = EvalReport(cases=[CaseResult(suite="t", name=n, file=f, line=1, prompt=n, status="passed")
                            for n, f in [("b", "t.evl"), ("gone", "old.evl")]])
    builder = ReportBuilder(cases, RunMeta(agent="x"), previous=old)
    assert [builder.is_done(c) for c in cases] == [False, True, False]
    sample_case = sample().cases[0]
    builder.add(sample_case.model_copy(update={"name": "c"}))
    builder.add(sample_case)  # "a" arrives last but is listed first
    report = builder.build(complete=False)
    assert [c.name for c in report.cases] == ["a", "b", "c", "gone"]
    assert report.summary.total == 4 and report.meta.complete is False and report.meta.agent == "x"


def test_write_atomic_replaces_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "r.json"
    write_atomic(target, "one")
    write_atomic(target, "two")
    assert target.read_text() == "two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["r.json"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)


def test_claim_unique_never_overwrites(tmp_path: Path) -> None:
    first = claim_unique(tmp_path, "m_20260101-000000", "1")
    second = claim_unique(tmp_path, "m_20260101-000000", "2")
    third = claim_unique(tmp_path, "m_20260101-000000", "3")
    assert [first.name, second.name, third.name] == [
        "m_20260101-000000.json", "m_20260101-000000_2.json", "m_20260101-000000_3.json"]
    assert [p.read_text() for p in (first, second, third)] == ["1", "2", "3"]
    assert len(list(tmp_path.iterdir())) == 3  # no temp files left


def test_record_stem_is_safe() -> None:
    when = datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone.utc)
    assert record_stem("gpt-4o mini/2024:08", when) == "gpt-4o_mini_2024_08_20260304-050607"
    assert record_stem("../..", when) == "agent_20260304-050607"


def test_lastfailed_keeps_the_failures_of_cases_that_did_not_run(tmp_path: Path) -> None:
    path = tmp_path / ".evaldsl" / "lastfailed.json"
    assert read_lastfailed(path) is None
    first = sample()  # a passed, b failed
    assert update_lastfailed(path, first.cases) == ["t.evl::b"]
    other = run_suite(ScriptedAgent({"c": "no"}), [case("c")])
    assert update_lastfailed(path, other.cases) == ["t.evl::b", "t.evl::c"]  # b did not run: kept
    fixed = run_suite(ScriptedAgent({"b": "ok"}), [case("b")])
    assert update_lastfailed(path, fixed.cases) == ["t.evl::c"]
    assert json.loads(path.read_text()) == ["t.evl::c"] and read_lastfailed(path) == ["t.evl::c"]
    assert case_ref("./d/../t.evl", "c") == "t.evl::c"
    path.write_text('{"not": "a list"}')
    with pytest.raises(RecordError, match="is not a list of case ids"):
        read_lastfailed(path)
    assert update_lastfailed(path, first.cases) == ["t.evl::b"]  # a broken file is started afresh


def test_read_record_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="cannot read record .*missing.json"):
        read_record(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(RecordError, match="bad.json is not an evaldsl run record"):
        read_record(bad)
    bad.write_text('{"cases": [{"name": 3}]}')
    with pytest.raises(RecordError, match="cases.0"):
        read_record(bad)


def test_git_commit_reads_refs_and_packed_refs(tmp_path: Path) -> None:
    git = tmp_path / "repo" / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text("a" * 40 + "\n")
    suite = tmp_path / "repo" / "suites" / "x.evl"
    suite.parent.mkdir()
    suite.write_text("")
    assert git_commit(suite) == "a" * 40
    os.remove(git / "refs" / "heads" / "main")
    (git / "packed-refs").write_text(f"# pack-refs\n{'b' * 40} refs/heads/main\n")
    assert git_commit(suite) == "b" * 40
    (git / "HEAD").write_text("c" * 40)  # detached
    assert git_commit(suite.parent) == "c" * 40
    (tmp_path / "plain").mkdir()
    assert git_commit(tmp_path / "plain") is None or (tmp_path / ".git").exists()


def test_resuming_examples_rows_from_python_makes_only_the_rows_left_as_they_run(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import evaldsl
    import evaldsl.run._api as api
    from evaldsl.compile._model import LazyCases

    (tmp_path / "rows.jsonl").write_text("".join(json.dumps({"n": i}) + "\n" for i in range(6)), encoding="utf-8")
    (tmp_path / "rows.evl").write_text('case "row {{n}}"\n  prompt "say {{n}}"\n  expect final text contains "{{n}}"\n'
                                       '  examples from "rows.jsonl"\n', encoding="utf-8")
    suite = evaldsl.load(tmp_path / "rows.evl")
    first = run_suite(lambda prompt: RunArtifacts(final_text=prompt), suite)
    assert first.summary.passed == 6
    previous = first.model_copy(update={"cases": [c for c in first.cases if c.name not in ("row 1", "row 4")]})
    handed: list[object] = []
    real = api.run_cases

    async def spy(subject, cases, **kwargs):  # type: ignore[no-untyped-def]
        handed.append(cases)
        return await real(subject, cases, **kwargs)

    monkeypatch.setattr(api, "run_cases", spy)
    asked: list[str] = []
    again = run_suite(lambda prompt: asked.append(prompt) or RunArtifacts(final_text=prompt), suite, previous=previous)
    assert sorted(asked) == ["say 1", "say 4"]
    assert [c.name for c in again.cases] == [f"row {i}" for i in range(6)]
    assert isinstance(handed[0], LazyCases)  # positions kept, not the rows' cases


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text()))
def test_the_lastfailed_file_is_written_as_the_json_encoder_indents_it(ids: list[str]) -> None:
    """`.evaldsl/lastfailed.json` is written without the encoder's slow indenting path, byte for byte as it."""
    from evaldsl.report._lastfailed import _json_lines

    assert _json_lines(ids) == json.dumps(ids, indent=2) + "\n"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(), unique=True, max_size=8))
def test_lastfailed_is_written_as_json_dumps_writes_it(ids: list[str]) -> None:
    """The file's bytes are ``json.dumps(ids, indent=2)`` and a line break: any text, lone surrogates too."""
    from evaldsl.report._lastfailed import _json_lines

    assert _json_lines(ids) == json.dumps(ids, indent=2) + "\n"


def test_the_run_s_ids_for_lastfailed_are_case_ref_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`evaldsl run` folds its cases in by their keys in the keeper (no second normalizing): the same ids
    `case_ref` makes of the cases' own files, in record order, whatever order they finished in."""
    from evaldsl.plan._plan import RanCases as _RanCases
    from evaldsl.report._keeper import RecordKeeper
    from evaldsl.run._select import case_key

    monkeypatch.chdir(tmp_path)
    files = ["./d/../t.evl", str(tmp_path / "sub" / "u.evl"), "t.evl"]
    cases = [("c", files[0], "failed"), ("a", files[1], "passed"), ("b", files[2], "error")]
    keeper = RecordKeeper([case_key(f, n) for n, f, _ in sorted(cases, key=lambda c: c[0])], RunMeta())
    ran = _RanCases()
    for name, file, status in cases:
        ran.add(keeper._keys.find(case_key(file, name)), status)
    # record order (the keeper's: a, b, c), not the order they finished in (c, a, b)
    assert list(ran.in_order(keeper)) == [(case_ref(files[1], "a"), False), ("t.evl::b", True), ("t.evl::c", True)]
    assert case_ref(files[1], "a") == os.path.join("sub", "u.evl") + "::a"
