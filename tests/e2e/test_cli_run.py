"""`evaldsl run` end to end: real subprocesses, a tiny agent module written to tmp_path.

Covers every exit code (0, 1, 2, 3, 4, 5), the record on disk (incremental,
atomic, unique under --out, resumable after Ctrl-C), --lf, -x, -k, the
harness path, and faults: bad agents, wrong return types, hung agents.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

AGENT = '''
import os, time
from evaldsl import RunArtifacts

HERE = os.path.dirname(os.path.abspath(__file__))

def agent(prompt):
    with open(os.path.join(HERE, "prompts.log"), "a") as fh:
        fh.write(prompt + "\\n")
    if prompt == "block" and os.environ.get("E2E_BLOCK"):
        open(os.path.join(HERE, "blocking"), "w").close()
        time.sleep(600)
    if prompt == "hang":
        time.sleep(600)
    if prompt == "boom":
        raise RuntimeError("kaput")
    if prompt == "int":
        return 42
    return RunArtifacts(final_text=prompt, tokens=len(prompt))

def other(prompt):
    return agent(prompt)

not_an_agent = 42

class Shop:
    predicates = {"stock_is": lambda artifacts, world, item, count: world[item] == count}

    def setup(self, value):
        return dict(value)

    def run(self, instruction, world):
        world["apples"] -= 1
        return RunArtifacts(final_text="sold")
'''

BASIC = '''
suite "Demo"

case "passes"
  prompt "hello world"
  expect final text contains "hello"

case "fails"
  prompt "goodbye"
  expect final text contains "hello"
'''


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


@pytest.fixture
def work(tmp_path: Path) -> Path:
    write(tmp_path / "e2e_agent.py", AGENT)
    write(tmp_path / "basic.evl", BASIC)
    return tmp_path


def evaldsl(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evaldsl", "run", *args], cwd=cwd, capture_output=True, text=True,
        timeout=120, env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


def started_blocking(work: Path, *extra: str) -> subprocess.Popen[str]:
    """`evaldsl run long.evl` with the blocking agent, once its "block" case is in the agent's hands."""
    proc = popen(work, "long.evl", *AGENT_SPEC, "-j", "1", *extra, env={"E2E_BLOCK": "1"})
    deadline = time.monotonic() + 60
    while not (work / "blocking").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert (work / "blocking").exists(), proc.communicate()
    return proc


