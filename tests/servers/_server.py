"""A scripted chat server on 127.0.0.1: real HTTP, a thread per connection, keep-alive.

`ScriptedServer("openai")` serves ``POST /v1/chat/completions``;
`ScriptedServer("anthropic")` serves ``POST /v1/messages``. Every request
is answered by ``server.reply(request_json, request_index)`` (settable at
any time) and recorded in ``server.requests`` with its secret headers
(Authorization, x-api-key) redacted: only their SHA-256 is kept, so a test
can check the right key was sent (`Recorded.sent_secret`) without the key
ever being stored.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ._script import Delay, Drop, HttpError, RawBody, Response, Script, Text, ToolCalls, always, text

SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key"})
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


@dataclass
class Recorded:
    """One request the server received."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased names; secret headers' values replaced by ``<redacted>``."""
    json: Any
    """The parsed body (None when it was not JSON)."""
    secret_digests: dict[str, str] = field(default_factory=dict)

    def sent_secret(self, header: str, value: str) -> bool:
        """True when header ``header`` carried exactly ``value``."""
        digest = hashlib.sha256(value.encode()).hexdigest()
        return self.secret_digests.get(header.lower()) == digest


def _openai_body(response: Text | ToolCalls, request: dict[str, Any], index: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": response.text}
    if isinstance(response, ToolCalls):
        message["tool_calls"] = [
            {
                "id": c.id or f"call_{index}_{n}",
                "type": "function",
                "function": {"name": c.name, "arguments": c.raw if c.raw is not None else json.dumps(c.args)},
            }
            for n, c in enumerate(response.calls)
        ]
    finish = "tool_calls" if isinstance(response, ToolCalls) else "stop"
    usage = {"prompt_tokens": response.input_tokens, "completion_tokens": response.output_tokens}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return {
        "id": f"chatcmpl-{index}",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def _anthropic_body(response: Text | ToolCalls, request: dict[str, Any], index: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if response.text is not None:
        content.append({"type": "text", "text": response.text})
    if isinstance(response, ToolCalls):
        for n, c in enumerate(response.calls):
            args = {"raw": c.raw} if c.raw is not None else c.args
            content.append({"type": "tool_use", "id": c.id or f"toolu_{index}_{n}", "name": c.name, "input": args})
    return {
        "id": f"msg_{index}",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", ""),
        "content": content,
        "stop_reason": "tool_use" if isinstance(response, ToolCalls) else "end_turn",
        "usage": {"input_tokens": response.input_tokens, "output_tokens": response.output_tokens},
    }


def _error_body(flavour: str, status: int) -> dict[str, Any]:
    message = f"scripted error {status}"
    if flavour == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": message}}
    return {"error": {"message": message, "type": "server_error", "code": None}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        self.server.owner._handle(self)

    def do_GET(self) -> None:
        self.server.owner._handle(self)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up (timeout tests) is expected, not noise


class ScriptedServer:
    """A real HTTP server on a free loopback port, answering from a script.

    Args:
        flavour: ``"openai"`` or ``"anthropic"`` (the wire format and path).
        reply: the script; defaults to the text ``"ok"`` for every request.
    """

    def __init__(self, flavour: str, reply: Script | None = None) -> None:
        if flavour not in PATHS:
            raise ValueError(f"flavour must be one of {sorted(PATHS)}, got {flavour!r}")
        self.flavour = flavour
        self.reply: Script = reply or always(text("ok"))
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.02,), name="scripted-server", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """What a backend takes as base URL: ``http://127.0.0.1:PORT/v1`` (OpenAI) or without ``/v1`` (Anthropic)."""
        root = f"http://127.0.0.1:{self.port}"
        return root + "/v1" if self.flavour == "openai" else root

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self, reply: Script | None = None) -> None:
        """Forget the recorded requests (numbering restarts at 0); set a new script when given."""
        with self._lock:
            self.requests.clear()
            if reply is not None:
                self.reply = reply

    def _record(self, handler: _Handler, body: bytes) -> Recorded:
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        headers, digests = {}, {}
        for name, value in handler.headers.items():
            name = name.lower()
            if name in SECRET_HEADERS:
                digests[name] = hashlib.sha256(value.encode()).hexdigest()
                value = "<redacted>"
            headers[name] = value
        with self._lock:
            recorded = Recorded(len(self.requests), handler.command, handler.path, headers, parsed, digests)
            self.requests.append(recorded)
        return recorded

    def _handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        recorded = self._record(handler, handler.rfile.read(length))
        if handler.path != PATHS[self.flavour]:
            self._send(handler, 404, {"error": {"message": f"no route {handler.path}"}}, {})
            return
        response = self.reply(recorded.json or {}, recorded.index)
        self._respond(handler, response, recorded)

    def _respond(self, handler: _Handler, response: Response, recorded: Recorded) -> None:
        while isinstance(response, Delay):
            if self._stopping.wait(response.seconds):
                return self._drop(handler)
            response = response.then
        if isinstance(response, Drop):
            self._drop(handler)
        elif isinstance(response, HttpError):
            body = response.body if response.body != "" else _error_body(self.flavour, response.status)
            self._send(handler, response.status, body, response.headers)
        elif isinstance(response, RawBody):
            self._send(handler, response.status, response.body, {})
        else:
            render = _anthropic_body if self.flavour == "anthropic" else _openai_body
            self._send(handler, 200, render(response, recorded.json or {}, recorded.index), {})

    @staticmethod
    def _send(handler: _Handler, status: int, body: dict[str, Any] | str, headers: dict[str, str]) -> None:
        data = (json.dumps(body) if isinstance(body, dict) else body).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json" if isinstance(body, dict) else "text/plain")
        handler.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()

    @staticmethod
    def _drop(handler: _Handler) -> None:
        handler.close_connection = True
        try:
            handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        handler.connection.close()
