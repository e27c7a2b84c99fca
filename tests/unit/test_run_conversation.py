"""run/_conversation.py: one run of a conversation (LANGUAGE.md 11-14), with Python agents in process.

What a user relies on: each turn's expectations see that turn only; the conversation so far reaches the
agent as chat messages; an agent error ends the conversation and keeps the turns before it; the timeout
bounds the whole conversation; a world is made fresh per run, on a sync agent's own thread, and closed
whatever happened; a constructor that raises is that run's error, naming the setup value.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evaldsl
from evaldsl import RunArtifacts, ToolCall
from evaldsl.run._conversation import refusals
from evaldsl.run._protocols import subject_for
from evaldsl.run._turns import conversation_prompt, merged, turn_messages

TWO_TURNS = '''
case "two turns"
  expect called b
  user "first"
    expect called a
    expect not called b
    expect final text is "one"
  user "second"
    expect called b
    expect not called a
    expect final text is "two"
'''


def _run(agent: Any, source: str, filename: str = "c.evl", **opts: Any) -> Any:
    return evaldsl.run_suite(agent, evaldsl.compile(source, filename=filename), **opts).cases[0]


def test_each_turns_expectations_see_that_turn_only_and_the_whole_sees_every_call() -> None:
    def agent(message: str, ctx: Any) -> RunArtifacts:
        name, text = ("a", "one") if ctx.turn == 1 else ("b", "two")
        return RunArtifacts(tool_calls=[ToolCall(name=name)], final_text=text, tokens=ctx.turn)

    case = _run(agent, TWO_TURNS)
    assert case.status == "passed", [(e.label, e.detail) for e in case.runs[0].expectations]
    run = case.runs[0]
    assert [(e.turn, e.label) for e in run.expectations] == [
        (None, "called b"), (1, "called a"), (1, "not called b"), (1, 'final text is "one"'),
        (2, "called b"), (2, "not called a"), (2, 'final text is "two"')]
    assert [c.name for c in run.artifacts.tool_calls] == ["a", "b"] and run.artifacts.final_text == "two"
    assert run.artifacts.tokens == 3 and run.conversation.ended_by == "script"


def test_later_turns_still_run_after_a_failed_expectation_and_the_score_is_the_product() -> None:
    src = TWO_TURNS.replace('expect final text is "one"', 'expect final text is "one" else no error for 0.5')
    case = _run(lambda m, ctx: RunArtifacts(tool_calls=[ToolCall(name="a" if ctx.turn == 1 else "b")],
                                            final_text="nope"), src)
    run = case.runs[0]
    assert len(run.conversation.turns) == 2 and case.status == "failed"
    assert [e.credit for e in run.expectations if e.turn == 1] == [1.0, 1.0, 0.5]


def test_an_agent_error_ends_the_conversation_and_keeps_the_turns_before_it() -> None:
    src = TWO_TURNS.replace('  user "second"', '  user "boom"\n  user "never sent"').replace(
        'expect final text is "two"', "")

    def agent(message: str, ctx: Any) -> RunArtifacts:
        if message == "boom":
            raise RuntimeError("the agent fell over")
        return RunArtifacts(tool_calls=[ToolCall(name="a")], final_text="one")

    run = _run(agent, src).runs[0]
    assert run.error is not None and run.error.kind == "agent_raised" and "fell over" in run.error.message
    turns = run.conversation.turns
    assert [t.message for t in turns] == ["first", "boom"] and turns[1].artifacts is None
    assert run.conversation.ended_by == "error"
    assert [e.turn for e in run.expectations] == [None, 1, 1, 1]  # the first turn judged, and the whole on it


def test_an_agent_that_sets_error_ends_the_conversation_too() -> None:
    run = _run(lambda m, ctx: RunArtifacts(final_text="x", error="backend down", error_kind="backend_http"),
               TWO_TURNS).runs[0]
    assert run.error.kind == "backend_http" and len(run.conversation.turns) == 1


def test_the_timeout_bounds_the_whole_conversation() -> None:
    src = TWO_TURNS.replace('case "two turns"', 'case "two turns"\n  timeout 300ms')

    async def agent(message: str, ctx: Any) -> RunArtifacts:
        await asyncio.sleep(0.2)  # each turn within the bound, the two together not
        return RunArtifacts(final_text="one")

    run = _run(agent, src).runs[0]
    assert run.error.kind == "timeout" and [t.message for t in run.conversation.turns] == ["first", "second"]
    assert run.conversation.turns[0].artifacts is not None and run.conversation.turns[1].artifacts is None


def test_the_agent_gets_the_conversation_so_far_and_one_id_per_run() -> None:
    seen: list[tuple[int, str, list[dict[str, Any]], bool]] = []

    def agent(message: str, ctx: Any) -> RunArtifacts:
        seen.append((ctx.turn, ctx.conversation_id, ctx.messages, ctx.last_turn))
        return RunArtifacts(tool_calls=[ToolCall(name="a", args={"n": 1}, result={"ok": True})], final_text="one")

    _run(agent, TWO_TURNS.replace('case "two turns"', 'case "two turns"\n  repeat 2'))
    seen.sort(key=lambda s: (s[1], s[0]))  # the repeats run side by side
    assert [s[0] for s in seen] == [1, 2, 1, 2] and [s[3] for s in seen] == [False, True, False, True]
    assert seen[0][1] == seen[1][1] != seen[2][1] == seen[3][1]
    second = seen[1][2]
    assert second[0] == {"role": "user", "content": "first"}
    assert second[1]["tool_calls"][0]["function"] == {"name": "a", "arguments": '{"n": 1}'}
    assert second[2] == {"role": "tool", "tool_call_id": second[1]["tool_calls"][0]["id"], "content": '{"ok": true}'}
    assert second[3:] == [{"role": "assistant", "content": "one"}, {"role": "user", "content": "second"}]


def test_an_agents_own_chat_transcript_is_the_conversation_it_gets_back() -> None:
    own = [{"role": "user", "content": "first"}, {"role": "assistant", "content": "thinking", "extra": 1},
           {"role": "assistant", "content": "one"}]
    got: list[list[dict[str, Any]]] = []

    def agent(message: str, ctx: Any) -> RunArtifacts:
        got.append(ctx.messages)
        return RunArtifacts(final_text="one", transcript=own if ctx.turn == 1 else [])

    _run(agent, TWO_TURNS)
    assert got[1][1:3] == own[1:]  # its own messages, as it wrote them


def test_a_prompt_only_agent_is_refused_before_the_run_naming_the_case() -> None:
    with pytest.raises(evaldsl.ConversationUsage, match=r"c\.evl:2: case 'two turns' is a conversation"):
        _run(lambda prompt: RunArtifacts(final_text="x"), TWO_TURNS)
    suite = evaldsl.compile('case "sim"\n  simulated user "be brief"\n  expect no error\n', filename="s.evl")
    found = refusals(subject_for(lambda m, ctx: RunArtifacts()), suite.cases, user=None)
    assert found == ["s.evl:1: case 'sim' has a `simulated user`, and no model plays it: pass --user-model "
                     "PROVIDER:MODEL (--evl-user-model to pytest, user= in Python)"]


def test_a_python_simulated_user_plays_until_done_or_the_bound() -> None:
    said: list[list[dict[str, Any]]] = []

    def user(*, instructions: str, messages: list[dict[str, Any]], repeat_index: int, case: str) -> str | None:
        said.append(messages)
        return None if len(messages) >= 4 else f"message {len(messages) // 2 + 1} ({instructions})"

    src = 'case "sim"\n  user "scripted"\n  simulated user "be brief"\n  user turns 5\n  expect no error\n'
    run = _run(lambda m, ctx: RunArtifacts(final_text="ok"), src, user=user).runs[0]
    assert [(t.message, t.simulated) for t in run.conversation.turns] == [
        ("scripted", False), ("message 2 (be brief)", True)]
    assert run.conversation.ended_by == "user"
    run = _run(lambda m, ctx: RunArtifacts(final_text="ok"), src.replace("user turns 5", "user turns 1"),
               user=lambda **kw: "more").runs[0]
    assert run.conversation.ended_by == "bound" and len(run.conversation.turns) == 2 and run.passed


WORLD = '''
import threading

class Counter:
    made = []
    closed = []

    def __init__(self, setup=None):
        if setup == {"boom": True}:
            raise ValueError("bad setup")
        self.n = (setup or {}).get("start", 0)
        self._thread = threading.get_ident()
        Counter.made.append(self)

    def bump(self, by: int = 1) -> int:
        """Add to the counter."""
        assert threading.get_ident() == self._thread, "called from another thread"
        self.n += by
        return self.n

    def close(self):
        Counter.closed.append(self.n)
'''


@pytest.fixture
def world(tmp_path: Path) -> Path:
    (tmp_path / "counter.py").write_text(WORLD)
    return tmp_path


def _counter(world: Path) -> Any:
    """The world class as this test's file made it (each test imports its own copy)."""
    import sys

    return next(m.Counter for m in list(sys.modules.values())
                if str(getattr(m, "__file__", "") or "").startswith(str(world)))


