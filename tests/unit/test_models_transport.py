"""The one HTTP client of a run: made lazily inside the loop, one per loop, transport chosen in one place."""

from __future__ import annotations

import asyncio

import pytest
from servers import ScriptedServer

from evaldsl.models._backends import make_backend
from evaldsl.models._transport import (
    AiohttpClient,
    HttpClient,
    HttpxClient,
    SharedClient,
    make_client,
    set_default_transport,
)


def test_one_client_per_loop_shared_by_backends(openai_server: ScriptedServer) -> None:
    shared = SharedClient()
    assert "open=False" in repr(shared)

    async def run() -> HttpClient:
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
        assert type(make_client()) is HttpxClient
    finally:
        set_default_transport(previous)
    assert type(make_client()) is AiohttpClient
    with pytest.raises(ValueError, match="unknown transport 'curl': use one of aiohttp, httpx"):
        set_default_transport("curl")


def test_proxies_come_from_the_environment_once_per_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    client = AiohttpClient()
    assert client._proxy("https://api.example.com/v1/chat/completions") == "http://proxy.internal:3128"
    assert client._proxy("http://127.0.0.1:8000/v1/chat/completions") is None
    assert client._proxy("http://api.example.com/v1/chat/completions") is None  # no HTTP_PROXY set
    monkeypatch.setenv("HTTPS_PROXY", "http://other:1")
    assert client._proxy("https://api.example.com/v1/chat/completions") == "http://proxy.internal:3128"  # kept
