"""The recording proxy between a real agent process and a scripted model server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from servers._script import tool_then_text

from evaldsl.agents import CommandAgent
from evaldsl.agents._proxy import RecordingProxy

NODE_AGENT = Path(__file__).parents[2] / "suites" / "examples" / "node_agent.mjs"
SECRET = "sk-test-do-not-write-7731"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@needs_node
def test_a_node_agent_reporting_nothing_has_its_calls_taken_from_the_proxy(openai_server: Any,
                                                                           monkeypatch: Any) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    openai_server.reply = tool_then_text("calculator", {"op": "add", "a": 2, "b": 3}, "2 + 3 = 5")
    agent = CommandAgent(["node", str(NODE_AGENT)], upstream=openai_server.base_url)
    out = asyncio.run(agent.run("what is 2 + 3?", None))
    assert out.error is None, out.error
    assert out.final_text == "2 + 3 = 5"
    assert [(c.name, c.args, c.result) for c in out.tool_calls] == [("calculator", {"op": "add", "a": 2, "b": 3}, "5")]
    assert out.tokens == 30  # two model calls of 10 + 5
    assert all(r.sent_secret("authorization", f"Bearer {SECRET}") for r in openai_server.requests)
    assert SECRET not in out.model_dump_json()


@needs_node
def test_a_node_agent_over_two_turns_keeps_one_process_and_its_history(openai_server: Any) -> None:
    openai_server.reply = tool_then_text("calculator", {"op": "add", "a": 2, "b": 3}, "5")
    agent = CommandAgent(["node", str(NODE_AGENT)], upstream=openai_server.base_url)
    out = asyncio.run(agent.converse(["what is 2 + 3?", "and again?"], None))
    assert out.error is None, out.error
    assert [c.name for c in out.tool_calls] == ["calculator"]  # the second turn's model answered at once
    last = openai_server.requests[-1].json["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "tool", "assistant", "user"]
    assert out.tokens == 45


async def _upstream(handler: Any) -> tuple[web.AppRunner, str]:
    """A model server on 127.0.0.1 answering chat completions with ``handler``: its runner and its /v1 URL."""
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/v1"


def _sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"


STREAM = [
    {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
        {"index": 0, "id": "call_9", "function": {"name": "search", "arguments": '{"q": '}}]}}]},
    {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '"oslo"}'}}]}}]},
    {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 4, "total_tokens": 11}},
]


def test_a_streamed_reply_passes_through_whole_and_is_recorded() -> None:
    async def upstream_handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        for event in STREAM:  # one chunk per event, as a model server sends them
            await response.write(_sse(event).split(b"data: [DONE]")[0])
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def main() -> tuple[bytes, Any, dict[str, str]]:
        runner, base_url = await _upstream(upstream_handler)
        proxy = RecordingProxy(base_url)
        await proxy.start()
        try:
            env = proxy.open_run("r1")
            async with aiohttp.ClientSession() as session, session.post(
                env["OPENAI_BASE_URL"] + "/chat/completions", json={"messages": [], "stream": True},
                headers={"x-api-key": SECRET, "authorization": f"Bearer {SECRET}"},
            ) as response:
                body = await response.read()
            return body, proxy.close_run("r1").artifacts(), env
        finally:
            await proxy.aclose()
            await runner.cleanup()

    body, seen, env = asyncio.run(main())
    assert body == _sse(*STREAM)
    assert [(c.name, c.args) for c in seen.tool_calls] == [("search", {"q": "oslo"})]
    assert seen.tokens == 11
    assert env["OPENAI_BASE_URL"].startswith("http://127.0.0.1:") and env["OPENAI_BASE_URL"].endswith("/r1/openai/v1")
    assert SECRET not in seen.model_dump_json()


def test_anthropic_calls_and_results_are_matched_by_id(anthropic_server: Any) -> None:
    anthropic_server.reply = tool_then_text("lookup", {"city": "Oslo"}, "cold")

    async def main() -> Any:
        proxy = RecordingProxy(anthropic_server.base_url.removesuffix("/v1"))
        await proxy.start()
        try:
            url = proxy.open_run("a")["ANTHROPIC_BASE_URL"] + "/v1/messages"
            messages: list[dict[str, Any]] = [{"role": "user", "content": "weather?"}]
            async with aiohttp.ClientSession() as session:
                for _ in range(2):
                    async with session.post(url, json={"messages": messages}, headers={"x-api-key": SECRET}) as r:
                        reply = await r.json()
                    messages.append({"role": "assistant", "content": reply["content"]})
                    uses = [b for b in reply["content"] if b["type"] == "tool_use"]
                    if uses:
                        messages.append({"role": "user", "content": [
                            {"type": "tool_result", "tool_use_id": uses[0]["id"], "content": "-3 C"}]})
            return proxy.close_run("a").artifacts()
        finally:
            await proxy.aclose()

    seen = asyncio.run(main())
    assert [(c.name, c.args, c.result) for c in seen.tool_calls] == [("lookup", {"city": "Oslo"}, "-3 C")]
    assert seen.tokens == 30
    assert anthropic_server.requests[0].sent_secret("x-api-key", SECRET)


def test_an_unknown_run_prefix_is_refused() -> None:
    async def main() -> int:
        proxy = RecordingProxy("http://127.0.0.1:9/v1")
        await proxy.start()
        try:
            async with aiohttp.ClientSession() as session, session.post(
                f"http://127.0.0.1:{proxy.port}/nope/openai/v1/chat/completions", json={}) as r:
                return r.status
        finally:
            await proxy.aclose()

    assert asyncio.run(main()) == 404


@needs_node
def test_the_shipped_node_example_runs_from_the_command_line_with_upstream(openai_server: Any, tmp_path: Any) -> None:
    """The example's own command, as suites/examples/node_agent.evl writes it, with `--upstream`."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).parents[2]
    openai_server.reply = tool_then_text("calculator", {"op": "add", "a": 2, "b": 3}, "2 + 3 = 5")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    proc = subprocess.run(
        [sys.executable, "-m", "evaldsl", "run", str(root / "suites/examples/node_agent.evl"),
         "--agent-cmd", f"node {root / 'suites/examples/node_agent.mjs'}", "--upstream", openai_server.base_url,
         "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=120, env={**env, "OPENAI_API_KEY": SECRET}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = json.loads((tmp_path / "r.json").read_text())["cases"][0]["runs"][0]["artifacts"]
    assert [(c["name"], c["result"]) for c in run["tool_calls"]] == [("calculator", "5")]  # seen by the proxy
    assert SECRET not in (tmp_path / "r.json").read_text()


def test_an_unreachable_upstream_is_a_502_that_says_so(capsys: Any) -> None:
    import socket

    with socket.socket() as sock:  # bound, never listened on, closed: nothing answers there
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"

    async def main() -> tuple[int, Any]:
        proxy = RecordingProxy(dead)
        await proxy.start()
        try:
            url = proxy.open_run("a")["OPENAI_BASE_URL"] + "/chat/completions"
            async with aiohttp.ClientSession() as session:
                async with session.post(url, json={"messages": []}) as r:
                    return r.status, await r.json()
        finally:
            await proxy.aclose()

    status, body = asyncio.run(main())
    assert status == 502 and body["error"]["message"].startswith("evaldsl proxy: upstream unreachable")
    assert "Traceback" not in capsys.readouterr().err


@needs_node
def test_a_failed_run_says_why_the_proxy_could_not_reach_the_model() -> None:
    """The agent's own message says only "HTTP 502"; the run's error adds what the proxy met, and the way out."""
    import socket

    with socket.socket() as sock:  # bound, never listened on, closed: nothing answers there
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    secret = dead + "?key=do-not-write"  # a query is never shown
    out = asyncio.run(CommandAgent(["node", str(NODE_AGENT)], upstream=secret).run("what is 2 + 3?", None))
    assert out.error is not None and "model answered HTTP 502" in out.error
    assert f"evaldsl's recording proxy could not reach the model at {dead} (" in out.error
    assert "do-not-write" not in out.model_dump_json()
    assert "give `--upstream URL`, or set OPENAI_BASE_URL where evaldsl runs" in out.error


@needs_node
def test_a_model_error_status_is_told_with_the_run_and_what_came_before_is_kept(openai_server: Any) -> None:
    """A first model call answered (a tool call), the second refused: the run's error names the status the
    model gave, and the call the proxy saw before the failure is still in the run's artifacts."""
    from servers._script import HttpError, call, sequence, tool_calls

    openai_server.reply = sequence(tool_calls(call("calculator", {"op": "add", "a": 2, "b": 3})), HttpError(401))
    out = asyncio.run(CommandAgent(["node", str(NODE_AGENT)], upstream=openai_server.base_url).run("2 + 3?", None))
    assert out.error is not None and "model answered HTTP 401" in out.error
    assert f"the model at {openai_server.base_url} answered HTTP 401 through evaldsl's recording proxy" in out.error
    assert [(c.name, c.result) for c in out.tool_calls] == [("calculator", "5")]


@needs_node
def test_credentials_in_the_upstream_beside_the_agents_own_header_are_a_clear_error(openai_server: Any,
                                                                                   capfd: Any) -> None:
    """aiohttp refuses a URL's user and password beside an Authorization header: the run says so, shows no
    password, and the proxy logs no traceback (it was a 500 with one)."""
    upstream = openai_server.base_url.replace("http://", "http://me:pw-do-not-write@")
    agent = CommandAgent(["node", str(NODE_AGENT)], upstream=upstream, env={"OPENAI_API_KEY": SECRET})
    out = asyncio.run(agent.run("what is 2 + 3?", None))
    assert out.error is not None and "model answered HTTP 502" in out.error
    assert "could not send the request to the model at " + openai_server.base_url in out.error
    assert "Cannot combine AUTHORIZATION header" in out.error
    assert "pw-do-not-write" not in out.model_dump_json() and SECRET not in out.model_dump_json()
    assert "Traceback" not in capfd.readouterr().err


def test_an_upstream_with_a_query_keeps_it_after_the_path() -> None:
    """An Azure-style upstream (``.../v1?api-version=X``): the request's path goes before the query, and
    the request's own query is kept after the upstream's."""
    seen: list[str] = []

    async def upstream_handler(request: web.Request) -> web.Response:
        seen.append(str(request.rel_url))
        return web.json_response({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})

    async def main() -> int:
        runner, base_url = await _upstream(upstream_handler)
        proxy = RecordingProxy(base_url + "?api-version=2024-10")
        await proxy.start()
        try:
            url = proxy.open_run("a")["OPENAI_BASE_URL"] + "/chat/completions?trace=1"
            async with aiohttp.ClientSession() as session:
                async with session.post(url, json={"messages": []}) as r:
                    return r.status
        finally:
            await proxy.aclose()
            await runner.cleanup()

    assert asyncio.run(main()) == 200
    assert seen == ["/v1/chat/completions?api-version=2024-10&trace=1"]
