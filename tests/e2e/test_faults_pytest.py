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


def test_a_cancelled_agent_is_a_failing_item_not_an_internal_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(cancel_agent=AGENT)
    pytester.makefile(".evl", cancel=SUITE)
    result = pytester.runpytest("--evl-agent", "cancel_agent:agent")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*CancelledError*the agent raised CancelledError*"])
    assert "assert result is not None" not in result.stdout.str()
    assert "INTERNALERROR" not in result.stdout.str()
