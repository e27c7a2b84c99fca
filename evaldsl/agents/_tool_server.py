"""The tool server: a run's declared tools over MCP streamable HTTP (``EVALDSL_TOOLS_URL``).

One HTTP server per evaldsl run on 127.0.0.1 (uvicorn, which the official
``mcp`` SDK depends on, with its signal handlers left out so Ctrl-C stays
evaldsl's), and one MCP endpoint per run below it: ``/<run id>/mcp``. Each
run's endpoint is its own low-level MCP `Server` answering from that run's
case context; every call is recorded with its result for the run's
artifacts. `answer` is the one place an answer is asked for: the run's
`ToolAnswerer` through the context (``given`` lines, answer sequences, a
world's methods), as the model loop and ``ctx.call`` ask it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Iterator
from typing import Any

from ..artifacts import ToolCall


async def answer(ctx: Any, name: str, args: Any) -> tuple[bool, str]:
    """A declared tool's answer for these arguments: (ok, text), from the run's answerer (the case's
    `given` lines, the tools' `when` lines with their sequences, a world's methods, awaited when async)."""
    if ctx is None or not hasattr(ctx, "acall"):
        return False, f"Error: no tool named `{name}`: the run has no declared tools"
    result = await ctx.acall(name, args, record=False)
    return bool(result.ok), str(result.text)


class _Endpoint:
    """One run's MCP server and the calls made on it."""

    def __init__(self, ctx: Any) -> None:
        import mcp_types as types
        from mcp.server.lowlevel.server import Server
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        self.ctx = ctx
        self.calls: list[ToolCall] = []
        tools = ctx.tools_openai() if ctx is not None and hasattr(ctx, "tools_openai") else []

        async def list_tools(_ctx: Any, _params: Any) -> Any:
            return types.ListToolsResult(tools=[
                types.Tool(name=t["function"]["name"], description=t["function"].get("description") or "",
                           input_schema=t["function"].get("parameters") or {"type": "object"})
                for t in tools])

        async def call_tool(_ctx: Any, params: Any) -> Any:
            args = params.arguments or {}
            ok, text = await answer(self.ctx, params.name, args)
            self.calls.append(ToolCall(name=params.name, args=args, result=text))
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=not ok)

        server = Server("evaldsl", on_list_tools=list_tools, on_call_tool=call_tool)
        self.manager = StreamableHTTPSessionManager(server, stateless=True, json_response=True)
        self.stack = contextlib.AsyncExitStack()


class ToolServer:
    """``await start()``; ``await open_run(id, ctx)`` -> its URL; ``await close_run(id)`` -> its calls."""

    def __init__(self) -> None:
        self._runs: dict[str, _Endpoint] = {}
        self._server: Any = None
        self._task: asyncio.Task[Any] | None = None
        self.port = 0

    async def start(self) -> None:
        import uvicorn

        class _Quiet(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:  # Ctrl-C is evaldsl's to handle
                yield

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self._app, log_level="warning", lifespan="off", access_log=False, interface="asgi3")
        self._server = _Quiet(config)
        self._task = asyncio.ensure_future(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises what stopped it
            await asyncio.sleep(0.005)

    async def open_run(self, run_id: str, ctx: Any) -> str:
        endpoint = _Endpoint(ctx)
        await endpoint.stack.enter_async_context(endpoint.manager.run())
        self._runs[run_id] = endpoint
        return f"http://127.0.0.1:{self.port}/{run_id}/mcp"

    def calls(self, run_id: str) -> list[ToolCall]:
        endpoint = self._runs.get(run_id)
        return list(endpoint.calls) if endpoint else []

    async def close_run(self, run_id: str) -> list[ToolCall]:
        endpoint = self._runs.pop(run_id, None)
        if endpoint is None:
            return []
        await endpoint.stack.aclose()
        return endpoint.calls

    async def aclose(self) -> None:
        for run_id in list(self._runs):
            await self.close_run(run_id)
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Route ``/<run id>/mcp`` to that run's endpoint; anything else is a 404."""
        if scope["type"] != "http":
            return
        parts = scope["path"].strip("/").split("/")
        endpoint = self._runs.get(parts[0]) if len(parts) == 2 and parts[1] == "mcp" else None
        if endpoint is None:
            body = json.dumps({"error": "evaldsl tool server: no such run"}).encode()
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})
            return
        await endpoint.manager.handle_request({**scope, "path": "/mcp"}, receive, send)
