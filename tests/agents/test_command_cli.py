"""`evaldsl run --agent-cmd`: whole runs in a subprocess, the record read back."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SUITE = '''
suite "Arithmetic"

tool calculator "Does arithmetic"
  param op: string "add or sub"
  otherwise returns "5"

case "adds"
  prompt "what is 2 + 3?"
  expect called calculator with <op: "add">
  expect final text contains "5"

case "hangs"
  timeout 4s
  prompt "hang"
  expect final text contains "5"
'''

AGENT = '''
import json, os, subprocess, sys, time
for raw in sys.stdin:
    line = json.loads(raw)
    if line["content"] == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        with open(os.environ["PIDS_FILE"], "w") as fh:
            fh.write(f"{os.getpid()} {child.pid}")
        time.sleep(300)
    assert line["tools"][0]["function"]["name"] == "calculator"
    print(json.dumps({"type": "tool_call", "name": "calculator", "args": {"op": "add", "a": 2, "b": 3},
                      "result": "5"}))
    print(json.dumps({"type": "reply", "content": "2 + 3 = 5", "tokens": 42}), flush=True)
'''


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_run_with_a_line_form_command_agent(tmp_path: Path) -> None:
    (tmp_path / "arith.evl").write_text(textwrap.dedent(SUITE), encoding="utf-8")
    (tmp_path / "agent.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    pids = tmp_path / "pids"
    proc = subprocess.run(
        [sys.executable, "-m", "evaldsl", "run", "arith.evl", "--json", "out.json",
         "--agent-cmd", f"{shlex.quote(sys.executable)} agent.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "NO_COLOR": "1", "PIDS_FILE": str(pids)},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # "hangs" is an error (timeout)
    record = json.loads((tmp_path / "out.json").read_text())
    by_name = {case["name"]: case for case in record["cases"]}
    adds = by_name["adds"]["runs"][0]
    assert by_name["adds"]["status"] == "passed"
    assert adds["artifacts"]["tool_calls"][0]["args"] == {"op": "add", "a": 2, "b": 3}
    assert adds["artifacts"]["tokens"] == 42
    assert by_name["hangs"]["status"] == "error"
    assert not any(_alive(int(pid)) for pid in pids.read_text().split())


def test_the_proxy_and_the_tool_server_stop_with_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    from urllib.parse import urlsplit

    from evaldsl.cli import main

    (tmp_path / "s.evl").write_text('case "one"\n  prompt "hi"\n  expect final text contains "ok"\n')
    (tmp_path / "agent.py").write_text(textwrap.dedent('''
        import json, os, sys
        with open("urls.json", "w") as fh:
            json.dump([os.environ["OPENAI_BASE_URL"], os.environ["EVALDSL_TOOLS_URL"]], fh)
        for raw in sys.stdin:
            print(json.dumps({"type": "reply", "content": "ok"}), flush=True)
    '''))
    monkeypatch.chdir(tmp_path)  # the agent writes urls.json where evaldsl was started
    assert main(["run", "s.evl", "--agent-cmd", f"{shlex.quote(sys.executable)} agent.py", "-q"]) == 0
    for url in json.loads((tmp_path / "urls.json").read_text()):
        parts = urlsplit(url)
        with socket.socket() as sock:  # nothing listens there any more: the run closed it
            assert sock.connect_ex((parts.hostname, parts.port)) != 0, url
