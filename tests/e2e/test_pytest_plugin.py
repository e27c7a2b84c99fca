"""The pytest plugin, driven through pytester: items, failures, -k, -m, -x, --lf, --junitxml."""

from __future__ import annotations

import pytest

AGENT = '''
from evaldsl import RunArtifacts, ToolCall

def agent(prompt):
    if "fail" in prompt:
        return RunArtifacts(final_text="nope 3")
    if "boom" in prompt:
        raise RuntimeError("kaboom")
    return RunArtifacts(tool_calls=[ToolCall(name="calculator", args={"op": "add"})], final_text="4")
'''

SUITE = '''tags math
case "adds"
  prompt "2+2"
  expect called calculator with <op: add>
  expect final number is 4
case "fails"
  prompt "fail"
  tags flaky
  expect final number is 4
case "boom"
  prompt "boom"
  expect no error
case "skipped"
  skip "later"
  prompt "x"
  expect no error
case "xf"
  xfail "known"
  prompt "fail"
  expect final number is 4
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(my_agent=AGENT)
    pytester.makefile(".evl", calc=SUITE)
    return pytester


def test_cases_are_items_with_file_and_case_ids(project: pytest.Pytester) -> None:
    result = project.runpytest("--collect-only", "-q", "--evl-agent", "my_agent:agent")
    result.stdout.fnmatch_lines(["calc.evl::adds", "calc.evl::fails", "calc.evl::boom",
                                 "calc.evl::skipped", "calc.evl::xf"])


def test_outcomes_and_failure_details(project: pytest.Pytester) -> None:
    result = project.runpytest("--evl-agent", "my_agent:agent")
    result.assert_outcomes(passed=1, failed=2, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines([
        "*case 'fails' at calc.evl:6: failed*",
        "*calc.evl:9: expect final number is 4*",
        "*last number 3 is not 4*",
        "FAILED calc.evl::fails - expect final number is 4: last number 3 is not 4",
        "FAILED calc.evl::boom - error: RuntimeError: kaboom",
    ])
    assert result.ret == 1


def test_keyword_marker_and_exitfirst(project: pytest.Pytester) -> None:
    project.runpytest("--evl-agent", "my_agent:agent", "-k", "adds").assert_outcomes(passed=1)
    project.runpytest("--evl-agent", "my_agent:agent", "-m", "flaky").assert_outcomes(failed=1)
    project.runpytest("--evl-agent", "my_agent:agent", "-x").assert_outcomes(passed=1, failed=1)


def test_last_failed_reruns_only_failures(project: pytest.Pytester) -> None:
    project.runpytest("--evl-agent", "my_agent:agent", "-p", "cacheprovider")
    rerun = project.runpytest("--evl-agent", "my_agent:agent", "-p", "cacheprovider", "--lf")
    rerun.assert_outcomes(failed=2)
    rerun.stdout.fnmatch_lines(["*rerun previous 2 failures*"])


def test_junitxml_reports_each_case(project: pytest.Pytester) -> None:
    project.runpytest("--evl-agent", "my_agent:agent", "--junitxml=out.xml")
    xml = (project.path / "out.xml").read_text()
    assert xml.count("<testcase ") == 5
    assert 'name="fails"' in xml and "last number 3 is not 4" in xml


def test_agent_from_a_conftest_fixture(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        "import pytest\nfrom evaldsl import RunArtifacts\n\n"
        "@pytest.fixture(scope='session')\ndef evl_agent():\n"
        "    return lambda prompt: RunArtifacts(final_text='4')\n")
    pytester.makefile(".evl", s='case "a"\n  prompt "p"\n  expect final number is 4\n')
    pytester.runpytest().assert_outcomes(passed=1)


def test_no_agent_is_a_clear_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".evl", s='case "a"\n  prompt "p"\n  expect final number is 4\n'
                      'case "b"\n  xfail\n  prompt "p"\n  expect final number is 4\n')
    result = pytester.runpytest()
    result.stderr.fnmatch_lines(["*no agent for .evl cases: pass --evl-agent module:attr*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_an_object_that_is_not_an_agent_fails_its_items_with_a_message(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("import pytest\n\n@pytest.fixture(scope='session')\ndef evl_agent():\n    return 42\n")
    pytester.makefile(".evl", s='case "a"\n  prompt "p"\n  expect no error\n')
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*TypeError*"])
    assert "INTERNALERROR" not in result.stdout.str()


def test_a_class_agent_is_made_once_per_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(counting=(
        "from evaldsl import RunArtifacts\nmade = []\n\n"
        "class Counting:\n    def __init__(self):\n        made.append(self)\n"
        "    def run(self, prompt):\n        return RunArtifacts(final_text=str(len(made)))\n"))
    pytester.makefile(".evl", s='case "a"\n  prompt "p"\n  expect final number is 1\n'
                      'case "b"\n  prompt "q"\n  expect final number is 1\n')
    pytester.runpytest_subprocess("--evl-agent", "counting:Counting").assert_outcomes(passed=2)


def test_malformed_file_is_a_collection_error_with_the_diagnostic(pytester: pytest.Pytester) -> None:
    pytester.makefile(".evl", bad='case "a"\n  promt "p"\n')
    result = pytester.runpytest("--evl-agent", "x:y")
    result.stdout.fnmatch_lines(["error?E100?: unexpected `promt`", "*bad.evl:2:3*"])
    assert result.ret != 0
    result.assert_outcomes(errors=1)
