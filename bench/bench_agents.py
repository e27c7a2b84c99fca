"""Command agents and the recording proxy: what evaldsl adds per run and per model call.

    .venv/bin/python bench/bench_agents.py [--runs 40] [--calls 400]

1. A line-form agent (a small Python script: read a line, write a reply) run
   by `CommandAgent` beside the same script started and fed by a bare
   asyncio subprocess: the difference is the bridge's overhead per run,
   process start aside (wall time, and this process's CPU).
2. Chat completions POSTed to an upstream (a separate process, so its CPU is
   not counted) directly, then through `RecordingProxy` in this process:
   the difference in this process's CPU per call is what the proxy costs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from evaldsl.agents import CommandAgent  # noqa: E402
from evaldsl.agents._proxy import RecordingProxy  # noqa: E402

AGENT = """
import json, sys
for raw in sys.stdin:
    print(json.dumps({"type": "reply", "content": "ok"}), flush=True)
"""

UPSTREAM = """
import sys
from aiohttp import web
BODY = b'{"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "calc", "arguments": "{\\\\"a\\\\": 1}"}}]}}], "usage": {"total_tokens": 15}}'
async def chat(request):
    await request.read()
    return web.Response(body=BODY, content_type="application/json")
app = web.Application()
app.router.add_post("/v1/chat/completions", chat)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=lambda *a: print("up", flush=True))
"""


async def bare_runs(argv: list[str], n: int) -> None:
    line = json.dumps({"type": "user", "content": "hi"}).encode() + b"\n"
    for _ in range(n):
        proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE)
        await proc.communicate(line)


async def bridged_runs(agent: CommandAgent, n: int) -> None:
    for _ in range(n):
        out = await agent.run("hi", None)
        assert out.error is None, out.error
    await agent.aclose()


def timed(coro_fn, *args) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(coro_fn(*args))
    return time.perf_counter() - wall, time.process_time() - cpu


async def calls(url: str, n: int, proxy: RecordingProxy | None) -> None:
    import aiohttp

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    if proxy is not None:
        await proxy.start()
        url = proxy.open_run("bench")["OPENAI_BASE_URL"] + "/chat/completions"
    async with aiohttp.ClientSession() as session:
        for _ in range(n):
            async with session.post(url, data=body, headers={"content-type": "application/json",
                                                             "authorization": "Bearer sk-x"}) as r:
                await r.read()
    if proxy is not None:
        assert len(proxy.close_run("bench").calls) == n
        await proxy.aclose()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--calls", type=int, default=400)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "agent.py")
        with open(script, "w") as fh:
            fh.write(textwrap.dedent(AGENT))
        argv = [sys.executable, script]
        timed(bare_runs, argv, 3)  # warm the page cache
        bare = timed(bare_runs, argv, args.runs)
        plain = timed(bridged_runs, CommandAgent(argv, record_models=False), args.runs)
        full = timed(bridged_runs, CommandAgent(argv), args.runs)
        for name, (wall, cpu) in (("bridge, no proxy", plain), ("bridge + proxy + tool server", full)):
            print(f"{name}: +{(wall - bare[0]) / args.runs * 1e3:.1f} ms wall, "
                  f"+{(cpu - bare[1]) / args.runs * 1e3:.2f} ms CPU per run over a bare spawn "
                  f"({bare[0] / args.runs * 1e3:.1f} ms wall)")

        port = 18000 + os.getpid() % 1000
        up = subprocess.Popen([sys.executable, "-c", textwrap.dedent(UPSTREAM), str(port)], stdout=subprocess.PIPE)
        try:
            assert up.stdout is not None and up.stdout.readline().strip() == b"up"
            base = f"http://127.0.0.1:{port}/v1"
            timed(calls, base + "/chat/completions", 50, None)
            direct = timed(calls, base + "/chat/completions", args.calls, None)
            proxied = timed(calls, base + "/chat/completions", args.calls, RecordingProxy(base))
        finally:
            up.kill()
            up.wait()
        print(f"model call direct: {direct[1] / args.calls * 1e3:.3f} ms CPU; through the proxy: "
              f"{proxied[1] / args.calls * 1e3:.3f} ms CPU; the proxy adds "
              f"{(proxied[1] - direct[1]) / args.calls * 1e3:.3f} ms CPU per call")


if __name__ == "__main__":
    main()
