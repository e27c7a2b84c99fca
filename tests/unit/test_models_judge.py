"""The LLM judge against a scripted backend: strict reading, one retry, never a default score."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from _fakechat import FakeChat, reply

import evaldsl
from evaldsl import JudgeVerdict, LLMJudge, RunArtifacts, ScriptedAgent, ToolCall, run_suite
from evaldsl.models._judge import VERDICT_SCHEMA, JudgeError, TemplateError, parse_verdict

ARTIFACTS = RunArtifacts(
    tool_calls=[ToolCall(name="search", args={"query": "paris weather"}, result="sunny"),
                ToolCall(name="search", args='{"query": "a<b', result="Error: not JSON")],
    final_text="It is sunny in Paris.",
)


def grade(backend: FakeChat, **kw: object) -> JudgeVerdict:
    judge = LLMJudge(backend, **kw)  # type: ignore[arg-type]
    return asyncio.run(judge(rubric="answers from the search", prompt="weather in Paris?", artifacts=ARTIFACTS))


def test_the_judge_sees_rubric_prompt_calls_and_answer_at_temperature_zero() -> None:
    backend = FakeChat(reply('{"score": 0.9, "reasoning": "Quotes the search."}'))
    verdict = grade(backend)
    assert verdict == JudgeVerdict(0.9, "Quotes the search.")
    request = backend.requests[0]
    text = request["messages"][0]["content"]
    for shown in ("answers from the search", "weather in Paris?", '1. search({"query": "paris weather"}) -> sunny',
                  '2. search({"query": "a<b)', "It is sunny in Paris."):
        assert shown in text
    assert request["sampling"].temperature == 0
    assert request["response_schema"] == VERDICT_SCHEMA


@pytest.mark.parametrize("text", [
    '```json\n{"score": 1, "reasoning": "ok"}\n```',
    '  {"reasoning": "ok", "score": 1.0}\n',
    '```\n{"score": 1, "reasoning": "ok"}```',
])
def test_a_verdict_may_come_fenced(text: str) -> None:
    assert parse_verdict(text) == JudgeVerdict(1.0, "ok")


@pytest.mark.parametrize(("text", "why"), [
    ("Score: 0.8", "not a JSON object"),
    ("[0.8]", "not an object"),
    ('{"score": "high", "reasoning": "x"}', "`score`"),
    ('{"score": true, "reasoning": "x"}', "`score`"),
    ('{"score": 7, "reasoning": "x"}', "not from 0 to 1"),
    ('{"score": 0.5}', "`reasoning`"),
    ('Sure! {"score": 0.5, "reasoning": "x"}', "not a JSON object"),
    ("", "no text"),
])
def test_unreadable_replies_are_refused_with_the_reason(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_verdict(text)


def test_one_unreadable_reply_is_retried_with_the_reason() -> None:
    backend = FakeChat(reply("I think 0.8"), reply('{"score": 0.8, "reasoning": "fine"}'))
    assert grade(backend).score == 0.8
    retry = backend.requests[1]["messages"]
    assert [m["role"] for m in retry] == ["user", "assistant", "user"]
    assert retry[1]["content"] == "I think 0.8" and "not a JSON object" in retry[2]["content"]


def test_two_unreadable_replies_raise_showing_what_the_judge_said() -> None:
    backend = FakeChat(reply("I think 0.8"), reply("x" * 1000))
    with pytest.raises(JudgeError) as err:
        grade(backend)
    message = str(err.value)
    assert "the judge (fake:model) failed" in message and "after one retry" in message
    assert "xxx..." in message and len(message) < 500


def test_a_replaced_template_is_what_the_judge_is_sent(tmp_path: Path) -> None:
    template = tmp_path / "mine.j2"
    template.write_text("RUBRIC={{ rubric }} CALLS={{ tool_calls | length }} FINAL={{ final_text }}")
    backend = FakeChat(reply('{"score": 1, "reasoning": "r"}'))
    grade(backend, template=template)
    assert backend.requests[0]["messages"][0]["content"] == (
        "RUBRIC=answers from the search CALLS=2 FINAL=It is sunny in Paris.")


def test_a_bad_template_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    template = tmp_path / "bad.j2"
    template.write_text("ok\n{% if %}\n")
    with pytest.raises(TemplateError, match=r"bad\.j2:2: judge template error"):
        LLMJudge(FakeChat(), template=template)
    with pytest.raises(TemplateError, match="cannot read judge template"):
        LLMJudge(FakeChat(), template=tmp_path / "missing.j2")


SUITE = '''suite "s"
case "polite"
  prompt "say hi"
  expect judge "is polite" at least 0.7
'''


def run_judged(*replies: object) -> evaldsl.EvalReport:
    backend = FakeChat(*replies)  # type: ignore[arg-type]
    agent = ScriptedAgent({"say hi": RunArtifacts(final_text="Hello!")})
    return run_suite(agent, evaldsl.compile(SUITE), judge=LLMJudge(backend))


def test_score_and_reasoning_reach_the_expectation_detail_in_the_record() -> None:
    passed = run_judged(reply('{"score": 0.9, "reasoning": "Greets warmly."}')).cases[0]
    exp = passed.runs[0].expectations[0]
    assert passed.status == "passed"
    assert exp.detail == "judge scored 0.90, at least 0.7; reasoning: Greets warmly."
    failed = run_judged(reply('{"score": 0.2, "reasoning": "Curt."}')).cases[0]
    assert failed.status == "failed"
    assert failed.runs[0].expectations[0].detail.endswith("below 0.7, on \"is polite\"; reasoning: Curt.")


def test_an_unreadable_judge_makes_the_run_an_error_never_a_score() -> None:
    case = run_judged(reply("great"), reply("still great")).cases[0]
    assert case.status == "error" and case.score == 0
    error = case.runs[0].error
    assert error is not None and error.type == "JudgeError" and "the judge (fake:model) failed" in error.message


def test_old_float_judges_and_pairs_still_work() -> None:
    agent = ScriptedAgent({"say hi": RunArtifacts(final_text="Hello!")})
    suite = evaldsl.compile(SUITE)
    assert run_suite(agent, suite, judge=lambda **kw: 0.8).cases[0].status == "passed"
    report = run_suite(agent, suite, judge=lambda **kw: (0.5, "meh"))
    assert report.cases[0].status == "failed"
    assert report.cases[0].runs[0].expectations[0].detail.endswith("reasoning: meh")
