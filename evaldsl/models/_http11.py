"""A small HTTP/1.1 client on asyncio's protocols, for plain ``http://`` endpoints.

Why: most model runs that need speed talk to a local server (Ollama, vLLM,
llama.cpp, a benchmark) over plain HTTP on loopback, where the client's
own CPU is the cost. aiohttp spends about 0.15 ms of CPU a request and
86 ms to import (its two SSL contexts are made at import); this client
spends about 0.05 ms and imports nothing but asyncio (bench/README.md,
"Model runs"). It does exactly what a chat request needs and no more: one
POST with a body of known length, a response framed by ``Content-Length``,
``Transfer-Encoding: chunked`` or the connection's close, ``gzip`` /
``deflate`` bodies, keep-alive connections pooled per host. HTTPS and
proxies are not its business: `_transport.AutoClient` sends those through
aiohttp.

Failures are `TransportFailure`: a refused or reset connection, a server
that closes before the whole response, a response that is not HTTP. A
connection whose request was cancelled (a timeout) or failed is closed,
never reused; one the server closed while idle leaves the pool at once.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Mapping
from urllib.parse import urlsplit

from ._chat import BackendError
from ._transport import HttpReply, TransportFailure

MAX_HEAD = 64 * 1024
"""The longest status line and headers accepted."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection: one request at a time, its response parsed as bytes arrive."""

    def __init__(self, pool: list[_Connection], open_: set[_Connection]) -> None:
        self.pool = pool
        self.open = open_
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[HttpReply] | None = None
        self.buffer = bytearray()
        self.head: tuple[int, str, dict[str, str]] | None = None
        self.length: int | None = None
        self.chunked = False
        self.reusable = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def send(self, data: bytes, waiter: asyncio.Future[HttpReply]) -> None:
        assert self.transport is not None
        self.waiter, self.head, self.reusable = waiter, None, True
        self.buffer.clear()
        self.transport.write(data)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.waiter is None:  # bytes nobody asked for: this connection is not to be trusted
            self.reusable = False
            self.close()
            return
        try:
            if self.head is None and not self._read_head():
                return
            body = self._read_body()
        except ValueError as exc:
            self._fail(f"bad HTTP response ({exc})")
            return
        if body is not None:
            self._finish(body)

    def eof_received(self) -> bool | None:
        self.reusable = False
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.reusable = False
        if self in self.pool:
            self.pool.remove(self)
        self.open.discard(self)
        if self.waiter is None or self.waiter.done():
            return
        if self.head is not None and self.length is None and not self.chunked:
            self._finish(bytes(self.buffer))  # a body framed by the connection's close
            return
        why = f"{type(exc).__name__}: {exc}" if exc else "the server closed the connection without a full response"
        self.waiter.set_exception(TransportFailure(f"RemoteProtocolError: {why}"))

    def close(self) -> None:
        self.reusable = False
        if self.transport is not None:
            try:
                self.transport.close()
            except RuntimeError:  # its event loop is closed already: the socket goes with the transport
                pass

    def _read_head(self) -> bool:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD:
                raise ValueError("headers too long")
            return False
        lines = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        del self.buffer[: end + 4]
        version, _, rest = lines[0].partition(" ")
        code, _, reason = rest.partition(" ")
        if not version.startswith("HTTP/") or not code.isdigit():
            raise ValueError(f"status line {lines[0][:80]!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise ValueError(f"header line {line[:80]!r}")
            name, value = name.strip().lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        status = int(code)
        if 100 <= status < 200:  # an interim response (100 Continue): the real one follows
            return bool(self.buffer) and self._read_head()
        self.head = (status, reason, headers)
        self.chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        length = headers.get("content-length")
        self.length = None if self.chunked or length is None else int(length)
        if status in (204, 304):  # never a body, whatever the headers say
            self.length, self.chunked = 0, False
        if headers.get("connection", "").lower() == "close" or version == "HTTP/1.0":
            self.reusable = False
        return True

    def _read_body(self) -> bytes | None:
        if self.length is not None:
            if len(self.buffer) < self.length:
                return None
            if len(self.buffer) > self.length:  # more than the response: the stream cannot be trusted
                self.reusable = False
            return bytes(self.buffer[: self.length])
        if self.chunked:  # the last chunk ends in CRLF CRLF: no parse before it can have come
            return self._dechunk() if self.buffer.endswith(b"\r\n\r\n") else None
        return None  # until the connection closes

    def _dechunk(self) -> bytes | None:
        """The whole body of a chunked response, or None while it is incomplete."""
        out, at, data = bytearray(), 0, self.buffer
        while True:
            end = data.find(b"\r\n", at)
            if end < 0:
                return None
            size = int(bytes(data[at:end]).split(b";")[0].strip() or b"x", 16)
            if size == 0:
                return bytes(out) if data.find(b"\r\n\r\n", end) >= 0 else None  # the end, trailers and all
            if len(data) < end + 2 + size + 2:
                return None
            out += data[end + 2 : end + 2 + size]
            at = end + 2 + size + 2

    def _finish(self, body: bytes) -> None:
        assert self.head is not None and self.waiter is not None
        status, reason, headers = self.head
        waiter, self.waiter = self.waiter, None
        if waiter.done():  # cancelled meanwhile
            return
        try:
            body = _decoded(body, headers.get("content-encoding", ""))
        except zlib.error as exc:
            waiter.set_exception(TransportFailure(f"DecodingError: {exc}"))
            self.close()
            return
        waiter.set_result(HttpReply(status, headers, body, reason))

    def _fail(self, message: str) -> None:
        waiter, self.waiter = self.waiter, None
        self.close()
        if waiter is not None and not waiter.done():
            waiter.set_exception(TransportFailure(message))


def _expire(waiter: asyncio.Future[HttpReply], timeout_s: float) -> None:
    if not waiter.done():
        waiter.set_exception(TransportFailure(f"no reply within {timeout_s:.3g} s", timeout=True))


def _decoded(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompress(body, 16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        try:
            return zlib.decompress(body)
        except zlib.error:
            return zlib.decompress(body, -zlib.MAX_WBITS)
    raise zlib.error(f"unsupported content-encoding {encoding!r}")


class Http11Client:
    """POSTs to plain ``http://`` URLs over pooled keep-alive connections (see the module docstring)."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], list[_Connection]] = {}
        self._heads: dict[tuple[str, int], tuple[Mapping[str, str], tuple[str, int], bytes]] = {}
        self._open: set[_Connection] = set()
        self._closed = False

    def _head(self, url: str, headers: Mapping[str, str]) -> tuple[tuple[str, int], bytes]:
        """(host, port) and the request's bytes before its length, built once per URL and headers."""
        key = (url, id(headers))
        cached = self._heads.get(key)
        if cached is None or cached[0] is not headers:
            parts = urlsplit(url)
            if parts.scheme != "http" or not parts.hostname:
                raise TransportFailure(f"UnsupportedProtocol: {url!r} is not a plain http:// URL")
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            lines = [f"POST {target} HTTP/1.1", f"host: {parts.netloc.rpartition('@')[2]}"]
            lines += [f"{name}: {value}" for name, value in headers.items() if name.lower() != "content-length"]
            if any(c in line for line in lines for c in "\r\n\0"):  # the text itself is not shown: it may be a key
                raise BackendError("a request header or the URL holds a line break or NUL (not sent)")
            head = ("\r\n".join(lines) + "\r\ncontent-length: ").encode("latin-1")
            cached = self._heads[key] = (headers, (parts.hostname, parts.port or 80), head)
        return cached[1], cached[2]

    async def post(self, url: str, content: bytes, headers: Mapping[str, str], timeout_s: float) -> HttpReply:
        address, head = self._head(url, headers)
        pool = self._idle.setdefault(address, [])
        while pool and (pool[-1].transport is None or pool[-1].transport.is_closing()):
            pool.pop()
        loop = asyncio.get_running_loop()
        connection = pool.pop() if pool else await self._connect(address, pool, timeout_s)
        waiter: asyncio.Future[HttpReply] = loop.create_future()
        timer = loop.call_later(timeout_s, _expire, waiter, timeout_s)
        finished = False
        try:
            connection.send(b"".join((head, str(len(content)).encode(), b"\r\n\r\n", content)), waiter)
            reply = await waiter
            finished = True
            return reply
        finally:
            timer.cancel()
            if finished and connection.reusable and not self._closed:
                pool.append(connection)
            else:  # cancelled, timed out, failed or not to be kept: never reused
                connection.close()
                self._open.discard(connection)

    async def _connect(self, address: tuple[str, int], pool: list[_Connection], timeout_s: float) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, connection = await asyncio.wait_for(
                loop.create_connection(lambda: _Connection(pool, self._open), *address), timeout_s)
        except asyncio.TimeoutError as exc:
            raise TransportFailure(f"no connection within {timeout_s:.3g} s", timeout=True) from exc
        except OSError as exc:
            raise TransportFailure(f"{type(exc).__name__}: {exc.strerror or exc}") from exc
        self._open.add(connection)
        return connection

    async def aclose(self) -> None:
        self._closed = True
        for connection in list(self._open):
            connection.close()
        self._open.clear()
        self._idle.clear()

    @property
    def is_closed(self) -> bool:
        return self._closed
