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
    result.assert_outcomes(passed=1, failed=1, errors=1, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines([
        "*case 'fails' at calc.evl:6: failed*",
        "*calc.evl:9: expect final number is 4*",
        "*last number 3 is not 4*",
        "FAILED calc.evl::fails - expect final number is 4: last number 3 is not 4",
        "ERROR calc.evl::boom - error: RuntimeError: kaboom",  # as `evaldsl run` says it
    ])
    assert result.ret == 1


def test_keyword_marker_and_exitfirst(project: pytest.Pytester) -> None:
    project.runpytest("--evl-agent", "my_agent:agent", "-k", "adds").assert_outcomes(passed=1)
    project.runpytest("--evl-agent", "my_agent:agent", "-m", "flaky").assert_outcomes(failed=1)
    project.runpytest("--evl-agent", "my_agent:agent", "-x").assert_outcomes(passed=1, failed=1)


def test_last_failed_reruns_only_failures(project: pytest.Pytester) -> None:
    project.runpytest("--evl-agent", "my_agent:agent", "-p", "cacheprovider")
    rerun = project.runpytest("--evl-agent", "my_agent:agent", "-p", "cacheprovider", "--lf")
    rerun.assert_outcomes(failed=1, errors=1)
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


def test_a_project_with_evl_files_runs_its_own_tests_with_plain_pytest(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_ordinary="def test_one():\n    assert 1 + 1 == 2\n\ndef test_two():\n    pass\n")
    pytester.makefile(".evl", calc=SUITE, broken='case "a"\n  promt "p"\n')  # not even valid
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.OK
    assert ".evl" not in result.stdout.str() + result.stderr.str()


def test_an_evl_agent_fixture_opts_in_its_own_directory_only(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_ordinary="def test_one():\n    pass\n")
    pytester.makefile(".evl", other='case "elsewhere"\n  prompt "p"\n  expect no error\n')
    evals = pytester.mkdir("evals")
    (evals / "conftest.py").write_text(
        "import pytest\nfrom evaldsl import RunArtifacts\n\n"
        "@pytest.fixture(scope='session')\ndef evl_agent():\n"
        "    return lambda prompt: RunArtifacts(final_text='4')\n")
    (evals / "s.evl").write_text('case "a"\n  prompt "p"\n  expect final number is 4\n')
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*evals/s.evl::a PASSED*"])
    assert "elsewhere" not in result.stdout.str()


@pytest.mark.parametrize("ini", ["evl_agent = my_agent:agent", "evl = true\naddopts = --evl-agent my_agent:agent"])
def test_the_ini_file_can_ask_for_evl_files(project: pytest.Pytester, ini: str) -> None:
    project.makeini(f"[pytest]\n{ini}\n")
    project.runpytest().assert_outcomes(passed=1, failed=1, errors=1, skipped=1, xfailed=1)


def test_the_command_line_wins_over_the_ini_file(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nevl_harness = nosuch:harness\n")
    project.runpytest("--evl-agent", "my_agent:agent", "-k", "adds").assert_outcomes(passed=1)


@pytest.mark.parametrize(("args", "ini"), [(["--evl"], ""), (["s.evl"], ""), ([], "evl = true")],
                         ids=["--evl", "file-named", "ini"])
def test_asking_for_evl_files_without_an_agent_is_one_usage_error(pytester: pytest.Pytester,
                                                                   args: list[str], ini: str) -> None:
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makefile(".evl", s='case "a"\n  prompt "p"\n  expect final number is 4\n'
                      'case "b"\n  xfail\n  prompt "p"\n  expect final number is 4\n')
    result = pytester.runpytest(*args)
    result.stderr.fnmatch_lines(["*no agent for .evl cases: pass --evl-agent module:attr*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes()  # nothing ran, nothing counted as xfailed


@pytest.mark.parametrize(("spec", "says"), [
    ("my_agent:missing", "--evl-agent my_agent:missing: module 'my_agent' has no attribute 'missing'"),
    ("nosuchmodule:agent", "--evl-agent nosuchmodule:agent: cannot import 'nosuchmodule'*"),
    ("my_agent:NUMBER", "--evl-agent my_agent:NUMBER: int object is not an agent: an agent is an object*"),
])
def test_a_bad_agent_is_one_usage_error_before_anything_runs(project: pytest.Pytester, spec: str,
                                                             says: str) -> None:
    (project.path / "my_agent.py").write_text(AGENT + "\nNUMBER = 42\n")
    result = project.runpytest("--evl-agent", spec)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: evaldsl: {says}"])
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "xfail" not in output and "collected" not in output


def test_a_bad_harness_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--evl-harness", "my_agent:agent")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: evaldsl: --evl-harness my_agent:agent: * is not a harness*"])


def test_a_model_without_a_provider_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--evl-model", "gpt-4o-mini")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --evl-model/--evl-judge: *openai*anthropic*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    both = project.runpytest("--evl-model", "m", "--evl-agent", "my_agent:agent")
    both.stderr.fnmatch_lines(["ERROR: evaldsl: give one of --evl-agent, --evl-model, not several"])


def test_help_lists_the_options(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    text = " ".join(result.stdout.str().split())  # pytest wraps help to the terminal's width
    assert "--evl collect .evl files" in text
    assert "--evl-model=PROVIDER:MODEL run .evl cases against this model" in text
    assert "evl_model (string): the model .evl cases run against" in text


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
    pytester.makepyfile(my_agent=AGENT)
    result = pytester.runpytest("--evl-agent", "my_agent:agent")
    result.stdout.fnmatch_lines(["error?E100?: unexpected `promt`", "*bad.evl:2:3*"])
    assert result.ret != 0
    result.assert_outcomes(errors=1)


def _outside_project(pytester: pytest.Pytester) -> None:
    """suites/s.evl reads a `use` file and an examples file from the folder above it."""
    pytester.makepyfile(my_agent=AGENT)
    (pytester.path / "outside.evl").write_text("tool calculator\n")
    (pytester.path / "rows.csv").write_text("x\n4\n")
    (pytester.path / "suites").mkdir()
    (pytester.path / "suites" / "s.evl").write_text(
        'use "../outside.evl"\ncase "adds $x"\n  prompt "2+2"\n  examples from "../rows.csv"\n'
        '  expect final number is $x\n')


def test_evl_root_refuses_paths_outside_it(pytester: pytest.Pytester) -> None:
    _outside_project(pytester)
    pytester.runpytest("--evl-agent", "my_agent:agent", "suites").assert_outcomes(passed=1)  # no root: allowed
    refused = pytester.runpytest("--evl-agent", "my_agent:agent", "--evl-root", "suites", "suites")
    refused.assert_outcomes(errors=1)
    shown = refused.stdout.str()
    assert "E230" in shown and "outside.evl is outside the root" in shown and "rows.csv is outside the root" in shown
    assert "Traceback" not in shown
    pytester.makeini("[pytest]\nevl_root = suites\n")  # the ini's folder is read from the rootdir
    from_ini = pytester.runpytest("--evl-agent", "my_agent:agent", "suites")
    from_ini.assert_outcomes(errors=1)
    assert "outside the root" in from_ini.stdout.str()
    widened = pytester.runpytest("--evl-agent", "my_agent:agent", "--evl-root", ".", "suites")  # the option wins
    widened.assert_outcomes(passed=1)


def test_an_async_agent_keeping_a_loop_bound_client_across_items_passes_them_all(pytester: pytest.Pytester) -> None:
    # a module-level client bound to the loop of its first use, as the OpenAI SDK's and LangGraph's are
    pytester.makepyfile(loop_agent='''
import asyncio
from evaldsl import RunArtifacts

class Client:
    def __init__(self):
        self.loop = None

    async def ask(self, prompt):
        loop = asyncio.get_running_loop()
        if self.loop is None:
            self.loop = loop
        if self.loop is not loop or self.loop.is_closed():
            raise RuntimeError("Event loop is closed")
        await asyncio.sleep(0)
        return "4"

CLIENT = Client()

async def agent(prompt):
    return RunArtifacts(final_text=await CLIENT.ask(prompt))
''')
    cases = "".join(f'case "c{i}"\n  prompt "p{i}"\n  expect final number is 4\n' for i in range(4))
    pytester.makefile(".evl", s=cases)
    result = pytester.runpytest("--evl-agent", "loop_agent:agent", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


TALK_AGENT = '''
from evaldsl import RunArtifacts

def agent(message, ctx):
    return RunArtifacts(final_text=f"turn {ctx.turn} of {len(ctx.messages)} message(s): {message}")

def prompt_only(prompt):
    return RunArtifacts(final_text="hi")
'''

TALK = '''case "talks"
  user "hello"
    expect final text contains "turn 1 of 1"
  user "again"
    expect final text contains "turn 2 of 3"
    expect final text contains "never"
case "simulated"
  simulated user "You want to say hello."
  expect no error
'''


def test_conversation_cases_run_as_items_and_name_their_turn(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(talk_agent=TALK_AGENT)
    pytester.makefile(".evl", talk=TALK.split('case "simulated"')[0])
    result = pytester.runpytest("--evl-agent", "talk_agent:agent")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(['*talk.evl:6, turn 2 "again": expect final text contains "never"*'])


def test_a_conversation_the_agent_cannot_play_is_a_usage_error_before_any_case(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(talk_agent=TALK_AGENT)
    pytester.makefile(".evl", talk=TALK)
    result = pytester.runpytest("--evl-agent", "talk_agent:prompt_only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*case 'talks' is a conversation, but the agent takes a single prompt*"])
    result = pytester.runpytest("--evl-agent", "talk_agent:agent")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*case 'simulated' has a `simulated user`*--evl-user-model*"])
