"""The pytest plugin's --evl-agent-cmd and --evl-agent-url, through pytester (subprocess runs)."""

from __future__ import annotations

import shlex
import sys

import pytest

SUITE = '''
suite "Calc"

case "adds"
  prompt "what is 2 + 3?"
  expect final text contains "5"

case "subtracts"
  prompt "what is 3 - 2?"
  expect final text contains "1"
'''

LINES_AGENT = '''
import json, sys
for raw in sys.stdin:
    line = json.loads(raw)
    print(json.dumps({"type": "reply", "content": "5" if "+" in line["content"] else "nope"}), flush=True)
'''


def test_evl_agent_cmd_runs_each_case_in_a_process(pytester: pytest.Pytester) -> None:
    pytester.makefile(".evl", calc=SUITE)
    pytester.makepyfile(lines_agent=LINES_AGENT)
    command = f"{shlex.quote(sys.executable)} lines_agent.py"
    result = pytester.runpytest_subprocess("calc.evl", f"--evl-agent-cmd={command}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*subtracts*"])


def test_evl_agent_url_unreachable_is_an_errored_case_not_a_crash(pytester: pytest.Pytester) -> None:
    pytester.makefile(".evl", calc=SUITE)
    result = pytester.runpytest_subprocess("calc.evl", "--evl-agent-url=http://127.0.0.1:9/agent")
    result.assert_outcomes(errors=2)  # an error of the run, as `evaldsl run` says it
    result.stdout.fnmatch_lines(["*cannot reach http://127.0.0.1:9/agent*"])


def test_a_bad_evl_agent_url_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".evl", calc=SUITE)
    result = pytester.runpytest_subprocess("calc.evl", "--evl-agent-url=ftp://x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--evl-agent-url ftp://x: 'ftp://x' is not an http:// or https:// URL*"])