def _world_suite(world: Path, body: str) -> Any:
    return evaldsl.compile(f'world "counter.py:Counter"\n{body}', filename=str(world / "w.evl"), root=world)


def test_a_sync_agents_world_is_fresh_per_run_on_one_thread_and_closed(world: Path) -> None:
    suite = _world_suite(world, 'case "bumps"\n  repeat 2\n  setup <start: 10>\n  user "once"\n'
                                '    expect world <n: 11>\n  user "twice"\n    expect world <n: 13>\n')

    def agent(message: str, ctx: Any) -> RunArtifacts:
        ctx.call("bump", {"by": 1 if message == "once" else 2})
        return RunArtifacts(final_text="done")

    case = evaldsl.run_suite(agent, suite).cases[0]
    assert case.status == "passed", [(e.label, e.detail) for r in case.runs for e in r.expectations]
    assert [t.world_state for t in case.runs[0].conversation.turns] == [{"n": 11}, {"n": 13}]
    assert _counter(world).closed == [13, 13]


def test_a_world_that_cannot_be_made_is_that_runs_error_naming_the_setup(world: Path) -> None:
    suite = _world_suite(world, 'case "bad"\n  setup <boom: true>\n  prompt "x"\n  expect no error\n'
                                'case "good"\n  prompt "y"\n  expect world <n: 0>\n')
    report = evaldsl.run_suite(lambda m, ctx: RunArtifacts(final_text="ok"), suite)
    bad, good = report.cases
    assert bad.status == "error" and bad.runs[0].error.kind == "world_error"
    assert "Counter(setup) raised ValueError: bad setup (setup: {\"boom\": true})" in bad.runs[0].error.message
    assert good.status == "passed"


