"""The one HTTP client of a run: made lazily inside the loop, one per loop, transport chosen in one place."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from servers import ScriptedServer

from evaldsl.models._backends import make_backend
from evaldsl.models._transport import SharedClient, make_client, set_default_transport


def test_one_client_per_loop_shared_by_backends(openai_server: ScriptedServer) -> None:
    shared = SharedClient()
    assert "open=False" in repr(shared)

    async def run() -> httpx.AsyncClient:
        first = make_backend("openai:a", base_url=openai_server.base_url, client=shared)
        second = make_backend("openai:b", base_url=openai_server.base_url, client=shared)
        await first.chat([{"role": "user", "content": "hi"}])
        client = shared.get()
        await second.chat([{"role": "user", "content": "hi"}])
        assert shared.get() is client
        return client

    one = asyncio.run(run())
    two = asyncio.run(run())  # a new loop gets a client of its own
    assert one is not two and not two.is_closed
    asyncio.run(shared.aclose())
    assert two.is_closed and "open=False" in repr(shared)
    assert [r.json["model"] for r in openai_server.requests] == ["a", "b", "a", "b"]


def test_default_transport_is_chosen_in_one_place() -> None:
    previous = set_default_transport("httpx")
    try:
        assert type(make_client()) is httpx.AsyncClient
    finally:
        set_default_transport(previous)
    assert type(make_client()).__name__ == "HttpxAiohttpClient"
    with pytest.raises(ValueError, match="unknown transport 'curl': use one of aiohttp, httpx"):
        set_default_transport("curl")