def popen(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evaldsl", "run", *args], cwd=cwd, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


def record(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def prompts(work: Path) -> list[str]:
    log = work / "prompts.log"
    return log.read_text().splitlines() if log.exists() else []


AGENT_SPEC = ("--agent", "e2e_agent:agent")


# ---- exit codes 0 and 1, the report and the record -----------------------------------


def test_passing_run_exits_0_and_writes_the_record(work: Path) -> None:
    write(work / "ok.evl", 'case "passes"\n  prompt "hello"\n  expect final text is "hello"\n')
    proc = evaldsl(work, "ok.evl", *AGENT_SPEC, "--json", "out/r.json")
    assert proc.returncode == 0, proc.stderr
    assert "1 passed" in proc.stdout and "PASSED  ok.evl::passes" in proc.stderr
    data = record(work / "out" / "r.json")
    assert data["schema_version"] == 3 and data["meta"]["complete"] is True
    assert data["meta"]["agent"] == "agent" and data["meta"]["backend"] == "agent"
    assert data["meta"]["command"].startswith("evaldsl run ok.evl --agent e2e_agent:agent")
    assert data["summary"]["tokens_total"] == 5
    assert record(work / ".evaldsl" / "last.json") == data
    assert not list(work.rglob("*.journal")) and not list(work.rglob("*.tmp"))  # folded in, removed


def test_a_run_with_no_record_file_keeps_its_record_in_last_json(work: Path) -> None:
    proc = evaldsl(work, "basic.evl", *AGENT_SPEC, "-q")
    assert proc.returncode == 1 and "record written" not in proc.stderr, proc.stderr
    data = record(work / ".evaldsl" / "last.json")
    assert [c["name"] for c in data["cases"]] == ["passes", "fails"] and data["meta"]["complete"] is True
    assert not list(work.rglob("*.journal")) and not list(work.rglob("*.tmp"))
    shown = subprocess.run([sys.executable, "-m", "evaldsl", "report", ".evaldsl/last.json", "-o", "r.html"],
                           cwd=work, capture_output=True, text=True)
    assert shown.returncode == 0 and (work / "r.html").exists(), shown.stderr


def test_a_failure_exits_1_and_is_spelled_out(work: Path) -> None:
    proc = evaldsl(work, "basic.evl", *AGENT_SPEC)
    assert proc.returncode == 1
    assert "FAILED basic.evl:7 Demo::fails" in proc.stdout
    assert 'x expect final text contains "hello"  (basic.evl:9)' in proc.stdout
    assert "1 failed, 1 passed" in proc.stdout.splitlines()[-1]


def test_skip_xfail_and_xpass_do_not_fail_the_run(work: Path) -> None:
    write(work / "marks.evl", '''
        case "known bug"
          xfail "not fixed yet"
          prompt "goodbye"
          expect final text contains "hello"

        case "fixed already"
          xfail
          prompt "hello"
          expect final text contains "hello"

        case "later"
          skip "too slow"
          prompt "hello"
          expect final text contains "hello"
        ''')
    proc = evaldsl(work, "marks.evl", *AGENT_SPEC, "--json", "r.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [c["status"] for c in record(work / "r.json")["cases"]] == ["xfailed", "xpassed", "skipped"]
    assert sorted(prompts(work)) == ["goodbye", "hello"]  # the skipped case never ran


def test_agent_faults_are_errors_of_their_case_and_a_hung_agent_times_out(work: Path) -> None:
    write(work / "faults.evl", '''
        timeout 300ms

        case "raises"
          prompt "boom"
          expect no error

        case "wrong type"
          prompt "int"
          expect no error

        case "hangs"
          prompt "hang"
          expect no error

        case "still runs"
          prompt "fine"
          expect final text is "fine"
        ''')
    proc = evaldsl(work, "faults.evl", *AGENT_SPEC, "--json", "r.json")
    assert proc.returncode == 1
    cases = record(work / "r.json")["cases"]
    assert [c["status"] for c in cases] == ["error", "error", "error", "passed"]
    errors = [c["runs"][0]["error"] for c in cases[:3]]
    assert errors[0]["type"] == "RuntimeError" and errors[0]["message"] == "kaput"
    assert "in agent" in errors[0]["traceback"]
    assert "returned int, not RunArtifacts" in errors[1]["message"]
    assert errors[2]["type"] == "TimeoutError" and "0.3s" in errors[2]["message"]
    assert "error: RuntimeError: kaput" in proc.stdout


def test_repeat_and_pass_rate_reach_the_record(work: Path) -> None:
    write(work / "rep.evl", '''
        case "steady"
          repeat 3
          pass rate at least 0.5
          prompt "hello"
          expect final text is "hello"
        ''')
    proc = evaldsl(work, "rep.evl", *AGENT_SPEC, "--json", "r.json")
    assert proc.returncode == 0
    case = record(work / "r.json")["cases"][0]
    assert (case["pass_rate"], case["repeat"], len(case["runs"]), case["required_pass_rate"]) == (1.0, 3, 3, 0.5)
    assert case["wilson_95"]["low"] == pytest.approx(0.4385, abs=1e-3)


# ---- exit code 4: usage and compile errors -----------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_xyz:agent", "cannot import 'no_such_module_xyz'"),
        ("e2e_agent:missing", "has no attribute 'missing'"),
        ("e2e_agent:not_an_agent", "int object is not an agent"),
        ("e2e_agent", "not of the form module:attr"),
        ("e2e_agent:Shop", "must accept (instruction) (it takes a world: pass it as a harness"),
    ],
)
def test_a_bad_agent_is_one_clear_line_and_exit_4(work: Path, spec: str, message: str) -> None:
    proc = evaldsl(work, "basic.evl", "--agent", spec)
    assert proc.returncode == 4
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"evaldsl: --agent {spec}: ")
    assert message in lines[0] and "Traceback" not in proc.stderr


def test_usage_errors_exit_4(work: Path) -> None:
    assert evaldsl(work, "basic.evl").returncode == 4  # no agent
    bad_k = evaldsl(work, "basic.evl", *AGENT_SPEC, "-k", "passes and")
    assert bad_k.returncode == 4 and "expected a word" in bad_k.stderr
    assert evaldsl(work, "basic.evl", *AGENT_SPEC, "-j", "0").returncode == 4
    missing = evaldsl(work, "basic.evl", *AGENT_SPEC, "--resume", "nope.json")
    assert missing.returncode == 4 and "cannot read record nope.json" in missing.stderr


def test_a_suite_that_does_not_compile_exits_4_with_the_framed_error(work: Path) -> None:
    write(work / "bad.evl", 'case "typo"\n  prompt "x"\n  expect caled search\n')
    proc = evaldsl(work, "bad.evl", *AGENT_SPEC)
    assert proc.returncode == 4
    assert "error[" in proc.stderr and "bad.evl:3" in proc.stderr and "Traceback" not in proc.stderr
    assert prompts(work) == []