def test_a_world_is_closed_after_a_timeout_too(world: Path) -> None:
    suite = _world_suite(world, 'case "slow"\n  timeout 200ms\n  setup <start: 5>\n  prompt "x"\n'
                                '  expect no error\n')

    def agent(message: str, ctx: Any) -> RunArtifacts:
        time.sleep(1.0)
        return RunArtifacts(final_text="late")

    run = evaldsl.run_suite(agent, suite).cases[0].runs[0]
    assert run.error.kind == "timeout"
    closed = _counter(world).closed
    deadline = time.monotonic() + 5
    while 5 not in closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert closed == [5]


class _HarnessWorld:
    def __init__(self) -> None:
        self.items: list[str] = []

    def state(self) -> dict[str, Any]:
        return {"items": list(self.items)}


class _Harness:
    def setup(self, setup: Any) -> _HarnessWorld:
        return _HarnessWorld()

    def run(self, message: str, world: _HarnessWorld, ctx: Any) -> RunArtifacts:
        world.items.append(message)
        return RunArtifacts(final_text="ok")


def test_a_harness_world_with_state_gets_expect_world_after_each_turn() -> None:
    src = ('case "h"\n  user "a"\n    expect world <items: ["a"]>\n  user "b"\n    expect world <items: ["a", "b"]>\n'
           '  expect world <items: ["a", "b"]>\n')
    report = evaldsl.run_eval(_Harness(), evaldsl.compile(src, filename="h.evl", predicates={}))
    assert report.cases[0].status == "passed", report.cases[0].runs[0].expectations


def test_an_agents_close_conversation_is_called_once_the_run_ends() -> None:
    closed: list[str] = []

    class Agent:
        def run(self, message: str, ctx: Any) -> RunArtifacts:
            return RunArtifacts(final_text="one")

        async def close_conversation(self, conversation_id: str) -> None:
            closed.append(conversation_id)

    case = evaldsl.run_suite(Agent(), evaldsl.compile(TWO_TURNS, filename="c.evl"))
    assert len(closed) == 1 and closed[0].startswith("c.evl::two turns#0#") and case.cases[0].runs


