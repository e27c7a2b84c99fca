"""`evaldsl report` and `evaldsl run --html`: files in, one dashboard out, bad input in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaldsl.cli import main

SUITE = '''suite "Tiny"

case "answers"
  prompt "What is 17 + 25?"
  expect final number is 42
'''


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.evl").write_text(SUITE, encoding="utf-8")
    assert main(["run", "tiny.evl", "--agent", "evaldsl.demo:agent", "-q", "--json", "rec.json"]) == 0
    return tmp_path / "rec.json"


def _data(html: str) -> dict:
    start = html.index('<script type="application/json" id="evaldsl-data">') + len(
        '<script type="application/json" id="evaldsl-data">')
    return json.loads(html[start:html.index("</script>", start)])


def test_report_writes_one_dashboard_from_a_record(record: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(record), "-o", "out/report.html"]) == 0
    html = Path("out/report.html").read_text(encoding="utf-8")
    data = _data(html)
    assert [r["label"] for r in data["runs"]] == ["evaldsl-demo"]
    assert [c["name"] for c in data["cases"]] == ["answers"]
    assert "written to out/report.html" in capsys.readouterr().err


def test_a_directory_means_every_record_in_it(record: Path) -> None:
    folder = record.parent / "runs"
    folder.mkdir()
    for name in ("b.json", "a.json"):
        (folder / name).write_text(record.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["report", str(folder), "-o", "r.html"]) == 0
    assert [r["source"] for r in _data(Path("r.html").read_text(encoding="utf-8"))["runs"]] == ["a.json", "b.json"]


@pytest.mark.parametrize("content", ["not json", '{"schema_version": 1, "cases": [{"name": 3}]}'])
def test_a_bad_record_is_one_line_naming_the_file_and_exit_4(
    record: Path, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("bad.json").write_text(content, encoding="utf-8")
    assert main(["report", str(record), "bad.json", "-o", "r.html"]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json" in err and "Traceback" not in err
    assert not Path("r.html").exists()  # nothing written from a partial set of records


def test_missing_record_empty_directory_and_missing_output_are_usage_errors(
    record: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "missing.json", "-o", "r.html"]) == 4
    assert "missing.json" in capsys.readouterr().err
    Path("empty").mkdir()
    assert main(["report", "empty", "-o", "r.html"]) == 4
    assert "no *.json run records" in capsys.readouterr().err
    assert main(["report", str(record)]) == 4
    assert "needs -o FILE" in capsys.readouterr().err
    assert main(["report", str(record), "-o", "empty"]) == 4
    assert "is a directory" in capsys.readouterr().err


def test_run_html_writes_the_dashboard_of_the_run(record: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "tiny.evl", "--agent", "evaldsl.demo:agent", "-q", "--html", "run.html"]) == 0
    data = _data(Path("run.html").read_text(encoding="utf-8"))
    assert data["cases"][0]["cells"][0]["status"] == "passed"
    assert "dashboard written to run.html" in capsys.readouterr().err


def test_run_html_refuses_a_directory_before_running(record: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("adir").mkdir()
    assert main(["run", "tiny.evl", "--agent", "evaldsl.demo:agent", "-q", "--html", "adir"]) == 4
    assert "--html adir: is a directory" in capsys.readouterr().err


def test_the_commands_in_docs_reports_parse() -> None:
    import shlex

    from evaldsl.cli import build_parser

    text = (Path(__file__).resolve().parents[2] / "docs" / "reports.md").read_text(encoding="utf-8")
    block = text.split("## HTML dashboard", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if line.startswith("evaldsl ")]
    assert len(lines) == 4
    for line in lines:
        args = build_parser().parse_args(shlex.split(line)[1:])
        assert args.func is not None


def test_run_html_that_cannot_be_written_is_one_line_and_exit_3(
    record: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("afile").write_text("", encoding="utf-8")
    assert main(["run", "tiny.evl", "--agent", "evaldsl.demo:agent", "-q", "--json", "again.json",
                 "--html", "afile/run.html"]) == 3
    err = capsys.readouterr().err
    assert "cannot write the dashboard to afile/run.html" in err and "Traceback" not in err
    assert json.loads(Path("again.json").read_text(encoding="utf-8"))["summary"]["passed"] == 1  # the record is kept


BLOCKING_AGENT = '''
import time
from evaldsl import RunArtifacts

def agent(prompt):
    if prompt == "block":
        open("blocking", "w").close()
        time.sleep(600)
    return RunArtifacts(final_text=prompt)
'''


def test_ctrl_c_writes_the_dashboard_of_the_finished_cases(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "html_block_agent.py").write_text(BLOCKING_AGENT, encoding="utf-8")
    (tmp_path / "long.evl").write_text('case "first"\n  prompt "one"\n  expect final text is "one"\n\n'
                                       'case "blocks"\n  prompt "block"\n  expect final text is "block"\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "evaldsl", "run", "long.evl", "--agent", "html_block_agent:agent", "-j", "1",
         "--html", "run.html"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1"})
    deadline = time.monotonic() + 60
    while not (tmp_path / "blocking").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert (tmp_path / "blocking").exists(), proc.communicate()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    data = _data((tmp_path / "run.html").read_text(encoding="utf-8"))
    assert [c["name"] for c in data["cases"]] == ["first"]
    assert data["runs"][0]["complete"] is False
