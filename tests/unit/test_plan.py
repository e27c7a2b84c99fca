"""`evaldsl.plan` driven from Python, without argparse: a `RunRequest` made by hand is planned
(`build_plan`), refused with one `PlanUsage` message, run (`run_plan`) and resumed, so that a tool
other than the CLI can use the plan. And the CLI's part: its arguments become the same request."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from evaldsl.plan import (
    NothingSelected,
    Outcome,
    Outputs,
    PlanUsage,
    RunRequest,
    Selection,
    build_plan,
    run_plan,
    run_request,
)

AGENT = '''
from evaldsl import RunArtifacts

def agent(prompt):
    return RunArtifacts(final_text=prompt.upper())
'''

SUITE = '''suite "Plan"

case "alpha"
  tags smoke
  prompt "alpha"
  expect final text contains "ALPHA"

case "beta"
  prompt "beta"
  expect final text contains "BETA"

case "gamma"
  tags smoke
  prompt "gamma"
  expect final text contains "nope"
'''


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "plan_test_agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "plan.evl").write_text(SUITE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def request(**changes: object) -> RunRequest:
    base = RunRequest(paths=("plan.evl",), agent="plan_test_agent:agent", argv=("run", "plan.evl", "--by-hand"))
    return replace(base, **changes)  # type: ignore[arg-type]


def names(cases: object) -> list[str]:
    return [case.name for case in cases]  # type: ignore[attr-defined]


def test_a_plan_selects_its_cases_and_writes_nothing_before_it_runs(work: Path) -> None:
    plan = build_plan(request(selection=Selection(tags=("smoke",)), outputs=Outputs(json="r.json")),
                      out=io.StringIO(), err=io.StringIO())
    assert names(plan.todo) == ["alpha", "gamma"] and plan.selected == 2
    assert [s.name for s in plan.suites] == ["Plan"] and plan.subject.kind == "agent"
    assert plan.executor is None and not plan.resumed and plan.models.agent is None
    assert not (work / "r.json").exists() and not (work / ".evaldsl").exists()
    assert plan.keeper.meta.selection == {"tags": ["smoke"]}
    assert plan.keeper.meta.command == "evaldsl run plan.evl --by-hand"  # the request's argv, not sys.argv


def test_running_a_plan_ends_it_record_last_failed_and_report(work: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    plan = build_plan(request(selection=Selection(keyword="a"), outputs=Outputs(json="r.json")), out=out, err=err)
    done = run_plan(plan)
    assert done.outcome is Outcome.FAILED and done.report.summary.total == 3  # alpha, beta, gamma all hold an "a"
    record = json.loads((work / "r.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in record["cases"]] == ["alpha", "beta", "gamma"] and record["meta"]["complete"]
    assert json.loads((work / ".evaldsl" / "lastfailed.json").read_text(encoding="utf-8")) == ["plan.evl::gamma"]
    assert "gamma" in out.getvalue() and "record written to r.json" in err.getvalue()


def test_what_cannot_run_is_one_usage_error_with_its_message(work: Path) -> None:
    with pytest.raises(PlanUsage, match=r"no such file or directory: plam\.evl \(did you mean plan\.evl\?\)"):
        build_plan(request(paths=("plam.evl",)))
    with pytest.raises(PlanUsage, match="--agent plan_test_agent:nobody"):
        build_plan(request(agent="plan_test_agent:nobody"))
    with pytest.raises(PlanUsage, match="give the agent to run"):
        build_plan(request(agent=None))
    (work / "d").mkdir()
    with pytest.raises(PlanUsage, match="--json d: is a directory"):
        build_plan(request(outputs=Outputs(json="d")))
    with pytest.raises(NothingSelected, match=r"no cases selected \(3 loaded, all deselected\)"):
        build_plan(request(selection=Selection(keyword="delta")))
    assert not (work / ".evaldsl").exists()


def test_a_plan_resumes_a_record_running_only_its_missing_cases(work: Path) -> None:
    first = build_plan(request(selection=Selection(keyword="alpha"), outputs=Outputs(json="r.json")),
                       out=io.StringIO(), err=io.StringIO())
    assert run_plan(first).outcome is Outcome.PASSED
    err = io.StringIO()
    plan = build_plan(request(resume="r.json"), out=io.StringIO(), err=err)
    assert plan.resumed and names(plan.todo) == ["beta", "gamma"] and plan.selected == 3
    assert "resuming r.json: 1 case(s) done, 2 to run" in err.getvalue()
    assert run_plan(plan).outcome is Outcome.FAILED
    record = json.loads((work / "r.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in record["cases"]] == ["alpha", "beta", "gamma"]
    with pytest.raises(PlanUsage, match="the record is of agent"):
        build_plan(request(resume="r.json", model_name="someone else"))


def test_run_request_plans_runs_and_says_the_outcome(work: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run_request(request(selection=Selection(tags=("smoke",), keyword="alpha")), out=out, err=err) \
        is Outcome.PASSED
    assert (work / ".evaldsl" / "last.json").exists() and "1 passed" in out.getvalue()


def test_the_cli_hands_its_arguments_on_as_the_request() -> None:
    from evaldsl.cli import build_parser
    from evaldsl.cli._run import run_request_of

    argv = ["run", "a.evl", "d", "--agent", "m:a", "-k", "x", "--tag", "t", "--tag", "u", "--lf", "-j", "3", "-x",
            "--json", "r.json", "--html", "r.html", "--model-name", "n", "--shard", "2/3", "-q", "-vv", "--tb", "no",
            "--judge", "openai:j", "--no-cache", "--root", ".", "--no-suite-cache"]
    args = build_parser().parse_args(argv)
    args.argv = argv
    made = run_request_of(args)
    assert (made.paths, made.agent, made.concurrency, made.exitfirst, made.model_name, str(made.shard)) == (
        ("a.evl", "d"), "m:a", 3, True, "n", "2/3")
    assert made.selection == Selection(keyword="x", tags=("t", "u"), last_failed=True)
    assert (made.outputs.json, made.outputs.html, made.root, made.suite_cache) == ("r.json", "r.html", ".", False)
    assert (made.models.judge, made.models.cache, made.models.models) == ("openai:j", False, ())
    assert (made.display.quiet, made.display.verbose, made.display.tb, made.argv) == (True, 2, "no", tuple(argv))


def test_ray_runs_only_what_a_worker_can_import(work: Path) -> None:
    """`--executor ray` rebuilds the agent in each worker from its MODULE:ATTR: a command or an endpoint
    has none, so that is refused before anything runs (it used to reach Ray with no spec at all)."""
    with pytest.raises(PlanUsage, match="--executor ray runs an --agent or a --harness .*--agent-cmd"):
        build_plan(request(agent=None, agent_cmd="cat", executor="ray"), out=io.StringIO(), err=io.StringIO())
    assert not (work / ".evaldsl").exists()
