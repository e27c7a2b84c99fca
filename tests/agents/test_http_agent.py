"""The HTTP bridge (`evaldsl.agents.HttpAgent`) against a real aiohttp server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from aiohttp import web

from evaldsl.agents import HttpAgent


def ctx(**extra: Any) -> SimpleNamespace:
    return SimpleNamespace(name="adds", suite="S", system="be brief", timeout_s=10.0, tools_openai=lambda: [],
                           **extra)


async def _serve(handler: Callable[[web.Request], Any]) -> tuple[web.AppRunner, str]:
    app = web.Application()
    app.router.add_post("/agent", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}/agent"


def _with_server(handler: Callable[[web.Request], Any], body: Callable[[str], Any]) -> Any:
    async def main() -> Any:
        runner, url = await _serve(handler)
        try:
            return await body(url)
        finally:
            await runner.cleanup()

    return asyncio.run(main())


def test_each_turn_is_posted_with_one_run_id_and_the_reply_read() -> None:
    seen: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append({**body, "tools_header": request.headers.get("X-Evaldsl-Tools-Url")})
        return web.json_response({"content": f"turn {body['turn']}", "tokens": 3,
                                  "tool_calls": [{"name": "lookup", "args": {"t": body["turn"]}}]})

    async def body(url: str) -> Any:
        agent = HttpAgent(url, tools_url="http://127.0.0.1:1/mcp")
        try:
            first = await agent.run("one", ctx(conversation_id="c"))
            return first, await agent.run("two", ctx(conversation_id="c", last_turn=True))
        finally:
            await agent.aclose()

    first, out = _with_server(handler, body)
    # each turn reports its own calls and tokens (the runner keeps the conversation)
    assert first.final_text == "turn 1" and [c.args for c in first.tool_calls] == [{"t": 1}]
    assert out.error is None and out.final_text == "turn 2" and out.tokens == 3
    assert [c.args for c in out.tool_calls] == [{"t": 2}]
    assert seen[0]["run_id"] == seen[1]["run_id"] and seen[0]["type"] == "user"
    assert seen[1]["messages"] == [{"role": "user", "content": "one"}, {"role": "assistant", "content": "turn 1"},
                                   {"role": "user", "content": "two"}]
    assert seen[0]["system"] == "be brief" and seen[0]["tools_header"] == "http://127.0.0.1:1/mcp"


def test_a_non_2xx_status_or_a_body_that_is_not_an_object_is_a_run_error() -> None:
    async def handler(request: web.Request) -> web.Response:
        if (await request.json())["content"] == "fail":
            return web.Response(status=503, text="overloaded")
        return web.Response(text=json.dumps(["a", "list"]), content_type="application/json")

    async def body(url: str) -> Any:
        agent = HttpAgent(url)
        try:
            return await agent.run("fail", ctx()), await agent.run("list", ctx())
        finally:
            await agent.aclose()

    failed, listed = _with_server(handler, body)
    assert failed.error is not None and "HTTP 503" in failed.error and "overloaded" in failed.error
    assert listed.error == "agent protocol error: the reply must be a JSON object, not list"
