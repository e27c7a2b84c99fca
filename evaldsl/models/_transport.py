"""The one place that makes the HTTP client every backend sends through.

The API is httpx's (`httpx.AsyncClient`), but the bytes move through the
aiohttp-backed transport of `httpx-aiohttp`: measured on this project's
machine, plain httpx spends 7-8 ms of CPU per request with 50 in flight,
the aiohttp transport about 1 ms (issue 6; bench/bench_models.py). The
transport is chosen by name here and nowhere else, so a test or a user who
needs plain httpx (``set_default_transport("httpx")``) swaps it in one call.

A client belongs to the event loop it was made in (aiohttp's session is
bound to it), so `SharedClient` makes it lazily, inside the running loop,
on first use, and makes a fresh one if it is later used from another loop
(``asyncio.run`` per test, say). One `SharedClient` per run: every request
of the run shares its connection pool; ``aclose()`` at the end of the run.
Proxy settings come from the environment (``HTTPS_PROXY``, ``NO_PROXY``)
as in httpx. No credentials live on the client: each request carries its
own headers. The client keeps no cookies (a model API needs none).
"""

from __future__ import annotations

import asyncio
from http.cookiejar import CookieJar
from typing import Any

import httpx

TRANSPORTS = ("aiohttp", "httpx")
_default_transport = "aiohttp"
MAX_CONNECTIONS = 256
"""Open connections per client: above any sensible ``-j``, so the pool never queues a run."""


class _NoCookies(CookieJar):
    """A jar that keeps nothing: model APIs need no cookies, and reading each reply's
    headers into the stdlib jar cost about 0.05 ms of CPU a request (bench/bench_models.py)."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        pass

    def set_cookie(self, cookie: Any) -> None:
        pass


def set_default_transport(name: str) -> str:
    """Choose the transport of clients made from now on (``"aiohttp"`` or ``"httpx"``); returns the previous."""
    global _default_transport
    if name not in TRANSPORTS:
        raise ValueError(f"unknown transport {name!r}: use one of {', '.join(TRANSPORTS)}")
    previous, _default_transport = _default_transport, name
    return previous


def make_client(transport: str | None = None) -> httpx.AsyncClient:
    """A new pooled `httpx.AsyncClient` over ``transport`` (default: `set_default_transport`'s choice)."""
    name = transport or _default_transport
    limits = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS)
    options: dict[str, Any] = {"limits": limits, "timeout": None, "follow_redirects": False, "cookies": _NoCookies()}
    if name == "httpx":
        return httpx.AsyncClient(**options)
    if name == "aiohttp":
        from httpx_aiohttp import HttpxAiohttpClient

        return HttpxAiohttpClient(**options)
    raise ValueError(f"unknown transport {name!r}: use one of {', '.join(TRANSPORTS)}")


class SharedClient:
    """One client for a run, made on first use inside the running event loop."""

    def __init__(self, transport: str | None = None) -> None:
        self.transport = transport
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> httpx.AsyncClient:
        """The client of the running loop; made now if there is none for this loop."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            # A client of another (finished) loop cannot be closed from this one: let it go.
            self._client, self._loop = make_client(self.transport), loop
        return self._client

    async def aclose(self) -> None:
        """Close the client (its connections); a later `get` makes a new one."""
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.aclose()

    def __repr__(self) -> str:
        return f"SharedClient(transport={self.transport or _default_transport!r}, open={self._client is not None})"
