"""A record-receiving HTTP server on 127.0.0.1 for the upload tests, started by the test."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: str = ""
    trickle: float = 0.0
    """Send the body a byte at a time, this many seconds apart (a server that never quite stops)."""


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """Answers each POST with the next scripted `Reply` (the last one repeats) and keeps what it got."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = replies
        self.received: list[Received] = []
        self.url = ""

    def next_reply(self) -> Reply:
        index = min(len(self.received) - 1, len(self.replies) - 1)
        return self.replies[index]


@contextmanager
def receiver(*replies: Reply) -> Iterator[Receiver]:
    state = Receiver(list(replies) or [Reply()])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            state.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            reply = state.next_reply()
            if reply.delay:
                time.sleep(reply.delay)
            data = reply.body.encode()
            try:
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if reply.trickle:
                    for byte in data:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(reply.trickle)
                else:
                    self.wfile.write(data)
            except OSError:  # the client gave up (a timeout test)
                pass

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/runs"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
