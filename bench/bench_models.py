"""Model runs against a local OpenAI-compatible server that answers in 50 ms: evaldsl beside its peers.

The server runs as its own process (``--serve``), so its CPU is not the
client's. Three measurements (issue 6):

- in-process: 1,000 single-turn chats at 50 in flight through
  ``make_backend("openai:bench")``, per transport (``aiohttp``, the default;
  plain ``httpx`` for comparison; ``bare``, an aiohttp session with no
  evaldsl, the floor of a library loop); wall, and CPU per request of the
  client process. Ideal: 1.0 s.
- whole process: ``evaldsl run`` of 1,000 (and 10,000) generated
  single-turn tool-selection cases (``mode single-turn``, one declared tool,
  ``expect called get_weather with <city: "Paris">``) with ``--model
  openai:bench --base-url ... --no-cache -j 50``; wall, CPU, peak RSS of the
  process, and the marginal CPU per case between the two sizes.
  Targets: <= 1.3 s for 1,000, <= 0.5 ms CPU a case, < 100 MB, linear.
- peers on the same cases and server, where they install (never test or
  runtime dependencies: installed on demand under bench/.peers/, which git
  ignores; see _peers.py): promptfoo 0.123.1 (npm) at concurrency 50, ``--no-write``, cache
  off; inspect_ai 0.3.285 (its own venv) with the openai-api provider at 50
  connections.

    python bench/bench_models.py                 # everything that can run
    python bench/bench_models.py --no-peers      # evaldsl only
    python bench/bench_models.py --cases 1000 --big 0 --skip inprocess
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _models_common import HEADER, TOOL, line, measure, tail
from _peers import inspect_ai, promptfoo

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
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


# --- (d) against the practical limit (issue 28) ------------------------------------------------


def versus_bare(base_url: str, count: int, jobs: int, work: Path, rounds: int) -> None:
    """Whole processes, interleaved a round at a time: `bare_model_loop.py` (aiohttp, no evaldsl),
    `evaldsl run --model` compiling the suite, and the same run with its suite from the suite cache."""
    print(f"\n(d) whole processes against the practical limit: {count} requests, {jobs} in flight, "
          f"least of {rounds} rounds, interleaved")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    suite = write_suite(work, count)
    run = [sys.executable, "-m", "evaldsl", "run", str(suite), "--model", "openai:bench", "--base-url", base_url,
           "--no-cache", "-j", str(jobs), "-q", "--json", str(work / "record.json")]
    commands = {
        "bare aiohttp loop": [sys.executable, str(HERE / "bare_model_loop.py"), base_url, str(count), str(jobs)],
        "evaldsl run (compiling)": run + ["--no-suite-cache"],
        "evaldsl run (suite cache)": run,
    }
    measure(run, cwd=work, env=env)  # fills the suite cache
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            result = measure(command, cwd=work, env=env)
            if result["rc"]:
                print(f"  {name}: exit {result['rc']}\n{tail(result['output'])}")
            results[name].append(result)
    print("  " + HEADER)
    best = {name: {k: min(r[k] for r in rs) for k in ("wall", "cpu", "rss_mb")} for name, rs in results.items()}
    for name, result in best.items():
        print("  " + line(name, count, {**result, "rc": 0}))
    floor = best["bare aiohttp loop"]["wall"]
    for name in list(commands)[1:]:
        ratio = best[name]["wall"] / floor
        print(f"  {name} / bare: {ratio:.2f}x by wall (target <= 1.2: {'met' if ratio <= 1.2 else 'MISSED'})")


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
    parser.add_argument("--skip", default="",
                        help="comma list of: inprocess, whole, ratio, peers, promptfoo, inspect_ai")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of (d), the ratio to the bare loop")
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
            if "ratio" not in skip:
                versus_bare(server.base_url, args.cases, args.jobs, work, args.rounds)
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
