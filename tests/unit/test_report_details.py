"""What the terminal shows of a failed case: final text, calls, transcript (-vv), the agent's traceback."""

from __future__ import annotations

import os

from evaldsl import RunArtifacts, ToolCall, compile, parse, run_suite
from evaldsl.report._details import Details, format_traceback
from evaldsl.report._terminal import Digest


def helper(d: dict[str, str]) -> str:
    return d["api_key"]


def agent(prompt: str) -> RunArtifacts:
    if prompt == "boom":
        helper({})
    calls = [ToolCall(name="search", args={"q": f"q{i}"}) for i in range(10)]
    return RunArtifacts(final_text="  I think it is 5  ", tool_calls=calls,
                        transcript=[{"role": "user", "content": prompt}, {"role": "assistant", "content": "5"}])


SUITE = 'case "wrong"\n  prompt "2+2"\n  expect final number is 4\n\ncase "boom"\n  prompt "boom"\n  expect no error\n'


def shown(details: Details) -> str:
    report = run_suite(agent, compile(parse(SUITE)), concurrency=1)
    digest = Digest(details)
    for case in report.cases:
        digest.add(case)
    return digest.render(report.summary)


def test_a_failure_shows_the_final_text_and_the_calls_by_default() -> None:
    text = shown(Details())
    assert 'final text: "I think it is 5"' in text
    assert 'calls: search({"q": "q0"}), search({"q": "q1"})' in text and "(and 2 more)" in text
    assert "transcript:" not in text


def test_quiet_leaves_them_out_and_vv_adds_the_transcript() -> None:
    assert "final text:" not in shown(Details(verbosity=0))
    text = shown(Details(verbosity=2))
    assert "  transcript:\n    user: 2+2\n    assistant: 5" in text


def test_an_agents_exception_shows_its_own_frames_only() -> None:
    text = shown(Details())
    assert "error: KeyError: 'api_key'" in text and "traceback (the agent's frames):" in text
    assert "in helper" in text and 'return d["api_key"]' in text
    assert "evaldsl/run" not in text and "asyncio" not in text
    one = shown(Details(tb="line"))
    assert f"{os.path.relpath(__file__)}:" in one and ": KeyError: 'api_key'" in one
    assert "traceback (the agent's frames)" not in shown(Details(tb="no"))


def test_long_is_the_whole_traceback_and_a_traceback_of_no_user_frame_keeps_its_last() -> None:
    tb = ('Traceback (most recent call last):\n  File "/usr/lib/python3.11/asyncio/x.py", line 3, in run\n'
          '    go()\nValueError: bad\n')
    assert format_traceback(tb, "long") == tb.rstrip("\n").split("\n")
    assert format_traceback(tb, "short") == []  # no frame of the agent's own: its `error:` line says it all
    assert format_traceback(tb, "line") == ["ValueError: bad"]
