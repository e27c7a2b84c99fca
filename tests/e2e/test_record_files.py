"""A record file has one writer and is always a whole JSON record; only regular files are written.

Two runs given one ``--json`` file: the second is refused before it runs,
and the first's record stays valid. ``--json`` through a symbolic link writes
the link's target and keeps the link; a FIFO or a device is refused, never
replaced by a regular file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaldsl.cli import main
from evaldsl.report._lock import RecordBusy, RecordLock

SUITE = 'suite "S"\n\ncase "one"\n  prompt "hello"\n  expect no error\n'
SLOW_AGENT = '''import os, time
def agent(prompt):
    time.sleep(float(os.environ.get("DELAY", "0")))
    return {"final_text": "4"}
'''


@pytest.fixture(autouse=True)
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.evl").write_text(SUITE)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["run", "s.evl", "--agent", "evaldsl.demo:agent", "-q", *argv])
    out, err = capsys.readouterr()
    return code, out + err


def test_a_second_run_on_the_same_record_is_refused_and_the_first_stays_whole(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(SLOW_AGENT)
    command = [sys.executable, "-m", "evaldsl", "run", "s.evl", "--agent", "agent.py:agent", "--json", "r.json", "-q"]
    first = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "DELAY": "60"})
    try:
        lock = tmp_path / ".r.json.lock"
        deadline = time.monotonic() + 60
        while not lock.exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lock.exists(), first.communicate()
        second = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert second.returncode == 4
        assert "another evaldsl run is writing" in second.stderr and "r.json" in second.stderr
        assert "written" not in second.stdout + second.stderr
    finally:
        first.kill()
        first.wait()
    json.loads((tmp_path / "r.json").read_text())  # what the first left is a whole record
    # the kernel dropped the killed run's lock: the next run takes the file
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["meta"]["complete"] is True
    assert not lock.exists()


def test_the_lock_is_exclusive_and_released(tmp_path: Path) -> None:
    one, two = RecordLock(tmp_path / "r.json"), RecordLock(tmp_path / "r.json")
    one.acquire()
    with pytest.raises(RecordBusy, match="another evaldsl run is writing .*r.json"):
        two.acquire()
    one.release()
    two.acquire()
    two.release()
    assert not (tmp_path / ".r.json.lock").exists()


def test_json_through_a_symbolic_link_writes_the_target_and_keeps_the_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link.json").symlink_to(tmp_path / "real" / "r.json")
    code, out = run(capsys, "--json", "link.json", "--junit-xml", "link.json.xml")
    assert code == 0, out
    assert (tmp_path / "link.json").is_symlink()
    assert json.loads((tmp_path / "real" / "r.json").read_text())["summary"]["passed"] == 1


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_device_is_refused_not_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    if kind == "fifo":
        target = tmp_path / "r.json"
        os.mkfifo(target)
    else:
        target = Path("/dev/null")
    code, out = run(capsys, "--json", str(target))
    assert code == 4
    assert f"is a {'FIFO' if kind == 'fifo' else 'device'}, not a regular file" in out
    assert target.is_fifo() if kind == "fifo" else target.is_char_device()


def test_an_output_report_to_a_device_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "--junit-xml", "/dev/null")
    assert "/dev/null is a device, not a regular file" in out
    assert Path("/dev/null").is_char_device()
