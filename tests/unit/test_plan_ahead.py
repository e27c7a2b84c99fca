"""Suites compiled ahead in a forked child (`plan/_ahead.py`): the same suites, the same errors, and the
run's own compile whenever it would not pay, is not safe, or the child fails.

A fork needs a process with one thread, which a pytest worker is not: each check runs in a fresh
interpreter and prints what it found as JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITE = '''suite "ahead"

tool search "Search the web"
  param query: string "what to search for"

case "weather"
  prompt "weather in Paris?"
  expect called search with <query: contains "paris">

case "chat"
  prompt "hello"
  expect no tool calls
'''
BROKEN = 'case "x"\n  prompt "hi"\n  expect final text contains\n'

PRELUDE = '''
import json, os, sys, threading
from pathlib import Path
from evaldsl.plan import _ahead
from evaldsl.plan._request import ModelOptions, RunRequest
from evaldsl.compile._loading import compile_files
from evaldsl.syntax._diagnostics import EvlError
from evaldsl.run._shard import suite_version

files = [Path(p) for p in sys.argv[1:]]

def request(**kw):
    return RunRequest(tuple(map(str, files)), suite_cache=False, **kw)

def described(suites):
    cases = [c for s in suites for c in s.cases]
    return {"names": [c.name for c in cases], "labels": [[e.label for e in c.expectations] for c in cases],
            "version": suite_version(cases)}

def own():
    try:
        return ["suites", described(compile_files(files))]
    except EvlError as exc:
        return ["error", exc.render()]

def ahead_of(req, model="openai:m"):
    with _ahead.allowed():
        return _ahead.CompileAhead.start(files, req, model)

def started(req, model="openai:m"):
    ahead = ahead_of(req, model)
    if ahead is not None:
        ahead.close()
    return ahead is not None

def taken(ahead):
    got = ahead.take()
    if got is None:
        return None
    if got[0] == "error":
        return ["error", EvlError(*got[1]).render()]
    return ["suites", described(got[1])]
'''


def _run(code: str, *files: Path, env: dict[str, str] | None = None) -> Any:
    """The JSON the snippet prints last, run in a fresh interpreter (one thread) beside the files."""
    environment = {k: v for k, v in os.environ.items() if k != "EVALDSL_COMPILE_AHEAD"}
    environment.update(PYTHONPATH=str(ROOT), **(env or {}))
    done = subprocess.run([sys.executable, "-c", PRELUDE + code, *map(str, files)], capture_output=True,
                          text=True, env=environment, timeout=120, cwd=files[0].parent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "a.evl").write_text(SUITE)
    return tmp_path / "a.evl"


def test_the_child_gives_the_suites_the_run_would_compile(suite: Path) -> None:
    out = _run("print(json.dumps([taken(ahead_of(request())), own()]))", suite)
    assert out[0] is not None and out[0] == out[1]
    assert out[0][1]["names"] == ["weather", "chat"]


def test_the_child_gives_the_errors_the_run_would_print(tmp_path: Path) -> None:
    (tmp_path / "bad.evl").write_text(BROKEN)
    out = _run("print(json.dumps([taken(ahead_of(request())), own()]))", tmp_path / "bad.evl")
    assert out[0] == out[1] and out[0][0] == "error" and "E100" in out[0][1]


@pytest.mark.parametrize("case", ["not allowed", "a thread", "a harness", "an agent run", "switched off",
                                  "too large", "the offline demo"])
def test_no_child_where_it_would_not_pay_or_is_not_safe(suite: Path, case: str) -> None:
    code = {
        "not allowed": "print(json.dumps(_ahead.CompileAhead.start(files, request(), 'openai:m') is None))",
        "a thread": ("stop = threading.Event(); threading.Thread(target=stop.wait).start()\n"
                     "print(json.dumps(not started(request()))); stop.set()"),
        "a harness": "print(json.dumps(not started(request(harness='h:h'))))",
        "an agent run": "print(json.dumps(not started(request(agent='m:a'), model=None)))",
        "switched off": "print(json.dumps(not started(request())))",
        "too large": "_ahead.MAX_BYTES = 10\nprint(json.dumps(not started(request())))",
        "the offline demo": ("print(json.dumps(not started(request(agent='m:a', models=ModelOptions("
                             "user_model='demo:customer')), None)))"),
    }[case]
    env = {"EVALDSL_COMPILE_AHEAD": "off"} if case == "switched off" else None
    assert _run(code, suite, env=env) is True


def test_a_judge_or_a_simulated_user_is_a_reason_too(suite: Path) -> None:
    code = ("print(json.dumps([started(request(agent='m:a', models=ModelOptions(judge='openai:j')), None),"
            " started(request(agent='m:a', models=ModelOptions(user_model='openai:u')), None)]))")
    assert _run(code, suite) == [True, True]


def test_a_child_that_fails_gives_nothing_and_the_run_compiles_itself(suite: Path) -> None:
    """The pickler refusing the suites in the child: no result; `load_suites` compiles in the process."""
    code = '''
from evaldsl.compile import _pickling
def refuse(obj):
    raise _pickling.StoreRefused("no")
_pickling.dumps = refuse
print(json.dumps(taken(ahead_of(request()))))
'''
    assert _run(code, suite) is None
    code = '''
from evaldsl.compile import _pickling
from evaldsl.plan import _inputs
def refuse(obj):
    raise _pickling.StoreRefused("no")
_pickling.dumps = refuse
subject = type("Subject", (), {"kind": "model", "predicates": None})()
req = request()
print(json.dumps(described(_inputs.load_suites(files, subject, req, ahead_of(req)))))
'''
    assert _run(code, suite)["names"] == ["weather", "chat"]


def test_a_child_not_taken_is_stopped_and_reaped(suite: Path) -> None:
    code = '''
ahead = ahead_of(request())
pid = ahead._pid
ahead.close()
try:
    os.waitpid(pid, 0)
    reaped = False
except ChildProcessError:
    reaped = True
print(json.dumps(reaped))
'''
    assert _run(code, suite) is True
