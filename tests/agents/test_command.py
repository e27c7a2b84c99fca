"""The command bridge (`evaldsl.agents.CommandAgent`) against real processes."""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from evaldsl.agents import CommandAgent

from ._scripts import CRASH, ECHO_ARGS, ERROR_LINE, GARBAGE, HANG_WITH_CHILD, LINES, ONE_REPLY_THEN_EXIT, script

TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "", "parameters": {}}}]


def ctx(**extra: Any) -> SimpleNamespace:
    return SimpleNamespace(name="adds", suite="Arithmetic", system=None, timeout_s=30.0,
                           tools_openai=lambda: TOOLS, **extra)


def test_one_shot_prompt_reaches_the_program_as_one_literal_argument(tmp_path: Path) -> None:
    prompt = "echo $HOME; rm -rf `whoami` && \"quoted\" 'single' | cat > x {prompt} \\n"
    agent = CommandAgent(shlex.join(script(tmp_path, "echo", ECHO_ARGS)) + " {prompt}")
    out = asyncio.run(agent.run(prompt, ctx()))
    assert out.error is None
    assert json.loads(out.final_text or "") == [prompt]
    assert not (tmp_path / "x").exists()


def test_one_shot_crash_is_an_error_carrying_the_end_of_stderr(tmp_path: Path) -> None:
    agent = CommandAgent(script(tmp_path, "crash", CRASH) + ["{prompt}"])
    out = asyncio.run(agent.run("hi", ctx()))
    assert out.error is not None and "exited with code 3" in out.error
    assert "kaput at step 7" in out.error
    assert {"role": "stderr", "content": "loading...\nTraceback: kaput at step 7"} in out.transcript


def test_line_form_one_turn_reports_calls_reply_tokens_and_gets_the_user_line(tmp_path: Path) -> None:
    out = asyncio.run(CommandAgent(script(tmp_path, "lines", LINES)).run("what is 2 + 3?", ctx()))
    assert out.error is None
    assert [(c.name, c.args, c.result) for c in out.tool_calls] == [("lookup", {"q": "what is 2 + 3?"}, "ok")]
    seen = json.loads(out.final_text or "")
    assert seen["turn"] == 1 and seen["case"] == "adds" and seen["env_case"] == "adds"
    assert seen["messages"] == [{"role": "user", "content": "what is 2 + 3?"}]
    assert seen["tools"] == TOOLS and len(seen["run_id"]) == 32
    assert out.tokens == 10
    assert out.transcript[-1] == {"role": "stderr", "content": "turn 1 done"}


def test_line_form_two_turns_in_one_process(tmp_path: Path) -> None:
    out = asyncio.run(CommandAgent(script(tmp_path, "lines", LINES)).converse(["hello", "and again"], ctx()))
    assert out.error is None
    assert [c.args for c in out.tool_calls] == [{"q": "hello"}, {"q": "and again"}]
    first = json.loads(out.transcript[1]["content"])
    last = json.loads(out.final_text or "")
    assert last["turn"] == 2 and last["pid"] == first["pid"] and last["run_id"] == first["run_id"]
    assert [m["role"] for m in last["messages"]] == ["user", "assistant", "user"]
    assert last["messages"][-1] == {"role": "user", "content": "and again"}
    assert out.tokens == 20


def test_a_conversation_id_keeps_one_process_across_run_calls(tmp_path: Path) -> None:
    agent = CommandAgent(script(tmp_path, "lines", LINES))

    async def two_turns() -> tuple[Any, Any]:
        first = await agent.run("one", ctx(conversation_id="c1", turn=1))
        second = await agent.run("two", ctx(conversation_id="c1", turn=2, last_turn=True))
        return first, second

    first, second = asyncio.run(two_turns())
    assert json.loads(second.final_text)["pid"] == json.loads(first.final_text)["pid"]
    assert json.loads(second.final_text)["turn"] == 2
    assert not agent._conversations  # the last turn ended it


@pytest.mark.parametrize(("body", "words"), [
    (GARBAGE, "agent protocol error: not a JSON line: 'Thinking... here is my answer'"),
    (ERROR_LINE, "agent error: quota exhausted"),
])
def test_bad_lines_end_the_run_as_an_error(tmp_path: Path, body: str, words: str) -> None:
    out = asyncio.run(CommandAgent(script(tmp_path, "bad", body)).run("hi", ctx()))
    assert out.error is not None and out.error.startswith(words)


def test_line_form_crash_keeps_stderr(tmp_path: Path) -> None:
    out = asyncio.run(CommandAgent(script(tmp_path, "crash", CRASH)).run("hi", ctx()))
    assert out.error is not None
    assert "exited with code 3 before its reply to turn 1" in out.error and "kaput at step 7" in out.error


def test_exit_before_the_last_turn_is_an_error_keeping_the_first_reply(tmp_path: Path) -> None:
    agent = CommandAgent(script(tmp_path, "early", ONE_REPLY_THEN_EXIT))
    out = asyncio.run(agent.converse(["one", "two"], ctx()))
    assert out.error is not None and "before its reply to turn 2" in out.error and "bye early" in out.error
    assert out.final_text == "first"


def test_a_program_that_cannot_start_is_a_run_error(tmp_path: Path) -> None:
    out = asyncio.run(CommandAgent([str(tmp_path / "nowhere")]).run("hi", ctx()))
    assert out.error is not None and out.error.startswith("cannot start")


def test_an_empty_command_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        CommandAgent("   ")


def _gone(pid: int) -> bool:
    """True when no live process has this pid (a zombie awaiting its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_cancelled_run_kills_the_agent_and_the_child_it_started(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    agent = CommandAgent([*script(tmp_path, "hang", HANG_WITH_CHILD), str(pids_file)])

    async def cancel_once_started() -> None:
        task = asyncio.ensure_future(agent.run("hi", ctx()))
        while not pids_file.exists():
            await asyncio.sleep(0.02)
        task.cancel()  # what the runner's timeout does
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_once_started())
    pids = [int(p) for p in pids_file.read_text().split()]
    for _ in range(500):  # the kill is sent; reaping may take a moment on a busy machine
        if all(_gone(pid) for pid in pids):
            break
        time.sleep(0.01)
    assert all(_gone(pid) for pid in pids), pids


def test_a_protocol_error_has_the_agent_protocol_kind() -> None:
    from evaldsl.agents._lines import Turns

    turns = Turns()
    assert turns.artifacts("agent protocol error: garbage on stdout").error_kind == "agent_protocol"
    assert turns.artifacts("agent error: it said so").error_kind is None  # the agent's own: agent_error
