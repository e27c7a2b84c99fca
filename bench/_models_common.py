"""What the model-run benchmark shares with its peers: the tool, and measuring a command."""

from __future__ import annotations

import os
import resource
import subprocess
import time
from pathlib import Path
from typing import Any

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def measure(command: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Wall, CPU (the whole process tree) and peak RSS (the main process) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=False)
    output = b""
    assert process.stdout is not None
    for chunk in iter(lambda: process.stdout.read(65536), b""):  # type: ignore[union-attr]
        output += chunk
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "rss_mb": usage.ru_maxrss / 1024, "rc": process.returncode, "output": output}


def line(name: str, cases: int, result: dict[str, Any], note: str = "") -> str:
    per_case = result["cpu"] / cases * 1000
    return (
        f"{name:<28} {cases:>6} {result['wall']:>8.2f} {result['cpu']:>8.2f} {per_case:>9.3f} "
        f"{result['rss_mb']:>8.0f}  {note}"
    )


HEADER = f"{'':<28} {'cases':>6} {'wall s':>8} {'CPU s':>8} {'CPU ms/c':>9} {'RSS MB':>8}"


def tail(output: bytes, lines: int = 12) -> str:
    return "\n".join(output.decode(errors="replace").rstrip().splitlines()[-lines:])
