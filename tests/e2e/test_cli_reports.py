"""The report commands end to end: run --junit-xml/--markdown/--upload as subprocesses; compare, rescore
and upload through `main()`, as the console script calls it (they import no agent, so a subprocess adds
nothing but start-up time).

Servers are real, on 127.0.0.1, started by the tests (tests/_receiver.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import xmlschema
from _receiver import Reply, receiver
from _records import outcomes

from evaldsl import ScriptedAgent, run_suite
from evaldsl.cli import main
from evaldsl.compile._loading import compile_file

XSD = Path(__file__).parent.parent / "data" / "junit.xsd"
TOKEN = "e2e-t0ken-never-shown"

AGENT = '''
import os, time
from evaldsl import RunArtifacts

def agent(prompt):
    if prompt == "block":
        open("blocking", "w").close()
        time.sleep(600)
    return RunArtifacts(final_text=prompt)
'''

SUITE = '''
suite "Demo"

case "passes"
  prompt "hello world"
  expect final text contains "hello"

case "fails"
  prompt "goodbye"
  expect final text contains "hello"
'''


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "e2e_agent.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    (tmp_path / "demo.evl").write_text(textwrap.dedent(SUITE).lstrip(), encoding="utf-8")
    return tmp_path


def evaldsl(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and k != "EVALDSL_UPLOAD_TOKEN"}
    return subprocess.run([sys.executable, "-m", "evaldsl", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**clean, "NO_COLOR": "1", **(env or {})})


RUN = ("run", "demo.evl", "--agent", "e2e_agent:agent", "--json", "r.json")


def test_run_writes_junit_and_markdown(work: Path) -> None:
    proc = evaldsl(work, *RUN, "--junit-xml", "ci/junit.xml", "--markdown", "ci/summary.md")
    assert proc.returncode == 1, proc.stderr  # one case fails: the outputs do not change that
    xmlschema.validate(str(work / "ci" / "junit.xml"), str(XSD))
    xml = (work / "ci" / "junit.xml").read_text()
    assert 'name="Demo.fails" classname="demo.evl"' in xml and "<failure" in xml
    md = (work / "ci" / "summary.md").read_text()
    assert md.startswith("### evaldsl: 1 failed, 1 passed (agent)")
    assert "| Demo | 1 | 1 | 0 | 0 | 50.0% | 0.50 |" in md
    assert "JUnit XML written to ci/junit.xml" in proc.stderr


def test_an_output_path_that_is_a_directory_is_refused_before_running(work: Path) -> None:
    (work / "taken").mkdir()
    proc = evaldsl(work, *RUN, "--junit-xml", "taken")
    assert proc.returncode == 4 and "--junit-xml taken: is a directory" in proc.stderr
    assert not (work / "r.json").exists()


def test_run_uploads_the_finished_record(work: Path) -> None:
    with receiver(Reply(201)) as server:
        proc = evaldsl(work, *RUN, "--upload", server.url, env={"EVALDSL_UPLOAD_TOKEN": TOKEN})
    assert proc.returncode == 1, proc.stderr
    [got] = server.received
    assert got.headers["authorization"] == f"Bearer {TOKEN}" and len(got.headers["idempotency-key"]) == 64
    assert json.loads(got.body) == json.loads((work / "r.json").read_text())
    assert f"record uploaded to {server.url} (HTTP 201)" in proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr


def test_a_failing_server_is_a_warning_and_changes_nothing(work: Path) -> None:
    (work / "demo.evl").write_text('case "passes"\n  prompt "hello"\n  expect final text is "hello"\n')
    with receiver(Reply(500, body=f"token {TOKEN} rejected")) as server:
        proc = evaldsl(work, *RUN, "--upload", server.url, env={"EVALDSL_UPLOAD_TOKEN": TOKEN})
    assert proc.returncode == 0, proc.stderr  # the run passed; the upload failing does not fail it
    assert len(server.received) == 4  # retried
    assert "warning: upload to" in proc.stderr and "HTTP 500" in proc.stderr
    assert "the local record is unchanged" in proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr
    assert json.loads((work / "r.json").read_text())["summary"]["passed"] == 1


def test_ctrl_c_writes_junit_and_markdown_of_the_finished_cases_and_uploads_nothing(work: Path) -> None:
    (work / "long.evl").write_text('case "first"\n  prompt "one"\n  expect final text is "one"\n\n'
                                   'case "blocks"\n  prompt "block"\n  expect final text is "block"\n')
    clean = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    with receiver() as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "evaldsl", "run", "long.evl", "--agent", "e2e_agent:agent", "-j", "1",
             "--junit-xml", "junit.xml", "--markdown", "summary.md", "--upload", server.url],
            cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**clean, "NO_COLOR": "1"})
        deadline = time.monotonic() + 60
        while not (work / "blocking").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert (work / "blocking").exists(), proc.communicate()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2, err
        assert server.received == []
    xmlschema.validate(str(work / "junit.xml"), str(XSD))
    xml = (work / "junit.xml").read_text()
    assert '.first" classname="long.evl"' in xml and 'tests="1"' in xml and "blocks" not in xml
    assert "**Incomplete run**" in (work / "summary.md").read_text()


# ---- the record commands, in process (no agent to import): main() as the console script calls it ----


def cli(
    work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    monkeypatch.chdir(work)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
                 "EVALDSL_UPLOAD_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "argv", ["evaldsl", *args])
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def stored_run(work: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """What `evaldsl run demo.evl --agent e2e_agent:agent --json r.json` leaves, made with the library."""
    monkeypatch.chdir(work)
    report = run_suite(ScriptedAgent({"hello world": "hello world", "goodbye": "goodbye"}),
                       compile_file("demo.evl"), concurrency=1)
    assert report.meta.suites == ["demo.evl"]
    (work / "r.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return work / "r.json"


def test_upload_command_sends_a_stored_record_and_reads_it_only(work, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    record = work / "a.json"
    record.write_text(outcomes("pf").model_dump_json(indent=2))
    before = record.read_bytes()
    with receiver(Reply(200)) as server:
        code, _, err = cli(work, monkeypatch, capsys, "upload", "a.json", server.url)
    assert code == 0, err
    assert json.loads(server.received[0].body) == json.loads(before)
    assert record.read_bytes() == before


def test_upload_command_to_a_slow_server_times_out(work, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    (work / "a.json").write_text(outcomes("p").model_dump_json())
    with receiver(Reply(200, delay=2.0)) as server:
        code, _, err = cli(work, monkeypatch, capsys, "upload", "a.json", server.url, "--timeout", "0.2",
                           "--attempts", "1")
    assert code == 1 and "timed out" in err and "warning" in err


def test_compare_command(work, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    (work / "a.json").write_text(outcomes("pppfffffffffff", agent="old").model_dump_json())
    (work / "b.json").write_text(outcomes("fppppppppppfff", agent="new").model_dump_json())
    code, out, _ = cli(work, monkeypatch, capsys, "compare", "a.json", "b.json")
    assert code == 0
    assert "verdict: B is better than A (p < 0.05)" in out
    assert "exact McNemar p = 0.0391" in out and "REGRESSED (1)" in out
    code, out, err = cli(work, monkeypatch, capsys, "compare", "a.json", "b.json", "--json", "--fail-on-regression")
    assert code == 1 and "1 case(s) regressed" in err
    data = json.loads(out)
    assert data["mcnemar"] == {"regressed": 1, "fixed": 8, "p_value": 0.0390625}
    assert data["bootstrap"]["resamples"] == 10_000
    assert cli(work, monkeypatch, capsys, "compare", "b.json", "b.json", "--fail-on-regression")[0] == 0


def test_compare_an_unreadable_record_is_a_usage_error(work, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    (work / "a.json").write_text("{not json")
    code, _, err = cli(work, monkeypatch, capsys, "compare", "a.json", "missing.json")
    assert code == 4 and "a.json is not an evaldsl run record" in err


def test_rescore_writes_a_new_record_and_never_touches_the_old(work, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    before = stored_run(work, monkeypatch).read_bytes()
    (work / "demo.evl").write_text(SUITE.replace('prompt "goodbye"\n  expect final text contains "hello"',
                                                 'prompt "goodbye"\n  expect final text contains "bye"')
                                   .replace('prompt "hello world"', 'prompt "hi world"'))
    code, out, err = cli(work, monkeypatch, capsys, "rescore", "r.json")
    assert code == 0, out + err
    assert (work / "r.json").read_bytes() == before
    new = json.loads((work / "r.rescored.json").read_text())
    assert [c["name"] for c in new["cases"]] == ["fails"] and new["cases"][0]["status"] == "passed"
    assert new["meta"]["command"] == "evaldsl rescore r.json"
    assert "stale: demo.evl::passes (the prompt changed); not rescored" in err
    assert "1 passed" in out


def test_rescore_calls_the_judge_it_is_given_and_says_so(work, monkeypatch, capsys, openai_server) -> None:  # type: ignore[no-untyped-def]
    from servers._script import always, text

    before = stored_run(work, monkeypatch).read_bytes()
    (work / "demo.evl").write_text(SUITE + '  expect judge "says goodbye politely" at least 0.8\n')
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    openai_server.reply = always(text('{"score": 0.9, "reasoning": "a polite farewell"}'))
    code, out, err = cli(work, monkeypatch, capsys, "rescore", "r.json", "--judge", "openai:grader",
                         "--judge-base-url", openai_server.base_url, "--no-cache")
    assert code == 1, out + err  # "fails" still fails its `contains "hello"`; the judge passed it
    [request] = openai_server.requests  # the judge only: the stored answers are not asked for again
    assert request.json["model"] == "grader" and "goodbye" in json.dumps(request.json["messages"])
    assert "1 judge expectation(s) called the judge openai:grader" in err
    new = json.loads((work / "r.rescored.json").read_text())
    assert new["meta"]["judge"]["model"] == "grader"
    [judged] = [e for e in new["cases"][1]["runs"][0]["expectations"] if e["label"].startswith("judge")]
    assert judged["passed"] and "a polite farewell" in judged["detail"]
    assert (work / "r.json").read_bytes() == before

    code, _, err = cli(work, monkeypatch, capsys, "rescore", "r.json", "-o", "nojudge.json")
    assert code == 1 and "1 judge expectation(s) could not be evaluated" in err and "--judge" in err
    code, _, err = cli(work, monkeypatch, capsys, "rescore", "r.json", "--judge-template", "t.j2")
    assert code == 4 and "--judge-template applies to a judge (--judge)" in err
    code, _, err = cli(work, monkeypatch, capsys, "rescore", "r.json", "--judge", "nonsense")
    assert code == 4 and "Traceback" not in err


def test_rescore_refuses_to_overwrite_the_record_and_names_missing_suites(work, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    before = stored_run(work, monkeypatch).read_bytes()
    code, _, err = cli(work, monkeypatch, capsys, "rescore", "r.json", "-o", "./r.json")
    assert code == 4 and "never overwritten" in err
    (work / "demo.evl").unlink()
    code, _, err = cli(work, monkeypatch, capsys, "rescore", "r.json")
    assert code == 4 and "not found: demo.evl" in err
    assert (work / "r.json").read_bytes() == before


def test_rescore_of_a_suite_that_does_not_compile(work, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    stored_run(work, monkeypatch)
    (work / "demo.evl").write_text('case "x"\n  prompt "p"\n  expect final txt is "a"\n')
    code, _, err = cli(work, monkeypatch, capsys, "rescore", "r.json")
    assert code == 4 and "do not compile" in err and "Traceback" not in err


def test_rescore_when_every_case_is_stale(work, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    stored_run(work, monkeypatch)
    (work / "other.evl").write_text('case "x"\n  prompt "p"\n  expect no error\n')
    code, _, err = cli(work, monkeypatch, capsys, "rescore", "r.json", "other.evl", "-o", "out/new.json")
    assert code == 5 and "rescored 0 case(s)" in err and "1 case(s) of the suites are not in the record" in err
    assert json.loads((work / "out" / "new.json").read_text())["cases"] == []