# ---- exit code 5, selection, --lf and -x ---------------------------------------------------


def test_nothing_selected_exits_5(work: Path) -> None:
    proc = evaldsl(work, "basic.evl", *AGENT_SPEC, "-k", "nomatch")
    assert proc.returncode == 5 and "no cases selected" in proc.stderr
    assert evaldsl(work, "basic.evl", *AGENT_SPEC, "--tag", "nothing").returncode == 5


def test_k_selects_and_lf_reruns_only_the_failures(work: Path) -> None:
    assert evaldsl(work, "basic.evl", *AGENT_SPEC, "-k", "pass").returncode == 0
    assert prompts(work) == ["hello world"]
    assert evaldsl(work, "basic.evl", *AGENT_SPEC).returncode == 1
    (work / "prompts.log").unlink()
    proc = evaldsl(work, "basic.evl", *AGENT_SPEC, "--lf", "--json", "r.json")
    assert proc.returncode == 1
    assert prompts(work) == ["goodbye"]
    assert record(work / "r.json")["meta"]["selection"] == {"last_failed": True}


def test_a_file_named_twice_runs_once(work: Path) -> None:
    (work / "d").mkdir()
    write(work / "d" / "x.evl", BASIC)
    proc = evaldsl(work, "d", "d/x.evl", "./d/x.evl", *AGENT_SPEC, "--json", "r.json")
    assert proc.returncode == 1, proc.stderr
    assert sorted(prompts(work)) == ["goodbye", "hello world"]
    data = record(work / "r.json")
    assert [c["name"] for c in data["cases"]] == ["passes", "fails"]
    assert data["meta"]["suites"] == [os.path.join("d", "x.evl")] and data["summary"]["runs"] == 2


def lastfailed(work: Path) -> list[str]:
    return json.loads((work / ".evaldsl" / "lastfailed.json").read_text(encoding="utf-8"))


def test_lf_remembers_failures_until_their_cases_run_again(work: Path) -> None:
    three = BASIC + '\ncase "breaks"\n  prompt "boom"\n  expect no error\n'
    write(work / "three.evl", three)
    assert evaldsl(work, "three.evl", *AGENT_SPEC).returncode == 1
    assert lastfailed(work) == ["three.evl::fails", "three.evl::breaks"]
    assert evaldsl(work, "three.evl", *AGENT_SPEC, "-k", "passes").returncode == 0
    assert lastfailed(work) == ["three.evl::fails", "three.evl::breaks"]  # not run: kept
    (work / "prompts.log").unlink()
    proc = evaldsl(work, "three.evl", *AGENT_SPEC, "--lf")
    assert proc.returncode == 1 and "--lf" not in proc.stderr
    assert sorted(prompts(work)) == ["boom", "goodbye"]

    write(work / "three.evl", three.replace('contains "hello"\n\ncase "breaks"', 'contains "bye"\n\ncase "breaks"'))
    assert evaldsl(work, "three.evl", *AGENT_SPEC, "--lf").returncode == 1
    assert lastfailed(work) == ["three.evl::breaks"]  # "fails" passed this time: it leaves
    write(work / "three.evl", (work / "three.evl").read_text().replace('prompt "boom"', 'skip\n  prompt "boom"'))
    assert evaldsl(work, "three.evl", *AGENT_SPEC, "--lf").returncode == 0
    assert lastfailed(work) == []  # skipped: it leaves too
    (work / "prompts.log").unlink()
    proc = evaldsl(work, "three.evl", *AGENT_SPEC, "--lf")
    assert proc.returncode == 0 and sorted(prompts(work)) == ["goodbye", "hello world"]
    assert "evaldsl: --lf: no case failed last time; running every selected case" in proc.stderr


def test_lf_with_no_selected_failure_runs_every_selected_case(work: Path) -> None:
    assert "no failures recorded" in evaldsl(work, "basic.evl", *AGENT_SPEC, "--lf").stderr
    assert lastfailed(work) == ["basic.evl::fails"]
    (work / "prompts.log").unlink()
    proc = evaldsl(work, "basic.evl", *AGENT_SPEC, "--lf", "-k", "passes", "--json", "r.json")
    assert proc.returncode == 0 and prompts(work) == ["hello world"]
    assert "none of the 1 case(s) that failed last time is selected" in proc.stderr
    assert record(work / "r.json")["meta"]["selection"] == {"keyword": "passes"}
    (work / ".evaldsl" / "lastfailed.json").write_text("{}")
    broken = evaldsl(work, "basic.evl", *AGENT_SPEC, "--lf")
    assert broken.returncode == 4 and "is not a list of case ids" in broken.stderr


