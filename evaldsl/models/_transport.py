"""The one place that makes the HTTP client every backend sends through.

A backend needs one thing of HTTP: POST these bytes with these headers,
within so many seconds, and hand back the status, headers and body. That
is `HttpClient.post`, and `HttpReply` is all it returns. Two clients do it:

- ``aiohttp`` (the default): an `aiohttp.ClientSession` used directly, for every URL.
  Issue 6 measured plain httpx at 7-8 ms of CPU a request with 50 in
  flight; httpx's API over the aiohttp-backed ``httpx-aiohttp`` transport
  cost about 0.3 ms: httpx's request and response objects wrapped around
  aiohttp's, and two worker-thread hops a request for aiohttp's
  ``trust_env`` (proxy and ~/.netrc lookups). Used directly, with the proxy
  looked up once per endpoint, a request costs what a bare aiohttp loop
  does, about 0.15 ms (bench/bench_models.py), and httpx is not imported.
- ``httpx``: a plain `httpx.AsyncClient`, for a user or a test that
  needs it.

``set_default_transport(name)`` swaps the clients made from then on, in one call.
Both report a failure to reach the server (refused, dropped, reset, timed
out) as `TransportFailure`, so the retry policy (`_retry`) knows nothing of
either library. A client belongs to the event loop it was made in
(aiohttp's session is bound to it), so `SharedClient` makes it lazily,
inside the running loop, on first use, and makes a fresh one if it is
later used from another loop (``asyncio.run`` per test, say). One
`SharedClient` per run: every request of the run shares its connection
pool; ``aclose()`` at the end of the run. Proxy settings come from the
environment (``HTTPS_PROXY``, ``NO_PROXY``). No credentials live on the
client: each request carries its own headers. No cookies are kept (a model
API needs none) and redirects are not followed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from typing import Any, Protocol

TRANSPORTS = ("aiohttp", "httpx")
_default_transport = "aiohttp"
MAX_CONNECTIONS = 256
"""Open connections per client: above any sensible ``-j``, so the pool never queues a run."""


class HttpReply:
    """A response as a backend sees it: status, headers (case-insensitive ``get``), body."""

    __slots__ = ("status_code", "headers", "content", "reason_phrase")

    def __init__(self, status_code: int, headers: Mapping[str, str], content: bytes, reason_phrase: str = "") -> None:
        self.status_code = status_code
        self.headers = headers
        """Read with lower-case names; both clients' mappings ignore case."""
        self.content = content
        self.reason_phrase = reason_phrase

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def __repr__(self) -> str:
        return f"HttpReply({self.status_code}, {len(self.content)} bytes)"


