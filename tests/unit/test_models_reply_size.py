"""A reply larger than `MAX_REPLY_BYTES` is a backend error, read no further and not retried.

Two real servers on 127.0.0.1: one that declares its size (Content-Length)
and one that streams a chunked body without it; both transports.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import evaldsl.models._transport as transport
from evaldsl.models._backends import make_backend
from evaldsl.models._chat import BackendError
from evaldsl.models._transport import SharedClient

BIG = b'{"choices": [{"message": {"role": "assistant", "content": "' + b"x" * 5000 + b'"}}]}'


@pytest.fixture
def big_server() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            hits.append(self.path)
            self.send_response(200)
            self.send_header("content-type", "application/json")
            if "chunked" in self.path:
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for start in range(0, len(BIG), 1000):
                    piece = BIG[start:start + 1000]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\n\r\n")
            else:
                self.send_header("content-length", str(len(BIG)))
                self.end_headers()
                self.wfile.write(BIG)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("client", ["aiohttp", "httpx"])
@pytest.mark.parametrize("route", ["sized", "chunked"])
def test_a_reply_over_the_bound_is_a_backend_error_not_retried(
    big_server: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch, client: str, route: str
) -> None:
    url, hits = big_server
    backend = make_backend("openai:m", base_url=f"{url}/{route}/v1", client=SharedClient(client))

    async def ask() -> None:
        try:
            await backend.chat([{"role": "user", "content": "hi"}])
        finally:
            await backend.aclose()

    monkeypatch.setattr(transport, "MAX_REPLY_BYTES", 1000)
    with pytest.raises(BackendError, match="larger than the 1,000 bytes a reply may have"):
        asyncio.run(ask())
    assert len(hits) == 1  # not asked again
    monkeypatch.setattr(transport, "MAX_REPLY_BYTES", 1 << 20)
    backend = make_backend("openai:m", base_url=f"{url}/{route}/v1", client=SharedClient(client))
    asyncio.run(ask())  # under the bound, the same reply is read
