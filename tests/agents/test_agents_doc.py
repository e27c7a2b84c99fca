"""docs/agents.md's examples, run: its files written out, each `$ evaldsl run` line run and passing."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.unit._docblocks import fenced_blocks

DOC = Path(__file__).parents[2] / "docs" / "agents.md"
BLOCKS = fenced_blocks(DOC)
COMMANDS = [b for b in BLOCKS if b.kind == "console"]


def _argv(line: str, port: int) -> list[str]:
    words = shlex.split(line.removeprefix("$ ").replace("8765", str(port)))
    assert words[0] == "evaldsl"
    words = [sys.executable, "-m", "evaldsl", *words[1:]]
    return [w.replace("python ", f"{shlex.quote(sys.executable)} ", 1) if w.startswith("python ") else w
            for w in words]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def doc_dir(tmp_path: Path) -> Path:
    for block in BLOCKS:
        if block.file:
            (tmp_path / block.file).write_text(block.text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("block", COMMANDS, ids=[b.id for b in COMMANDS])
def test_command(block: object, doc_dir: Path) -> None:
    port = _free_port()
    server = None
    if "--agent-url" in block.text:  # type: ignore[attr-defined]
        server = subprocess.Popen([sys.executable, "http_agent.py"], cwd=doc_dir,
                                  env={**os.environ, "PORT": str(port)}, stderr=subprocess.PIPE)
        for _ in range(1000):  # until it listens
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.01)
    try:
        proc = subprocess.run(_argv(block.text.strip(), port), cwd=doc_dir,  # type: ignore[attr-defined]
                              capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    finally:
        if server is not None:
            server.kill()
            server.wait()
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_way_in_has_a_section() -> None:
    text = DOC.read_text(encoding="utf-8")
    for heading in ("## 1. Python function", "## 2. Framework object", "## 3. Command", "## 4. HTTP"):
        assert heading in text
    assert {b.file for b in BLOCKS if b.file} >= {"calc.evl", "py_agent.py", "lines_agent.py", "http_agent.py"}