def test_a_judge_of_a_turn_sees_the_conversation_up_to_it() -> None:
    prompts: list[str] = []

    def judge(*, rubric: str, prompt: str, artifacts: RunArtifacts) -> float:
        prompts.append(prompt)
        return 1.0

    src = 'case "j"\n  expect judge "kind"\n  user "hi"\n  user "how are you?"\n    expect judge "polite"\n'
    _run(lambda m, ctx: RunArtifacts(final_text=f"re: {m}"), src, judge=judge)
    assert prompts == ["[user] hi\n[agent] re: hi\n[user] how are you?",
                       "[user] hi\n[agent] re: hi\n[user] how are you?\n[agent] re: how are you?"]


def test_helpers_turn_messages_merged_and_the_judges_prompt() -> None:
    art = RunArtifacts(tool_calls=[ToolCall(name="f", args="{raw", result=None)], final_text=None)
    msgs = turn_messages("hi", art, 3)
    assert msgs[0]["tool_calls"][0] == {"id": "call_3_1", "type": "function",
                                        "function": {"name": "f", "arguments": "{raw"}}
    assert msgs[-1] == {"role": "assistant", "content": ""}
    assert merged([]) is None
    assert conversation_prompt([{"role": "user", "content": "only"}]) == "only"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "c"]), max_size=3), min_size=1, max_size=4))
def test_a_turns_expectation_never_sees_another_turns_calls(plan: list[list[str]]) -> None:
    """Each turn's `calls are` expectation holds exactly for that turn's own calls, however the others go."""
    lines = ['case "p"']
    for n, calls in enumerate(plan, 1):
        lines.append(f'  user "turn {n}"')
        lines.append("    expect " + ("calls are " + " then ".join(calls) if calls else "no tool calls"))
    whole = [c for calls in plan for c in calls]
    lines.append("  expect " + ("calls are " + " then ".join(whole) if whole else "no tool calls"))
    suite = evaldsl.compile("\n".join(lines[:1] + [lines[-1]] + lines[1:-1]) + "\n", filename="p.evl")

    def agent(message: str, ctx: Any) -> RunArtifacts:
        return RunArtifacts(tool_calls=[ToolCall(name=c) for c in plan[ctx.turn - 1]], final_text="")

    case = evaldsl.run_suite(agent, suite).cases[0]
    assert case.status == "passed", [(e.turn, e.label, e.detail) for e in case.runs[0].expectations]


def test_threads_of_sync_agents_end_with_their_runs() -> None:
    before = threading.active_count()
    _run(lambda m, ctx: RunArtifacts(final_text="one"), TWO_TURNS.replace('case "two turns"',
                                                                           'case "two turns"\n  repeat 5'))
    deadline = time.monotonic() + 5
    while threading.active_count() > before + 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threading.active_count() <= before + 1  # the pool's worker at most, not one thread a run


def test_refusals_read_every_row_of_a_conversation_from_an_examples_file_and_skip_those_of_a_prompt(
        tmp_path: Path) -> None:
    (tmp_path / "rows.csv").write_text("m\nhello\nbye\n")
    (tmp_path / "s.evl").write_text('case "talk {{m}}"\n  user "{{m}}"\n  expect no error\n'
                                    '  examples from "rows.csv"\n'
                                    'case "ask {{m}}"\n  prompt "{{m}}"\n  expect no error\n'
                                    '  examples from "rows.csv"\n')
    from evaldsl.run._api import flatten_cases

    cases = flatten_cases(evaldsl.load(str(tmp_path / "s.evl")))
    found = refusals(subject_for(lambda prompt: RunArtifacts()), cases, user=None)
    assert [f.split(": case ")[1].split(" is ")[0] for f in found] == ["'talk hello'", "'talk bye'"]


def test_a_simulated_user_that_returns_no_text_fails_its_run_saying_so_and_keeps_the_other_cases() -> None:
    suite = evaldsl.compile('case "sim"\n  simulated user "x"\n  expect no error\n'
                            'case "other"\n  prompt "p"\n  expect no error\n', filename="x.evl")
    report = evaldsl.run_suite(lambda m, ctx: RunArtifacts(final_text="ok"), suite, user=lambda **kw: 3)
    sim, other = report.cases
    assert sim.status == "error" and other.status == "passed"
    assert sim.runs[0].error.message == ("the simulated user returned int, not its next message (a str) or None "
                                         "(it is done)")
    assert sim.runs[0].conversation is not None and sim.runs[0].conversation.ended_by == "error"
