"""rescore: current expectations over stored artifacts, stale cases kept out, judges called and counted."""

from __future__ import annotations

from evaldsl import ScriptedAgent, compile, run_suite
from evaldsl.artifacts import RunArtifacts
from evaldsl.run._rescore import rescore

OLD = '''
suite "Math"

case "adds"
  prompt "2 + 2?"
  expect final text contains "4"

case "reworded"
  prompt "3 + 3?"
  expect final text contains "6"

case "removed"
  prompt "1 + 1?"
  expect final text contains "2"

case "crashes"
  prompt "boom"
  expect no error

case "later"
  skip "not yet"
  prompt "9 + 9?"
  expect final text contains "18"
'''

NEW = '''
suite "Math"

case "adds"
  prompt "2 + 2?"
  expect final text contains "5"

case "reworded"
  prompt "three plus three?"
  expect final text contains "6"

case "crashes"
  prompt "boom"
  expect no error

case "later"
  prompt "9 + 9?"
  expect final text contains "18"

case "brand new"
  prompt "7 + 7?"
  expect final text contains "14"
'''


def boom(prompt: str) -> RunArtifacts:
    raise ConnectionError("refused")


AGENT = ScriptedAgent({"2 + 2?": "it is 4", "3 + 3?": "6", "1 + 1?": "2", "boom": boom})


def old_record():  # type: ignore[no-untyped-def]
    return run_suite(AGENT, compile(OLD, "math.evl"), concurrency=1)


def test_changed_expectations_are_reevaluated_without_the_agent() -> None:
    old = old_record()
    result = rescore(old, [compile(NEW, "math.evl")], command="evaldsl rescore r.json")
    by_name = {c.name: c for c in result.report.cases}
    adds = by_name["adds"]
    assert adds.status == "failed"
    [exp] = adds.runs[0].expectations
    assert exp.label == 'final text contains "5"' and not exp.passed and "it is 4" in (exp.detail or "")
    assert adds.runs[0].artifacts == old.cases[0].runs[0].artifacts
    assert adds.runs[0].latency_s == old.cases[0].runs[0].latency_s
    crashed = by_name["crashes"]
    assert crashed.status == "error" and crashed.runs[0].error.type == "ConnectionError"  # type: ignore[union-attr]
    assert result.report.meta.command == "evaldsl rescore r.json"
    assert result.report.meta.agent == old.meta.agent
    assert result.report.meta.started_at != old.meta.started_at
    assert result.report.summary.failed == 1 and result.report.summary.errors == 1


def test_stale_cases_are_listed_and_left_out() -> None:
    result = rescore(old_record(), [compile(NEW, "math.evl")])
    stale = {(s.name, s.reason) for s in result.stale}
    assert stale == {("reworded", "the prompt changed"), ("removed", "no longer exists"),
                     ("later", "not run in the record")}
    assert [c.name for c in result.report.cases] == ["adds", "crashes"]
    assert result.not_in_record == 1  # "brand new"


def test_a_case_the_suite_now_skips_is_skipped() -> None:
    skipping = NEW.replace('case "adds"\n', 'case "adds"\n  skip "flaky judge"\n')
    result = rescore(old_record(), [compile(skipping, "math.evl")])
    adds = next(c for c in result.report.cases if c.name == "adds")
    assert adds.status == "skipped" and adds.skip == "flaky judge" and adds.runs == []


JUDGED = '''
case "polite"
  prompt "hello"
  expect judge "The answer is polite" at least 0.8
'''


def test_judge_expectations_call_the_judge_and_are_counted() -> None:
    old = run_suite(ScriptedAgent({"hello": "hi there"}), compile('case "polite"\n  prompt "hello"\n'
                                                                   '  expect no error\n', "j.evl"))
    calls: list[str] = []

    def judge(*, rubric: str, prompt: str, artifacts: RunArtifacts) -> float:
        calls.append(f"{rubric}|{prompt}|{artifacts.final_text}")
        return 0.9

    result = rescore(old, [compile(JUDGED, "j.evl")], judge=judge)
    assert calls == ["The answer is polite|hello|hi there"]
    assert result.judge_calls == 1 and result.needs_judge == 0
    assert result.report.cases[0].status == "passed"


def test_without_a_judge_a_judge_expectation_is_an_error_saying_so() -> None:
    old = run_suite(ScriptedAgent({"hello": "hi"}), compile('case "polite"\n  prompt "hello"\n'
                                                             '  expect no error\n', "j.evl"))
    result = rescore(old, [compile(JUDGED, "j.evl")])
    [case] = result.report.cases
    assert case.status == "error" and result.needs_judge == 1
    assert "needs a judge" in case.runs[0].error.message  # type: ignore[union-attr]


def test_the_old_record_object_is_not_modified() -> None:
    old = old_record()
    before = old.model_dump_json()
    rescore(old, [compile(NEW, "math.evl")])
    assert old.model_dump_json() == before


def test_repeated_runs_are_each_rescored_under_the_current_gate() -> None:
    replies = iter(["4", "5", "4"])
    suite = 'case "flaky"\n  prompt "p"\n  repeat 3\n  pass rate at least 0.6\n  expect final text is "4"\n'
    old = run_suite(ScriptedAgent({"p": lambda _: next(replies)}), compile(suite, "f.evl"), concurrency=1)
    assert old.cases[0].status == "passed"
    stricter = suite.replace("0.6", "1.0").replace('is "4"', 'contains "4"')
    [case] = rescore(old, [compile(stricter, "f.evl")]).report.cases
    assert [r.passed for r in case.runs] == [True, False, True]
    assert case.pass_rate == 2 / 3 and case.required_pass_rate == 1.0 and case.status == "failed"
