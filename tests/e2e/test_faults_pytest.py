"""Under the pytest plugin, a case whose agent raises `CancelledError` is a normal failing item (issue 11)."""

from __future__ import annotations

import pytest

AGENT = '''
import asyncio
from evaldsl import RunArtifacts

async def agent(prompt):
    if prompt == "cancel":
        raise asyncio.CancelledError
    return RunArtifacts(final_text="ok")
'''

SUITE = '''case "fine"
  prompt "fine"
  expect final text is "ok"
case "cancelled"
  prompt "cancel"
  expect final text is "ok"
case "also fine"
  prompt "also"
  expect final text is "ok"
'''


def test_a_cancelled_agent_is_an_erroring_item_not_an_internal_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(cancel_agent=AGENT)
    pytester.makefile(".evl", cancel=SUITE)
    result = pytester.runpytest("--evl-agent", "cancel_agent:agent")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*CancelledError*the agent raised CancelledError*"])
    assert "assert result is not None" not in result.stdout.str()
    assert "INTERNALERROR" not in result.stdout.str()


HOSTILE_AGENT = '''
import asyncio, datetime
from evaldsl import RunArtifacts, ToolCall

class Own(BaseException):
    pass

class BadStr(Exception):
    def __str__(self):
        raise RuntimeError("no")

async def agent(prompt):
    if prompt == "circular":
        t = [{"role": "user", "content": "hi"}]
        t.append(t)
        return RunArtifacts(final_text="ok", transcript=t)
    if prompt == "odd args":
        args = {"when": datetime.date(2026, 1, 2), "ids": {1, 2}, "o": object(), "x": float("nan")}
        return RunArtifacts(final_text="ok", tool_calls=[ToolCall(name="t", args=args)])
    if prompt == "surrogate":
        return RunArtifacts(final_text="ok \\ud800")
    if prompt == "bad str":
        raise BadStr()
    if prompt == "own base":
        raise Own("mine")
    if prompt == "self cancel":
        asyncio.current_task().cancel()
        await asyncio.sleep(0)
    if prompt == "backtrack":
        return RunArtifacts(final_text="a" * 40 + "!")
    return RunArtifacts(final_text="ok")
'''


def test_hostile_answers_under_the_plugin_are_items_with_repeats(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(hostile_agent=HOSTILE_AGENT, test_plain="def test_plain():\n    assert True\n")
    names = ["circular", "odd args", "surrogate", "bad str", "own base", "self cancel", "fine"]
    suite = "".join(f'case "{n}"\n  prompt "{n}"\n  repeat 2\n  expect final text contains "ok"\n' for n in names)
    suite += 'case "backtrack"\n  prompt "backtrack"\n  timeout 1s\n  expect final text matches /^(a+)+$/\n'
    pytester.makefile(".evl", hostile=suite)
    result = pytester.runpytest("--evl-agent", "hostile_agent:agent", "-p", "no:cacheprovider")
    # test_plain and the four whose values were made safe; the other four are errors, as the CLI says
    result.assert_outcomes(passed=5, errors=4)
    out = result.stdout.str()
    for line in ("*hostile.evl::bad str - error: BadStr*", "*hostile.evl::own base - error: Own: mine*",
                 "*hostile.evl::self cancel - error: CancelledError*", "*hostile.evl::backtrack - error: RegexTimeout*"):
        result.stdout.fnmatch_lines([line])
    assert "INTERNALERROR" not in out and "lost the result" not in out
