"""The tool loop (`ModelAgent`) against a scripted backend: every path of LANGUAGE.md section 8."""

from __future__ import annotations

import asyncio
import json

import pytest
from _fakechat import FakeChat, reply

import evaldsl
from evaldsl import CaseContext, ModelAgent, run_suite
from evaldsl.models._chat import BackendError, Sampling

SUITE = '''
suite "files"
system "Be brief."
tool read_file "Read a file"
  param path: string "the path"
  when <path: "a.txt"> returns "alpha"
  otherwise fails "no such file"
tool list_files "List the files"
  otherwise returns "a.txt b.txt"

case "reads"
  prompt "what is in a.txt?"
  expect called read_file with <path: "a.txt">
  expect final text contains "alpha"
'''


def ctx(extra: str = "") -> CaseContext:
    suite = evaldsl.compile(SUITE + extra)
    return CaseContext.for_case(suite.cases[-1])


def run(backend: FakeChat, context: CaseContext | None = None,
        prompt: str = "what is in a.txt?") -> evaldsl.RunArtifacts:
    return asyncio.run(ModelAgent(backend, Sampling(temperature=0.2)).run(prompt, context or ctx()))


def test_a_multi_step_loop_answers_each_call_and_ends_on_text() -> None:
    backend = FakeChat(
        reply(None, ("list_files", {})),
        reply(None, ("read_file", {"path": "a.txt"})),
        reply("It says alpha."),
    )
    art = run(backend)
    assert [(c.name, c.args, c.result) for c in art.tool_calls] == [
        ("list_files", {}, "a.txt b.txt"), ("read_file", {"path": "a.txt"}, "alpha")]
    assert art.final_text == "It says alpha." and art.error is None
    assert art.tokens == 15  # 3 replies of 3 + 2
    assert art.duration_s is not None and art.duration_s > 0  # the latency of the whole loop
    first = backend.requests[0]
    assert first["messages"] == [{"role": "system", "content": "Be brief."},
                                 {"role": "user", "content": "what is in a.txt?"}]
    assert [t["function"]["name"] for t in first["tools"]] == ["read_file", "list_files"]
    assert first["sampling"].temperature == 0.2
    last = backend.requests[2]["messages"]
    assert last[-1] == {"role": "tool", "tool_call_id": "id0", "content": "alpha"}
    assert last[-2]["role"] == "assistant" and last[-2]["tool_calls"][0]["function"]["name"] == "read_file"
    roles = [m["role"] for m in art.transcript]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]


def test_several_calls_in_one_reply_are_all_answered_in_order() -> None:
    backend = FakeChat(reply(None, ("read_file", {"path": "b.txt"}), ("read_file", {"path": "a.txt"})),
                       reply("done"))
    art = run(backend)
    tools = [m for m in backend.requests[1]["messages"] if m["role"] == "tool"]
    assert tools == [{"role": "tool", "tool_call_id": "id0", "content": "no such file"},
                     {"role": "tool", "tool_call_id": "id1", "content": "alpha"}]
    assert [c.result for c in art.tool_calls] == ["no such file", "alpha"]


def test_invalid_json_arguments_are_kept_raw_and_answered_with_an_error() -> None:
    backend = FakeChat(reply(None, ("read_file", '{"path": "a.txt"')), reply("sorry"))
    art = run(backend)
    assert art.tool_calls[0].args == '{"path": "a.txt"'
    assert "not valid JSON" in art.tool_calls[0].result
    assert backend.requests[1]["messages"][-1]["content"].startswith("Error: read_file: arguments are not valid JSON")


def test_an_undeclared_tool_gets_an_error_naming_it_and_the_declared_tools() -> None:
    backend = FakeChat(reply(None, ("read_fil", {"path": "a.txt"})), reply("hm"))
    result = run(backend).tool_calls[0].result
    assert "`read_fil`" in result and "did you mean `read_file`" in result and "list_files" in result


def test_max_turns_makes_the_run_an_error_and_keeps_the_calls() -> None:
    backend = FakeChat(*[reply(None, ("list_files", {})) for _ in range(3)])
    art = run(backend, ctx('  max turns 3\n'))
    assert len(backend.requests) == 3 and len(art.tool_calls) == 3
    assert art.error is not None and "max turns reached" in art.error and "3" in art.error
    assert art.final_text is None


def test_single_turn_stops_after_the_first_reply_and_leaves_calls_unanswered() -> None:
    backend = FakeChat(reply("I'll read it.", ("read_file", {"path": "a.txt"})), reply("never"))
    art = run(backend, ctx('  mode single-turn\n'))
    assert len(backend.requests) == 1
    assert [(c.name, c.result) for c in art.tool_calls] == [("read_file", None)]
    assert art.final_text == "I'll read it." and art.error is None
    assert [m["role"] for m in art.transcript] == ["system", "user", "assistant"]


def test_a_backend_error_is_the_run_error_with_status_and_the_transcript_kept() -> None:
    backend = FakeChat(reply(None, ("list_files", {})), BackendError("rate limited", status=429))
    art = run(backend)
    assert art.error == "fake:model: rate limited (HTTP 429)"
    assert len(art.tool_calls) == 1 and art.transcript[-1]["role"] == "tool"


def test_repeat_index_and_a_timeout_under_the_case_timeout_reach_the_backend() -> None:
    backend = FakeChat(reply("ok"))
    context = CaseContext.for_case(evaldsl.compile(SUITE + "  timeout 2s\n").cases[0], repeat_index=4)
    run(backend, context)
    request = backend.requests[0]
    assert request["repeat_index"] == 4
    assert 0 < request["timeout_s"] < 2


def test_no_tools_declared_sends_none_and_no_system_sends_only_the_prompt() -> None:
    suite = evaldsl.compile('suite "s"\ncase "c"\n  prompt "hi"\n  expect final text contains "hi"\n')
    backend = FakeChat(reply("hi there", tokens=None))
    art = run(backend, CaseContext.for_case(suite.cases[0]), prompt="hi")
    assert backend.requests[0]["tools"] is None
    assert backend.requests[0]["messages"] == [{"role": "user", "content": "hi"}]
    assert art.tokens is None  # no usage reported: no made-up count


@pytest.mark.parametrize("repeat", [3])
def test_through_the_runner_every_repeat_is_a_distinct_request(repeat: int) -> None:
    backend = FakeChat(*[r for _ in range(repeat) for r in (reply(None, ("read_file", {"path": "a.txt"})),
                                                             reply("It is alpha."))])
    suite = evaldsl.compile(SUITE + f"  repeat {repeat}\n")
    report = run_suite(ModelAgent(backend), suite, concurrency=1)
    case = report.cases[0]
    assert case.status == "passed" and len(case.runs) == repeat
    assert sorted({r["repeat_index"] for r in backend.requests}) == list(range(repeat))
    assert report.meta.agent == "fake:model"
    stored = case.runs[0].artifacts
    assert stored is not None and json.loads(stored.model_dump_json())["transcript"][1]["role"] == "user"