def test_exitfirst_stops_and_marks_the_record_incomplete(work: Path) -> None:
    write(work / "three.evl", BASIC + '\ncase "after"\n  prompt "hello again"\n  expect final text contains "hello"\n')
    proc = evaldsl(work, "three.evl", *AGENT_SPEC, "-x", "-j", "1", "--json", "r.json")
    assert proc.returncode == 1 and "stopped after the first failure (-x)" in proc.stdout
    data = record(work / "r.json")
    assert [c["name"] for c in data["cases"]] == ["passes", "fails"] and data["meta"]["complete"] is False
    assert "hello again" not in prompts(work)


# ---- records on disk: --out, Ctrl-C, --resume ------------------------------------------------


def test_two_runs_writing_the_same_out_dir_never_clobber_each_other(work: Path) -> None:
    procs = [popen(work, "basic.evl", *AGENT_SPEC, "--out", "results", "--model-name", "my model") for _ in range(3)]
    for proc in procs:
        proc.communicate(timeout=120)
        assert proc.returncode == 1
    files = sorted((work / "results").iterdir())
    assert len(files) == 3 and all(f.name.startswith("my_model_") and f.suffix == ".json" for f in files)
    for f in files:
        data = record(f)
        assert data["meta"]["complete"] is True and data["meta"]["agent"] == "my model"
        assert len(data["cases"]) == 2


def test_ctrl_c_keeps_finished_cases_and_resume_finishes_the_record(work: Path) -> None:
    write(work / "long.evl", '''
        case "first"
          prompt "one"
          expect final text is "one"

        case "second"
          prompt "two"
          expect final text is "two"

        case "blocks"
          prompt "block"
          expect final text is "block"

        case "last"
          prompt "three"
          expect final text is "three"
        ''')
    proc = started_blocking(work, "--json", "rec.json")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert ("interrupted: 2 of 4 cases finished and kept in rec.json; finish it with: evaldsl run long.evl "
            "--agent e2e_agent:agent -j 1 --resume rec.json") in out
    data = record(work / "rec.json")
    assert [c["name"] for c in data["cases"]] == ["first", "second"] and data["meta"]["complete"] is False
    assert not [p for p in work.iterdir() if p.name.endswith(".tmp")]

    (work / "prompts.log").unlink()
    resumed = evaldsl(work, "long.evl", *AGENT_SPEC, "--resume", "rec.json")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert sorted(prompts(work)) == ["block", "three"]
    data = record(work / "rec.json")
    assert [c["name"] for c in data["cases"]] == ["first", "second", "blocks", "last"]
    assert data["meta"]["complete"] is True and data["summary"]["passed"] == 4


def test_two_ctrl_c_a_few_milliseconds_apart_still_leave_the_record_whole(work: Path) -> None:
    write(work / "long.evl", '''
        case "first"
          prompt "one"
          expect final text is "one"

        case "blocks"
          prompt "block"
          expect final text is "block"
        ''')
    proc = started_blocking(work, "--json", "rec.json")
    proc.send_signal(signal.SIGINT)
    time.sleep(0.005)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    data = record(work / "rec.json")
    assert [c["name"] for c in data["cases"]] == ["first"] and data["meta"]["complete"] is False
    assert not (work / "rec.json.journal").exists()  # folded into the record, nothing left half done


def test_resume_refuses_another_agent(work: Path) -> None:
    assert evaldsl(work, "basic.evl", *AGENT_SPEC, "-k", "passes", "--json", "rec.json").returncode == 0
    for other in (("--agent", "e2e_agent:other"), (*AGENT_SPEC, "--model-name", "gpt")):
        proc = evaldsl(work, "basic.evl", *other, "--resume", "rec.json")
        assert proc.returncode == 4 and len(proc.stderr.splitlines()) == 1, proc.stderr
        name = other[-1].split(":")[-1]
        assert proc.stderr.startswith(f"evaldsl: --resume rec.json: the record is of agent 'agent', not '{name}'")
    assert len(record(work / "rec.json")["cases"]) == 1 and prompts(work) == ["hello world"]
    same = evaldsl(work, "basic.evl", "--agent", "e2e_agent:other", "--model-name", "agent", "--resume", "rec.json")
    assert same.returncode == 1 and len(record(work / "rec.json")["cases"]) == 2


# ---- records that cannot be written -----------------------------------------------------


