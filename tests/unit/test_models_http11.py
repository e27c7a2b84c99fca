"""The small HTTP/1.1 client of plain http:// endpoints, against a raw server on loopback that sends exact bytes.

Each test scripts the bytes of the responses; the server records each
request it reads (head and body) and on which connection, so reuse and
closing are checked, not assumed.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib
from collections.abc import Callable
from typing import Any

import pytest

from evaldsl.models._chat import BackendError
from evaldsl.models._http11 import Http11Client
from evaldsl.models._transport import AutoClient, TransportFailure

Responder = Callable[[int], "bytes | tuple[float, bytes] | None"]
"""The bytes to send for request number n: at once, or (seconds, bytes) after a pause;
None closes the connection without a reply."""


def ok(body: bytes, *extra: str) -> bytes:
    head = "\r\n".join(["HTTP/1.1 200 OK", f"content-length: {len(body)}", *extra])
    return head.encode() + b"\r\n\r\n" + body


async def serve(respond: Responder, seen: list[tuple[int, bytes, bytes]]) -> asyncio.AbstractServer:
    count = {"requests": 0, "connections": 0}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        count["connections"] += 1
        connection = count["connections"]
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                body = await reader.readexactly(length)
                seen.append((connection, head, body))
                reply = respond(count["requests"])
                count["requests"] += 1
                if reply is None:
                    break
                if isinstance(reply, tuple):
                    await asyncio.sleep(reply[0])
                    reply = reply[1]
                writer.write(reply)
                await writer.drain()
                if b"connection: close" in reply.lower() or b"HTTP/1.0" in reply[:9]:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # the client went away, or the test is over
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def exchange(respond: Responder, posts: int = 1, *, client: Any = None,
             timeout_s: float = 5.0) -> tuple[list[Any], list[tuple[int, bytes, bytes]]]:
    """``posts`` sequential POSTs; each result is the reply or the TransportFailure raised."""
    seen: list[tuple[int, bytes, bytes]] = []

    async def go() -> list[Any]:
        server = await serve(respond, seen)
        port = server.sockets[0].getsockname()[1]
        http = client or Http11Client()
        out: list[Any] = []
        try:
            for n in range(posts):
                try:
                    out.append(await asyncio.wait_for(http.post(
                        f"http://127.0.0.1:{port}/v1/chat?x=1", json.dumps({"n": n}).encode(),
                        {"content-type": "application/json", "authorization": "Bearer k"}, timeout_s), timeout_s + 5))
                except (TransportFailure, asyncio.TimeoutError) as exc:
                    out.append(exc)
        finally:
            await http.aclose()
            server.close()
            await server.wait_closed()
        return out

    return asyncio.run(go()), seen


def test_requests_carry_target_host_headers_and_body_and_reuse_one_connection() -> None:
    replies, seen = exchange(lambda n: ok(b'{"n": %d}' % n, "content-type: application/json"), posts=3)
    assert [json.loads(r.content) for r in replies] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert replies[0].status_code == 200 and replies[0].reason_phrase == "OK" and replies[0].is_success
    assert replies[0].headers["content-type"] == "application/json"
    assert [connection for connection, _, _ in seen] == [1, 1, 1]  # keep-alive
    head = seen[0][1].decode()
    assert head.startswith("POST /v1/chat?x=1 HTTP/1.1\r\n") and "host: 127.0.0.1:" in head
    assert "authorization: Bearer k" in head and "content-length: 8" in head
    assert [json.loads(body) for _, _, body in seen] == [{"n": 0}, {"n": 1}, {"n": 2}]


def test_chunked_gzip_deflate_and_interim_responses() -> None:
    payload = b'{"answer": "' + b"x" * 5000 + b'"}'
    packed = gzip.compress(payload)
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (packed[:7], packed[7:100], packed[100:]))
    responses = [
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-encoding: gzip\r\n\r\n" + chunks + b"0\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\n" + ok(zlib.compress(payload), "content-encoding: deflate"),
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nabcd\r\n0\r\nx-trailer: 1\r\n\r\n",
    ]
    replies, seen = exchange(lambda n: responses[n], posts=3)
    assert [r.content for r in replies] == [payload, payload, b"abcd"]
    assert {connection for connection, _, _ in seen} == {1}


def test_a_body_framed_by_close_and_connection_close_are_read_and_not_reused() -> None:
    responses = [b"HTTP/1.0 503 Service Unavailable\r\nretry-after: 2\r\n\r\nbusy, come back",
                 ok(b"{}", "connection: close"), b"HTTP/1.1 204 No Content\r\n\r\n", ok(b"{}")]
    replies, seen = exchange(lambda n: responses[n], posts=4)
    assert (replies[2].status_code, replies[2].content) == (204, b"")  # no body, and no wait for one
    assert (replies[0].status_code, replies[0].content, replies[0].headers["retry-after"]) == (503, b"busy, come back", "2")
    assert replies[0].reason_phrase == "Service Unavailable" and not replies[0].is_success
    assert [connection for connection, _, _ in seen] == [1, 2, 3, 3]


def test_a_dropped_connection_is_a_failure_and_the_next_request_gets_a_new_one() -> None:
    replies, seen = exchange(lambda n: None if n == 0 else ok(b"{}"), posts=2)
    assert isinstance(replies[0], TransportFailure) and "without a full response" in str(replies[0])
    assert replies[1].content == b"{}" and [c for c, _, _ in seen] == [1, 2]


def test_a_reply_cut_short_or_not_http_is_a_failure() -> None:
    responses = [b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\nconnection: close\r\n\r\n{\"a\":",
                 b"SMTP ready\r\n\r\n", b"HTTP/1.1 200 OK\r\ncontent-encoding: br\r\ncontent-length: 2\r\n\r\nxx"]
    replies, _ = exchange(lambda n: responses[n], posts=3)
    assert all(isinstance(r, TransportFailure) for r in replies)
    assert "without a full response" in str(replies[0]) and "bad HTTP response" in str(replies[1])
    assert "unsupported content-encoding 'br'" in str(replies[2])


def test_a_request_cut_by_its_timeout_closes_its_connection() -> None:
    replies, seen = exchange(lambda n: (0.5, ok(b"late")) if n == 0 else ok(b"{}"), posts=2, timeout_s=0.1)
    assert isinstance(replies[0], TransportFailure) and replies[0].timeout  # the client's own bound
    assert "no reply within 0.1 s" in str(replies[0])
    assert replies[1].content == b"{}" and [c for c, _, _ in seen] == [1, 2]  # never the timed-out connection


def test_refused_is_a_failure_and_https_or_a_proxy_goes_through_aiohttp(monkeypatch: pytest.MonkeyPatch) -> None:
    async def refused() -> Exception:
        try:
            await Http11Client().post("http://127.0.0.1:9/v1", b"{}", {}, 1.0)
        except TransportFailure as exc:
            return exc
        raise AssertionError("no failure")

    assert "ConnectionRefusedError" in str(asyncio.run(refused()))
    for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    auto = AutoClient()
    assert type(auto._route("http://127.0.0.1:8000/v1/chat/completions")).__name__ == "Http11Client"
    assert type(auto._route("https://api.openai.com/v1/chat/completions")).__name__ == "AiohttpClient"
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.internal:3128")
    assert type(auto._route("http://gpu-box:8000/v1/chat/completions")).__name__ == "AiohttpClient"


def test_no_line_break_reaches_the_wire_and_credentials_in_the_url_stay_out_of_host() -> None:
    async def head_of(url: str, headers: dict[str, str]) -> bytes:
        return Http11Client()._head(url, headers)[1]

    head = asyncio.run(head_of("http://user:pw@127.0.0.1:8000/v1/chat/completions", {"accept": "*/*"}))
    assert head.startswith(b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:8000\r\n") and b"pw" not in head
    for headers in ({"authorization": "Bearer sk-abc\r\nx-evil: 1"}, {"x\nname": "v"}):
        with pytest.raises(BackendError, match="line break or NUL") as info:  # at once: no retry can fix it
            asyncio.run(head_of("http://127.0.0.1:8000/v1", headers))
        assert "sk-abc" not in str(info.value)
