"""What every HTTP backend shares: the cache check, the retried POST, the parse, the secrets.

A provider module (`_openai`, `_anthropic`) says only how to build its
request body and headers and how to read its reply; `HttpBackend.chat`
does the rest in one order: build the body, look it up in the cache, POST
it with retries, parse, store. The API key is kept on the backend, sent
only as a header, never part of a cache key, a `describe()`, a repr or an
error message (`redact` runs over every message, as a last line of defence
against an API that echoes it, and over a reply body that holds the key,
before it is parsed or cached: a model or judge that repeats the key can
put it in no artifact, record or judge error).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from ._cache import ResponseCache, request_key
from ._chat import BackendError, ChatReply, Sampling
from ._retry import EndpointRefused, RetryPolicy, redact, redact_value, send_with_retries
from ._transport import SharedClient

NO_SAMPLING = Sampling()
BASE_HEADERS = {"content-type": "application/json", "accept": "application/json", "user-agent": "evaldsl"}


def _endpoint(url: str) -> str:
    """The endpoint, checked once (not per request); ValueError for a URL no request could use."""
    try:
        parsed = urlsplit(url)
        parsed.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError as exc:
        raise ValueError(f"bad base URL {url!r}: {exc}") from None
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ValueError(f"bad base URL {url!r}: expected http://HOST[:PORT]/... or https://...")
    return url


def without_password(url: str) -> str:
    """``url`` with the password of its user part (``http://user:pw@host``) shown as ``***``:
    what a record's meta, a repr or a message may show of a base URL."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{user.partition(':')[0]}:***@{host}"))


class HttpBackend:
    """A chat backend over HTTP; subclasses give the wire format."""

    provider: ClassVar[str]
    path: ClassVar[str]
    """Appended to the base URL to make the endpoint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None,
        cache: ResponseCache | None = None,
        retry: RetryPolicy | None = None,
        client: SharedClient | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.label = f"{self.provider}:{model}"
        self.cache = cache
        self.retry = retry or RetryPolicy()
        self.client = client or SharedClient()
        self._api_key = api_key or None
        key = self._api_key or ""
        self._key_mark = (key[-8:] if len(key) >= 16 else key).encode()
        """The shortest part of the key that `redact` hides (the whole key holds it): found in a reply cheaply."""
        self._url = _endpoint(self.base_url + self.path)
        self.reached = False
        """True once the endpoint has answered a request (any status)."""
        self.down: str | None = None
        """Why the endpoint is taken to be down: it refused the connection before it ever answered."""
        self._headers = self.headers()
        """Built once: a provider's headers depend only on the key, fixed at construction."""

    def describe(self) -> dict[str, Any]:
        """What a record's meta keeps of this backend: never the key."""
        return {"provider": self.provider, "model": self.model, "base_url": without_password(self.base_url)}

    async def aclose(self) -> None:
        """Close the HTTP client (its pooled connections)."""
        await self.client.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.label!r}, base_url={without_password(self.base_url)!r})"

    def headers(self) -> dict[str, str]:
        """The request's headers, credentials included."""
        raise NotImplementedError

    def build(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        response_schema: dict[str, Any] | None,
        sampling: Sampling,
    ) -> dict[str, Any]:
        """The request body, in the provider's format."""
        raise NotImplementedError

    def parse(self, body: dict[str, Any], response_schema: dict[str, Any] | None) -> ChatReply:
        """The reply of a successful response; raises ValueError/KeyError/TypeError when it is malformed."""
        raise NotImplementedError

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_schema: dict[str, Any] | None = None,
        sampling: Sampling = NO_SAMPLING,
        repeat_index: int = 0,
        timeout_s: float | None = None,
        accept: Callable[[ChatReply], object] | None = None,
    ) -> ChatReply:
        body = self.build(messages, tools, response_schema, sampling)
        key = None
        if self.cache is not None:
            key = request_key({"provider": self.provider, "base_url": self.base_url, "body": body}, repeat_index)
            stored = self.cache.get(key)
            if stored is not None:
                try:
                    reply = self.parse(stored, response_schema)
                except (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError):
                    reply = None  # an entry this version cannot read: ask again, and overwrite it
                if reply is not None and _accepted(accept, reply):
                    return dataclasses.replace(reply, cached=True)
        data = await self._post(json.dumps(body, ensure_ascii=False).encode(), timeout_s)
        reply = self._parsed(data, response_schema)
        if key is not None and self.cache is not None and _accepted(accept, reply):
            self.cache.put(key, data)  # only a reply that was read (and that the caller could use) is kept
        return reply

    async def _post(self, content: bytes, timeout_s: float | None) -> dict[str, Any]:
        client, url, headers = self.client.get(), self._url, self._headers

        def send(attempt_timeout: float) -> Any:
            return client.post(url, content, headers, attempt_timeout)

        try:
            response = await send_with_retries(send, policy=self.retry, timeout_s=timeout_s, label=self.label,
                                               secrets=self._secrets(), refused_is_final=not self.reached)
        except EndpointRefused as exc:
            if not self.reached:
                self.down = f"{without_password(self._url)} refused the connection ({exc})"
            raise
        except BackendError as exc:
            self.reached = self.reached or exc.status is not None  # it answered, with an error
            raise
        self.reached = True
        body = response.content
        if self._key_mark and self._key_mark in body:  # a reply that echoes the key: never kept
            body = redact(body.decode("utf-8", "replace"), self._secrets()).encode()
        try:
            data = json.loads(body)
        except RecursionError:
            raise self._error("a reply nested too deep to read", response.status_code) from None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            status = response.status_code
            raise self._error(f"HTTP {status} with a body that is not a JSON object", status)
        if self._key_mark and b"\\u" in body:  # \u escapes may spell the key: look at the decoded text
            try:
                data = redact_value(data, self._secrets())
            except RecursionError:
                raise self._error("a reply nested too deep to read", response.status_code) from None
        return data

    def _parsed(self, data: dict[str, Any], response_schema: dict[str, Any] | None) -> ChatReply:
        try:
            return self.parse(data, response_schema)
        except RecursionError:
            raise self._error("a reply this backend cannot read (nested too deep)", 200) from None
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            raise self._error(f"a reply this backend cannot read ({type(exc).__name__}: {exc})", 200) from None

    def _secrets(self) -> tuple[str, ...]:
        return (self._api_key,) if self._api_key else ()

    def _error(self, problem: str, status: int | None) -> BackendError:
        """A reply that arrived but cannot be read (its status was a success)."""
        return BackendError(redact(f"{self.label}: {problem}", self._secrets()), status=status,
                            kind="backend_protocol")


def _accepted(accept: Callable[[ChatReply], object] | None, reply: ChatReply) -> bool:
    """Whether the caller can use ``reply`` (its ``accept`` raises ValueError when not): only such a
    reply is cached, so a judge reply that could not be read is asked again next time, never replayed."""
    if accept is None:
        return True
    try:
        accept(reply)
    except ValueError:
        return False
    return True