def test_a_record_path_that_cannot_be_written_is_a_usage_error_before_any_run(work: Path) -> None:
    (work / "somedir").mkdir()
    (work / "afile").write_text("x")
    for option, target, message in [
        ("--json", "somedir", "evaldsl: --json somedir: is a directory"),
        ("--out", "afile", "evaldsl: --out afile: is a file"),
        ("--json", "afile/r.json", "evaldsl: cannot write the record to afile/r.json: "),
    ]:
        proc = evaldsl(work, "basic.evl", *AGENT_SPEC, option, target)
        assert proc.returncode == 4, proc.stderr
        assert proc.stderr.splitlines() == [proc.stderr.splitlines()[0]] and proc.stderr.startswith(message)
        assert "Traceback" not in proc.stderr and prompts(work) == []


def test_a_record_that_fails_during_the_run_is_reported_and_the_run_goes_on(
    work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    from evaldsl import cli
    from evaldsl.report import _journal

    real_append, real_temp, writes = _journal.Journal.append, _journal.write_temp, []

    def full(*_: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    def append(journal: Any, line: bytes) -> int:  # the first case's line goes in; then the disk is full
        writes.append(line)
        if len(writes) > 1:
            full()
        return real_append(journal, line)

    def temp(folder: Path, name: str, fill: Any) -> str:  # the start's record is written; the end's is not
        if writes and name.startswith("r.json"):
            full()
        return real_temp(folder, name, fill)

    monkeypatch.chdir(work)
    monkeypatch.setattr(_journal.Journal, "append", append)
    monkeypatch.setattr(_journal, "write_temp", temp)
    code = cli.main(["run", "basic.evl", *AGENT_SPEC, "--json", "r.json", "-j", "1", "-q"])
    out, err = capsys.readouterr()
    assert code == 3 and "1 failed, 1 passed" in out and "Traceback" not in err
    assert "evaldsl: cannot write the record to r.json: No space left on device; the report above" in err
    assert all(line.startswith("evaldsl: cannot write the record to r.json") for line in err.splitlines())
    assert len(err.splitlines()) == 2  # once when it failed (the run went on), once at the end
    assert len(writes) == 2 and record(work / ".evaldsl" / "last.json")["summary"]["total"] == 2
    assert [c["name"] for c in record(work / ".evaldsl" / "last.json")["cases"]] == ["passes", "fails"]
    # what reached the disk is resumable: the record of the start, and the journal's first line
    resumed = evaldsl(work, "basic.evl", *AGENT_SPEC, "--resume", "r.json", "-q")
    assert "1 case(s) done, 1 to run" in resumed.stderr and len(record(work / "r.json")["cases"]) == 2


# ---- the harness path ------------------------------------------------------------------------


def test_harness_with_a_custom_predicate(work: Path) -> None:
    write(work / "shop.evl", '''
        case "sells one apple"
          prompt "sell an apple"
          setup <apples: 3>
          expect stock_is(item: apples, count: 2)
        ''')
    proc = evaldsl(work, "shop.evl", "--harness", "e2e_agent:Shop", "--json", "r.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert record(work / "r.json")["meta"]["backend"] == "harness"
    write(work / "unknown.evl", 'case "x"\n  prompt "p"\n  expect stock_iz(item: apples, count: 2)\n')
    proc = evaldsl(work, "unknown.evl", "--harness", "e2e_agent:Shop")
    assert proc.returncode == 4 and "stock_iz" in proc.stderr


def test_the_cli_default_concurrency_is_the_runners() -> None:
    from evaldsl.cli import _run as _cli_run
    from evaldsl.run import _scheduler

    assert _cli_run.DEFAULT_CONCURRENCY == _scheduler.DEFAULT_CONCURRENCY


# ---- exit code 3 (in process: an internal failure cannot be provoked from outside) -----------


def test_an_internal_error_exits_3_with_its_traceback(
    work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from evaldsl import cli
    from evaldsl.report import _terminal

    def broken(*args: Any, **kwargs: Any) -> str:
        raise RuntimeError("a bug in the report")

    monkeypatch.chdir(work)
    monkeypatch.setattr(_terminal.Digest, "write", broken)  # what the run calls to print its summary
    code = cli.main(["run", "basic.evl", *AGENT_SPEC, "-q"])
    err = capsys.readouterr().err
    assert code == 3
    assert "internal error" in err and "RuntimeError: a bug in the report" in err


# ---- hostile answers: the run and its record survive (issues 10, 11) ------------------

HOSTILE_AGENT = '''
import asyncio, datetime
from evaldsl import RunArtifacts, ToolCall

class Bad(Exception):
    def __str__(self):
        raise RuntimeError("no")

async def agent(prompt):
    if prompt == "circular":
        t = [{"role": "user", "content": "hi"}]
        t.append(t)
        return RunArtifacts(final_text="ok", transcript=t)
    if prompt == "datetime":
        return RunArtifacts(final_text="ok", tool_calls=[ToolCall(name="t", args={"when": datetime.date(2026, 1, 2)})])
    if prompt == "nan":
        return RunArtifacts(final_text="ok", tool_calls=[ToolCall(name="t", args={"x": float("nan")})])
    if prompt == "surrogate":
        return RunArtifacts(final_text="ok \\ud800")
    if prompt == "bad str":
        raise Bad()
    if prompt == "huge":
        raise ValueError("x" * 5_000_000)
    if prompt == "cancelled":
        raise asyncio.CancelledError
    if prompt == "backtrack":
        return RunArtifacts(final_text="a" * 40 + "!")
    return RunArtifacts(final_text="ok " + prompt)
'''


def test_hostile_answers_between_ordinary_cases_keep_the_run_and_every_case(work: Path) -> None:
    write(work / "hostile_agent.py", HOSTILE_AGENT)
    names = ["one", "circular", "datetime", "nan", "surrogate", "bad str", "huge", "cancelled", "two"]
    cases = "".join(f'case "{n}"\n  prompt "{n}"\n  timeout 2s\n  expect final text contains "ok"\n\n'
                    for n in names)
    cases += 'case "backtrack"\n  prompt "backtrack"\n  timeout 1s\n  expect final text matches /^(a+)+$/\n\n'
    cases += 'case "three"\n  prompt "three"\n  expect final text contains "ok"\n'
    write(work / "hostile.evl", cases)
    done = evaldsl(work, "hostile.evl", "--agent", "hostile_agent:agent", "-j", "1", "--json", "out.json")
    assert done.returncode == 1, done.stderr  # failures and errors, not a crash (3)
    data = record(work / "out.json")
    assert data["meta"]["complete"] is True
    status = {c["name"]: c["status"] for c in data["cases"]}
    assert list(status) == [*names, "backtrack", "three"]
    assert {n for n, s in status.items() if s == "passed"} == {"one", "two", "three", "circular", "datetime", "nan",
                                                               "surrogate"}
    assert {n for n, s in status.items() if s == "error"} == {"bad str", "huge", "cancelled", "backtrack"}
    assert data["summary"]["errors"] == 4
    nan_run = data["cases"][names.index("nan")]["runs"][0]
    assert nan_run["artifacts"]["tool_calls"][0]["args"] == {"x": "NaN"} and nan_run["warnings"]
    assert len(done.stdout) < 20_000  # the 5 MB message is cut on the terminal
    assert "more characters, in the record" in done.stdout and "recorded with changes" in done.stdout


INTERRUPTING_AGENT = '''
import asyncio
from evaldsl import RunArtifacts

async def agent(prompt):
    if prompt == "interrupt":
        await asyncio.sleep(0.05)
        raise KeyboardInterrupt  # Python's Ctrl-C, from the agent's own code
    if prompt == "slow":
        await asyncio.sleep(1)
    return RunArtifacts(final_text="ok")
'''


def test_an_agents_keyboard_interrupt_stops_the_run_as_ctrl_c_without_false_errors(work: Path) -> None:
    """The loop's shutdown cancels the runs in flight: that is a stop, not their agents' CancelledError."""
    write(work / "interrupting.py", INTERRUPTING_AGENT)
    names = ["fine", "interrupt", "slow", "slow", "slow"]
    write(work / "i.evl", "".join(f'case "{i} {n}"\n  prompt "{n}"\n  expect no error\n\n' for i, n in enumerate(names)))
    done = evaldsl(work, "i.evl", "--agent", "interrupting:agent", "-j", "3", "--json", "out.json")
    assert done.returncode == 2, done.stdout + done.stderr  # interrupted, as at Ctrl-C
    data = record(work / "out.json")
    assert data["meta"]["complete"] is False
    assert [(c["name"], c["status"]) for c in data["cases"]] == [("0 fine", "passed")]
    assert "CancelledError" not in done.stdout and "--resume out.json" in done.stdout + done.stderr


# ---- kill -9 at any moment: --resume finishes from whatever is on disk ----------------------------

KILLABLE = '''
import os, time
from evaldsl import RunArtifacts

HERE = os.path.dirname(os.path.abspath(__file__))

def agent(prompt):
    log = os.path.join(HERE, "prompts.log")
    calls = len(open(log).read().splitlines()) if os.path.exists(log) else 0
    with open(log, "a") as fh:
        fh.write(prompt + "\\n")
    if calls == int(os.environ.get("E2E_BLOCK_AT", "-1")):
        # The kill is to come once this run's earlier cases are in its journal (a case is written
        # there within moments of its agent returning, not before the next call begins).
        journal, deadline = os.path.join(HERE, "rec.json.journal"), time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(journal, "rb") as fh:
                if fh.read().count(b"\\n") >= 1 + calls:  # its header, then a line a case
                    break
            time.sleep(0.005)
        open(os.path.join(HERE, "blocking"), "w").close()
        time.sleep(600)
    return RunArtifacts(final_text=prompt)
'''

SIX = "".join(f'''
case "c{i}"
  prompt "p{i}"
  expect final text is "p{i}"
''' for i in range(6))


def _killed_after(work: Path, done: int, *args: str) -> None:
    """Start a run of six cases, one at a time, and kill -9 it while its agent blocks on case ``done``."""
    for leftover in ("blocking", "prompts.log"):
        (work / leftover).unlink(missing_ok=True)
    proc = popen(work, "six.evl", "--agent", "killable:agent", "-j", "1", "-q", *args,
                 env={"E2E_BLOCK_AT": str(done)})
    deadline = time.monotonic() + 60
    while not (work / "blocking").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert (work / "blocking").exists(), proc.communicate()
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def _resume_finishes_every_case_once(work: Path, *, ran_before: int) -> None:
    (work / "prompts.log").unlink(missing_ok=True)
    resumed = evaldsl(work, "six.evl", "--agent", "killable:agent", "--resume", "rec.json", "-q")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{ran_before} case(s) done, {6 - ran_before} to run" in resumed.stderr
    assert sorted(prompts(work)) == [f"p{i}" for i in range(6) if i >= ran_before]  # each missing case once
    data = record(work / "rec.json")
    assert [c["name"] for c in data["cases"]] == [f"c{i}" for i in range(6)]  # every case, exactly once
    assert data["meta"]["complete"] is True and data["summary"]["passed"] == 6
    assert not (work / "rec.json.journal").exists()


@pytest.mark.parametrize("done", [0, 1, 4])
def test_a_run_killed_after_some_cases_is_finished_by_resume(work: Path, done: int) -> None:
    write(work / "killable.py", KILLABLE)
    write(work / "six.evl", SIX)
    _killed_after(work, done, "--json", "rec.json")
    journal = work / "rec.json.journal"
    assert journal.read_bytes().count(b"\n") == 1 + done  # the header, then one line per finished case
    proc = subprocess.run([sys.executable, "-m", "evaldsl", "report", "rec.json"], cwd=work,
                          capture_output=True, text=True)
    assert proc.returncode == 4 and "rec.json is not finished: its journal rec.json.journal" in proc.stderr
    assert "--resume rec.json" in proc.stderr and "Traceback" not in proc.stderr
    _resume_finishes_every_case_once(work, ran_before=done)


def test_a_run_of_examples_rows_killed_midway_is_finished_by_resume(work: Path) -> None:
    """The same six cases as rows of an `examples from` file: what --resume has left to run is picked
    by key, the rows' cases made as they run (`run._select.picked`), each missing one run once."""
    write(work / "killable.py", KILLABLE)
    write(work / "six.jsonl", "".join(f'{{"i": {i}}}\n' for i in range(6)))
    write(work / "six.evl", 'case "c{{i}}"\n  prompt "p{{i}}"\n  expect final text is "p{{i}}"\n'
                            '  examples from "six.jsonl"\n')
    _killed_after(work, 2, "--json", "rec.json")
    _resume_finishes_every_case_once(work, ran_before=2)


def test_resume_after_a_kill_mid_resume_with_its_last_line_cut(work: Path) -> None:
    write(work / "killable.py", KILLABLE)
    write(work / "six.evl", SIX)
    _killed_after(work, 2, "--json", "rec.json")
    _killed_after(work, 1, "--resume", "rec.json")  # killed again while resuming: three cases done now
    assert [c["name"] for c in record(work / "rec.json")["cases"]] == ["c0", "c1"]  # the first journal, folded in
    journal = work / "rec.json.journal"
    lines = journal.read_bytes().rstrip(b"\0").split(b"\n")  # (a memory-mapped journal ends in zeros)
    assert len(lines) == 1 + 1 + 1 and lines[-1] == b""  # the header, c2's line, and the end of that line
    journal.write_bytes(lines[0] + b"\n" + lines[1][: len(lines[1]) // 2])  # as if killed while writing c2's line
    _resume_finishes_every_case_once(work, ran_before=2)


def test_resume_from_a_journal_alone(work: Path) -> None:
    write(work / "killable.py", KILLABLE)
    write(work / "six.evl", SIX)
    _killed_after(work, 3, "--json", "rec.json")
    (work / "rec.json").unlink()  # the journal's header has what a resume needs
    _resume_finishes_every_case_once(work, ran_before=3)


def test_a_journal_left_beside_a_finished_record_changes_nothing(work: Path) -> None:
    write(work / "killable.py", KILLABLE)
    write(work / "six.evl", SIX)
    _killed_after(work, 3, "--json", "rec.json")
    kept = (work / "rec.json.journal").read_bytes()
    (work / "prompts.log").unlink()
    assert evaldsl(work, "six.evl", "--agent", "killable:agent", "--resume", "rec.json", "-q").returncode == 0
    before = record(work / "rec.json")
    (work / "rec.json.journal").write_bytes(kept)  # as if killed between the record's rename and the removal
    _resume_finishes_every_case_once(work, ran_before=6)
    assert [c["runs"] for c in record(work / "rec.json")["cases"]] == [c["runs"] for c in before["cases"]]


def test_a_custom_predicate_that_never_returns_fails_its_run_and_the_record_completes(work: Path) -> None:
    (work / "hangs.py").write_text('''
import time

def forever(artifacts, world, **kwargs):
    time.sleep(3600)

def fine(artifacts, world, **kwargs):
    return True

class Harness:
    predicates = {"forever": forever, "fine": fine}

    def setup(self, value):
        return {}

    def run(self, prompt, world):
        return {"final_text": "done"}
''')
    write(work / "hang.evl", '''
        suite "Hang"
        timeout 1s

        case "hangs"
          prompt "a"
          expect forever()

        case "fine"
          prompt "b"
          expect fine()
        ''')
    proc = evaldsl(work, "hang.evl", "--harness", "hangs:Harness", "--json", "rec.json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = record(work / "rec.json")
    assert data["meta"]["complete"] is True
    status = {c["name"]: c["status"] for c in data["cases"]}
    assert status == {"hangs": "error", "fine": "passed"}
    error = data["cases"][0]["runs"][0]["error"]["message"]
    assert "custom predicate 'forever' did not return within 1s" in error
    assert data["cases"][0]["runs"][0]["error"]["kind"] == "predicate_timeout"


def test_exitfirst_reports_cases_in_flight_as_cancelled_and_resume_runs_them_again(work: Path) -> None:
    (work / "slow_agent.py").write_text('''
import asyncio

async def agent(prompt):
    if prompt != "fails":
        await asyncio.sleep(30 if prompt == "slow" and not __import__("os").environ.get("FAST") else 0)
    return {"final_text": prompt}
''')
    write(work / "x.evl", '''
        case "fails"
          prompt "fails"
          expect final text is "nope"

        case "slow"
          prompt "slow"
          expect final text is "slow"

        case "never"
          prompt "never"
          expect final text is "never"
        ''')
    proc = evaldsl(work, "x.evl", "--agent", "slow_agent:agent", "-x", "-j", "2", "--json", "r.json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = record(work / "r.json")
    assert data["meta"]["complete"] is False
    assert {c["name"]: c["status"] for c in data["cases"]} == {"fails": "failed", "slow": "error"}
    assert data["cases"][1]["runs"][0]["error"]["kind"] == "cancelled"
    resumed = evaldsl(work, "x.evl", "--agent", "slow_agent:agent", "--resume", "r.json", env={"FAST": "1"})
    assert "1 case(s) done, 2 to run" in resumed.stderr, resumed.stderr
    data = record(work / "r.json")
    assert {c["name"]: c["status"] for c in data["cases"]} == {"fails": "failed", "slow": "passed", "never": "passed"}


def test_ctrl_c_without_a_record_option_names_the_record_and_the_command_that_finishes_it(work: Path) -> None:
    write(work / "long.evl", '''
        case "first"
          prompt "one"
          expect final text is "one"

        case "blocks"
          prompt "block"
          expect final text is "block"

        case "last"
          prompt "three"
          expect final text is "three"
        ''')
    proc = started_blocking(work)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    hint = "interrupted: 1 of 3 cases finished and kept in .evaldsl/last.json; finish it with: "
    assert hint in out, out
    command = out[out.index(hint) + len(hint):].splitlines()[0]
    assert command == "evaldsl run long.evl --agent e2e_agent:agent -j 1 --resume .evaldsl/last.json"
    (work / "blocking").unlink()
    resumed = evaldsl(work, *shlex.split(command)[2:])  # the printed command, as printed
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    data = record(work / ".evaldsl" / "last.json")
    assert [c["name"] for c in data["cases"]] == ["first", "blocks", "last"] and data["meta"]["complete"] is True