class TransportFailure(Exception):
    """The server could not be reached or stopped answering; ``timeout`` says whether it was too slow."""

    def __init__(self, message: str, *, timeout: bool = False, refused: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout
        self.refused = refused
        """The server's host refused the connection: nothing listens at that address and port."""


MAX_REPLY_BYTES = 32 * 1024 * 1024
"""The largest reply body a backend reads (32 MiB; a chat reply is rarely past a few hundred KB)."""


class ReplyTooLarge(Exception):
    """A reply whose body is larger than `MAX_REPLY_BYTES`: not read past that, and not retried."""


class HttpClient(Protocol):
    """What a backend sends through (see the module docstring)."""

    async def post(self, url: str, content: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpReply:
        """POST ``content``; raises `TransportFailure` when no response arrives in ``timeout_s``."""
        ...

    async def aclose(self) -> None: ...

    @property
    def is_closed(self) -> bool: ...


def _proxy_for(url: str) -> str | None:
    """The proxy for ``url`` from the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``)."""
    import os

    if not any(name.lower().endswith("_proxy") for name in os.environ):
        return None  # the common case, without importing urllib.request (3 ms)
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    if "no" in proxies and urllib.request.proxy_bypass(parts.hostname or ""):  # NO_PROXY
        return None
    return proxies.get(parts.scheme)


def _failure(exc: BaseException) -> TransportFailure:
    detail = str(exc).strip() or type(exc).__name__
    return TransportFailure(f"{type(exc).__name__}: {detail}", refused=_refused(exc))


def _refused(exc: BaseException | None) -> bool:
    """Whether a connection error was a refusal (`ConnectionRefusedError` in its chain; aiohttp keeps
    the OS error as ``os_error``)."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, ConnectionRefusedError) or isinstance(getattr(exc, "os_error", None),
                                                                 ConnectionRefusedError):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


class AiohttpClient:
    """`HttpClient` over one `aiohttp.ClientSession` (made on the first request)."""

    def __init__(self) -> None:
        self._session: Any = None
        self._closed = False
        self._proxies: dict[str, str | None] = {}

    def _open(self) -> Any:
        import aiohttp

        connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, limit_per_host=MAX_CONNECTIONS)
        self._timeout_type = aiohttp.ClientTimeout
        self._errors = (aiohttp.ClientError, OSError)
        self._session = aiohttp.ClientSession(
            # trust_env=False: with it, aiohttp reads the proxy settings and ~/.netrc in a worker
            # thread on every request (two thread hops, about 0.15 ms of CPU); the proxy of each
            # endpoint is looked up once instead (`_proxy`), and no credentials come from ~/.netrc.
            connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False,
            timeout=aiohttp.ClientTimeout(total=None),
        )
        return self._session

    def _proxy(self, url: str) -> str | None:
        """The proxy for ``url``, looked up once (`_proxy_for`)."""
        if url not in self._proxies:
            self._proxies[url] = _proxy_for(url)
        return self._proxies[url]

    async def post(self, url: str, content: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpReply:
        session = self._session or self._open()
        try:
            async with session.post(
                url, data=content, headers=headers, allow_redirects=False, proxy=self._proxy(url),
                timeout=self._timeout_type(total=timeout_s),
            ) as response:
                length = response.content_length
                if length is not None and length <= MAX_REPLY_BYTES:
                    body = await response.read()
                else:
                    body = await _read_bounded(response.content.iter_chunked(1 << 16), length)
                return HttpReply(response.status, response.headers, body, response.reason or "")
        except asyncio.TimeoutError as exc:  # aiohttp's own timeouts are TimeoutErrors too
            raise TransportFailure(f"no reply within {timeout_s:.3g} s", timeout=True) from exc
        except self._errors as exc:
            raise _failure(exc) from exc

    async def aclose(self) -> None:
        self._closed = True
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    @property
    def is_closed(self) -> bool:
        return self._closed


async def _read_bounded(chunks: Any, length: int | None) -> bytes:
    """A body read from its ``chunks`` (an async iterator of bytes), never more than `MAX_REPLY_BYTES`:
    refused at once when its declared ``length`` is larger, else as soon as what came is."""
    if length is not None and length > MAX_REPLY_BYTES:
        raise ReplyTooLarge(_too_large(f"{length:,} bytes (its Content-Length)"))
    parts, size = [], 0
    async for chunk in chunks:
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise ReplyTooLarge(_too_large(f"over {MAX_REPLY_BYTES:,} bytes"))
        parts.append(chunk)
    return b"".join(parts)


def _too_large(size: str) -> str:
    return (f"a reply of {size}, larger than the {MAX_REPLY_BYTES:,} bytes a reply may have; "
            "it was not read (is the base URL a model endpoint?)")


def _no_cookies() -> Any:
    """A cookie jar that keeps nothing (the stdlib jar parsed every reply's headers: 0.05 ms a request)."""
    from http.cookiejar import CookieJar

    class NoCookies(CookieJar):
        def extract_cookies(self, response: Any, request: Any) -> None:
            pass

        def set_cookie(self, cookie: Any) -> None:
            pass

    return NoCookies()


class HttpxClient:
    """`HttpClient` over a plain `httpx.AsyncClient`."""

    def __init__(self) -> None:
        import httpx

        limits = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS)
        self._httpx = httpx
        self.client = httpx.AsyncClient(limits=limits, timeout=None, follow_redirects=False, cookies=_no_cookies())

    async def post(self, url: str, content: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpReply:
        httpx = self._httpx
        extensions = {"timeout": dict.fromkeys(("connect", "read", "write", "pool"), timeout_s)}
        request = httpx.Request("POST", url, content=content, headers=headers, extensions=extensions)
        try:
            response = await self.client.send(request, stream=True)
            try:
                length = response.headers.get("content-length")
                body = await _read_bounded(response.aiter_bytes(), int(length) if length and length.isdigit() else None)
            finally:
                await response.aclose()
        except httpx.TimeoutException as exc:
            raise TransportFailure(f"no reply within {timeout_s:.3g} s", timeout=True) from exc
        except (httpx.TransportError, OSError) as exc:
            raise _failure(exc) from exc
        except httpx.HTTPError as exc:  # e.g. a body that cannot be decoded
            raise TransportFailure(f"{type(exc).__name__}: {exc}") from exc
        return HttpReply(response.status_code, response.headers, body, response.reason_phrase)

    async def aclose(self) -> None:
        await self.client.aclose()

    @property
    def is_closed(self) -> bool:
        return bool(self.client.is_closed)


def set_default_transport(name: str) -> str:
    """Choose the transport of clients made from now on (``"aiohttp"`` or ``"httpx"``);
    returns the previous."""
    global _default_transport
    if name not in TRANSPORTS:
        raise ValueError(f"unknown transport {name!r}: use one of {', '.join(TRANSPORTS)}")
    previous, _default_transport = _default_transport, name
    return previous


def make_client(transport: str | None = None) -> HttpClient:
    """A new pooled `HttpClient` over ``transport`` (default: `set_default_transport`'s choice)."""
    name = transport or _default_transport
    if name == "aiohttp":
        return AiohttpClient()
    if name == "httpx":
        return HttpxClient()
    raise ValueError(f"unknown transport {name!r}: use one of {', '.join(TRANSPORTS)}")


class SharedClient:
    """One client for a run, made on first use inside the running event loop."""

    def __init__(self, transport: str | None = None) -> None:
        self.transport = transport
        self._client: HttpClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def import_ahead(self) -> None:
        """Start importing the client's library (aiohttp) on a thread of its own, while the caller does
        other work (compiling the suites): most of aiohttp's import is the two SSL contexts it makes,
        which OpenSSL builds without holding the GIL. The first request waits for what is left of it."""
        if (self.transport or _default_transport) != "aiohttp" or "aiohttp" in sys.modules:
            return
        import threading

        threading.Thread(target=_import_quietly, args=("aiohttp",), name="evaldsl-import-aiohttp").start()

    def get(self) -> HttpClient:
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


def _import_quietly(name: str) -> None:
    """Import ``name`` ahead of its use (`SharedClient.import_ahead`); a failure is left for the import
    where it is used, which raises it again where it can be reported."""
    import importlib

    try:
        importlib.import_module(name)
    except BaseException:  # noqa: BLE001 - reported by the import that needs it
        pass
