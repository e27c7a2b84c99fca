"""evaldsl is typed for its users: mypy checks a user's program against the installed package.

The package ships `py.typed` (PEP 561); without it mypy skips evaldsl and
every name a user imports is `Any`. One program that uses the public API
as documented must pass `mypy --strict`; one with typical mistakes must
fail, each mistake at its line. mypy runs in a subprocess, outside the
source tree (so it finds evaldsl where a user's mypy would, installed),
with its cache in a temporary directory shared by both runs.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

GOOD = '''
"""A user's program, written against evaldsl's public API."""
from pathlib import Path

from evaldsl import (CompiledSuite, EvalReport, EvlError, RunArtifacts, Suite, ToolCall, compile, load,
                     parse, run_suite)

SOURCE = 'case "adds"\\n  prompt "2+2"\\n  expect called calculator\\n  expect final number is 4\\n'


def agent(instruction: str) -> RunArtifacts:
    call = ToolCall(name="calculator", args={"op": "add", "a": 2, "b": 2}, result="4")
    return RunArtifacts(tool_calls=[call], final_text=f"{instruction} = 4", tokens=12)


def main(folder: Path) -> int:
    tree: Suite = parse(SOURCE, "inline.evl")
    suite: CompiledSuite = compile(SOURCE)
    suites: list[CompiledSuite] = load(folder)
    try:
        compile("case")
    except EvlError as exc:
        codes: list[str] = [d.code for d in exc.diagnostics]
        print(codes)
    report: EvalReport = run_suite(agent, [suite, *suites], concurrency=2)
    failed: list[str] = [case.id for case in report.failures()]
    print(len(tree.cases), failed, report.summary.passed + report.summary.failed)
    return 0 if report.ok else 1
'''

BAD = '''
from evaldsl import RunArtifacts, ToolCall, compile, run_suite, run_suit

artifacts = RunArtifacts(final_text=4)
call = ToolCall(nam="calculator")
report = run_suite(lambda instruction: artifacts, compile(42))
passed: str = report.summary.passed
'''


Mypy = Callable[[str, str], "subprocess.CompletedProcess[str]"]


@pytest.fixture(scope="module")
def mypy(tmp_path_factory: pytest.TempPathFactory) -> Mypy:
    work = tmp_path_factory.mktemp("typing")
    (work / "mypy.ini").write_text("[mypy]\nstrict = True\n", encoding="utf-8")

    def check(name: str, program: str) -> subprocess.CompletedProcess[str]:
        (work / name).write_text(program.lstrip(), encoding="utf-8")
        return subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", ".mypy_cache",
             "--no-error-summary", "--hide-error-context", name],
            cwd=work, capture_output=True, text=True, timeout=300,
        )

    return check


def test_the_package_is_marked_typed() -> None:
    import evaldsl

    assert (Path(evaldsl.__file__).parent / "py.typed").is_file()


def test_a_program_using_the_public_api_type_checks(mypy: Mypy) -> None:
    result = mypy("good.py", GOOD)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mistakes_against_the_api_are_type_errors(mypy: Mypy) -> None:
    result = mypy("bad.py", BAD)
    assert result.returncode == 1, result.stdout + result.stderr
    errors = [line.split(": error: ")[0] + ": " + line.rsplit("[", 1)[-1]
              for line in result.stdout.splitlines() if ": error: " in line]
    assert errors == [
        "bad.py:1: attr-defined]",  # run_suit: a misspelt name is not silently Any
        "bad.py:3: arg-type]",  # final_text must be a str
        "bad.py:4: call-arg]",  # ToolCall has no field `nam`
        "bad.py:5: arg-type]",  # compile takes text or a parsed Suite
        "bad.py:6: assignment]",  # summary.passed is an int
    ]
