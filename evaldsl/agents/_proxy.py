"""The recording model proxy: OpenAI- and Anthropic-compatible, on 127.0.0.1, one per evaldsl run.

An agent in any language reaches its model through ``OPENAI_BASE_URL`` /
``ANTHROPIC_BASE_URL``; pointing those here lets evaldsl see its tool calls
without the agent reporting anything. Each run has its own path prefix
(``/<run id>/openai/v1``, ``/<run id>/anthropic``), so concurrent runs are
told apart by URL alone. Requests are forwarded with the agent's own
headers to the upstream; streamed replies (``text/event-stream``) are passed
on chunk by chunk as they arrive and folded into the recording at the end.
Headers are never recorded: no ``Authorization`` / ``x-api-key``, nor any
key's value, reaches a recording, a record or a log.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ._recording import Recording

OPENAI_PUBLIC = "https://api.openai.com/v1"
ANTHROPIC_PUBLIC = "https://api.anthropic.com"
_HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "accept-encoding",
        "proxy-authorization", "proxy-connection", "te", "trailer", "upgrade"}
_VARIABLE = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
MAX_RECORDED = 16 << 20
"""The most of one streamed reply kept for the recording (bytes); the agent still gets all of it."""


def upstreams(upstream: str | None = None) -> dict[str, str]:
    """Where each provider's requests go: ``--upstream``, else evaldsl's own environment, else the public API."""
    return {
        "openai": (upstream or os.environ.get("OPENAI_BASE_URL") or OPENAI_PUBLIC).rstrip("/"),
        "anthropic": (upstream or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_PUBLIC).rstrip("/"),
    }


class RecordingProxy:
    """``await start()``, then ``open_run(id)`` per run (its base URLs), ``close_run(id)`` at its end."""

    def __init__(self, upstream: str | None = None) -> None:
        self.upstreams = upstreams(upstream)
        self._runs: dict[str, Recording] = {}
        self._runner: Any = None
        self._session: Any = None
        self.port = 0

    async def start(self) -> None:
        from aiohttp import ClientSession, ClientTimeout, DummyCookieJar, web

        app = web.Application(client_max_size=64 << 20)
        app.router.add_route("*", "/{run}/{provider}/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self._session = ClientSession(timeout=ClientTimeout(total=None, sock_connect=30), auto_decompress=False,
                                      cookie_jar=DummyCookieJar())

    def open_run(self, run_id: str) -> dict[str, str]:
        """Start recording a run; the environment that points its agent here."""
        self._runs[run_id] = Recording()
        base = f"http://127.0.0.1:{self.port}/{run_id}"
        return {"OPENAI_BASE_URL": f"{base}/openai/v1", "ANTHROPIC_BASE_URL": f"{base}/anthropic"}

    def recording(self, run_id: str) -> Recording:
        """What a run's model calls said so far."""
        return self._runs.setdefault(run_id, Recording())

    def close_run(self, run_id: str) -> Recording:
        return self._runs.pop(run_id, None) or Recording()

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    def _shown(self, provider: str) -> str:
        """The provider's upstream as a message may show it: no user, password or query (a run's error is
        written to its record)."""
        from ..report._upload import shown_url

        return shown_url(self.upstreams[provider])

    def _target(self, provider: str, tail: str, query: str) -> str:
        """Where a request below the run's prefix goes: ``{upstream}/{tail}``, the upstream's own query (an
        Azure-style ``?api-version=``) and then the request's."""
        if provider == "openai":
            tail = tail[3:] if tail.startswith("v1/") else tail  # {OPENAI_BASE_URL}/X -> {upstream}/X
        base, _, own = self.upstreams[provider].partition("?")
        queries = "&".join(q for q in (own, query) if q)
        return f"{base.rstrip('/')}/{tail}" + (f"?{queries}" if queries else "")

    async def _handle(self, request: Any) -> Any:
        from aiohttp import ClientError, web

        provider = request.match_info["provider"]
        recording = self._runs.get(request.match_info["run"])
        if recording is None or provider not in self.upstreams:
            return web.json_response({"error": {"message": "evaldsl proxy: no such run or provider"}}, status=404)
        body = await request.read()
        recording.request(provider, _json(body))
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        try:
            upstream = await self._session.request(request.method, self._target(
                provider, request.match_info["tail"], request.query_string), data=body, headers=headers,
                allow_redirects=False)
        except (ClientError, OSError, ValueError) as exc:
            if isinstance(exc, ValueError):  # (aiohttp's own refusals: credentials in the URL and a header, a bad URL)
                recording.problem(f"evaldsl's recording proxy could not send the request to the model at "
                                  f"{self._shown(provider)}: {exc}")
            else:
                recording.problem(f"evaldsl's recording proxy could not reach the model at {self._shown(provider)} "
                                  f"({exc}): give `--upstream URL`, or set {_VARIABLE[provider]} where evaldsl runs")
            return web.json_response({"error": {"message": f"evaldsl proxy: upstream unreachable: {exc}"}}, status=502)
        async with upstream:
            if upstream.status >= 400:  # (the status alone: a body may echo what the agent sent, its key too)
                recording.problem(f"the model at {self._shown(provider)} answered HTTP {upstream.status} "
                                  "through evaldsl's recording proxy")
            out = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP}
            if upstream.content_type == "text/event-stream":
                return await self._stream(request, upstream, out, recording, provider)
            data = await upstream.read()
            if 200 <= upstream.status < 300:
                recording.response(provider, _json(data))
            return web.Response(status=upstream.status, body=data, headers=out)

    @staticmethod
    async def _stream(request: Any, upstream: Any, headers: dict[str, str], recording: Recording,
                      provider: str) -> Any:
        from aiohttp import web

        response = web.StreamResponse(status=upstream.status, headers=headers)
        await response.prepare(request)
        kept: list[bytes] = []
        size = 0
        async for chunk in upstream.content.iter_any():
            await response.write(chunk)
            if size < MAX_RECORDED:
                kept.append(chunk)
                size += len(chunk)
        await response.write_eof()
        recording.stream(provider, _sse_events(b"".join(kept)))
        return response


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _sse_events(data: bytes) -> list[Any]:
    """The JSON payloads of a server-sent-events body's ``data:`` lines (``[DONE]`` and the rest skipped)."""
    events = []
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("data:"):
            payload = line[5:].strip()
            if payload and payload != "[DONE]":
                events.append(_json(payload.encode()))
    return events
