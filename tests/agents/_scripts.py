"""Small agent programs the bridge tests start: each a Python script, written to a file."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

ECHO_ARGS = """
import json, sys
print(json.dumps(sys.argv[1:]))
"""

CRASH = """
import sys
sys.stderr.write("loading...\\nTraceback: kaput at step 7\\n")
sys.exit(3)
"""

# The line form, done right: reports one call per turn, echoes what it was sent.
LINES = """
import json, os, sys
for turn, raw in enumerate(sys.stdin, 1):
    line = json.loads(raw)
    print(json.dumps({"type": "tool_call", "name": "lookup", "args": {"q": line["content"]}, "result": "ok"}))
    reply = {"pid": os.getpid(), "turn": line["turn"], "messages": line["messages"], "tools": line["tools"],
             "case": line["case"], "env_case": os.environ.get("EVALDSL_CASE"),
             "run_id": os.environ.get("EVALDSL_RUN_ID")}
    print(json.dumps({"type": "reply", "content": json.dumps(reply), "tokens": 10}), flush=True)
    sys.stderr.write(f"turn {turn} done\\n")
"""

GARBAGE = """
import sys
sys.stdin.readline()
print("Thinking... here is my answer", flush=True)
import time; time.sleep(60)
"""

ONE_REPLY_THEN_EXIT = """
import json, sys
sys.stdin.readline()
print(json.dumps({"type": "reply", "content": "first"}), flush=True)
sys.stderr.write("bye early\\n")
"""

ERROR_LINE = """
import json, sys
sys.stdin.readline()
print(json.dumps({"type": "error", "message": "quota exhausted"}), flush=True)
"""

# Starts a child that would run for minutes, notes both pids, then never answers.
HANG_WITH_CHILD = """
import os, subprocess, sys, time
sys.stdin.readline()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
with open(sys.argv[1] + ".tmp", "w") as fh:
    fh.write(f"{os.getpid()} {child.pid}")
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(300)
"""


def script(tmp_path: Path, name: str, body: str) -> list[str]:
    """The argv that runs ``body`` as a Python program."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return [sys.executable, str(path)]
