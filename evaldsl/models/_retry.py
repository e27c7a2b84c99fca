"""Retries: exponential backoff with full jitter, `Retry-After`, and a deadline.

Model APIs fail in ways that fix themselves: rate limits (429), overload
(529, 503), a gateway hiccup (502, 504), a dropped keep-alive connection,
a reply that never comes. `send_with_retries` retries exactly those, waits
what the server asks (`Retry-After` in seconds or as an HTTP date, or
`retry-after-ms`) or else a random delay up to ``base * 2**n`` (full
jitter, so many cases rate-limited together do not retry in lockstep), and
stops at ``attempts`` or at the deadline, whichever comes first. Every other
status (400, 401, 404, ...) fails at once: retrying cannot fix it.

What survives is one `BackendError` carrying the status and the API's own
message. Error text passes through `redact`, so a key that an API echoes
back (or that sits in a URL) never reaches a record or a log.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ._chat import BackendError
from ._transport import HttpReply, ReplyTooLarge, TransportFailure

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
AFTER_RETRIES = re.compile(r"\(after \d+ attempts?\)")
"""Ends the message of every failure that retrying might have fixed (the endpoint was
down, overloaded or too slow): `endpoint_failed` finds such runs in a record."""


def endpoint_failed(message: str) -> bool:
    """True for a run error that says the endpoint could not be reached or kept failing after
    the retries (connection errors, timeouts, 429 and 5xx), so that ``--resume`` runs it again."""
    return AFTER_RETRIES.search(message) is not None


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try one request.

    Args:
        attempts: tries in all, the first included (at least 1).
        base_delay_s: the first backoff's upper bound; doubles each retry.
        max_delay_s: the cap of one backoff (a server's ``Retry-After`` may exceed it).
        total_s: the whole request's budget, waits included; a case's
            ``timeout_s`` shortens it further.
        request_timeout_s: the bound of one attempt.
    """

    attempts: int = 5
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    total_s: float = 300.0
    request_timeout_s: float = 120.0

    def backoff(self, retry: int) -> float:
        """The random wait before retry number ``retry`` (0-based): full jitter."""
        return random.uniform(0.0, min(self.max_delay_s, self.base_delay_s * (2**retry)))


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (and its last 8 characters, as APIs echo them) replaced."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "<redacted>")
            if len(secret) >= 16:
                text = text.replace(secret[-8:], "<redacted>")
    return text


def redact_value(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` (decoded JSON) with `redact` applied to every string in it, keys included: a key
    that a reply spelled with JSON escapes (``\\u0073k-...``) is only visible once decoded."""
    secrets = tuple(s for s in secrets if s)
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact(k, secrets): redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v, secrets) for v in value]
    return value


def api_message(response: HttpReply) -> str:
    """The API's error message: from its JSON error body where it has one, else the text (trimmed)."""
    try:
        body: Any = json.loads(response.content)
    except ValueError:
        body = None
    found = _message_in(body)
    if found:
        return found
    text = response.text.strip().replace("\n", " ")
    return (text[:300] + "...") if len(text) > 300 else (text or response.reason_phrase or "no message")


def _message_in(body: Any) -> str | None:
    """OpenAI ``{"error": {"message"}}``, Anthropic ``{"error": {"type", "message"}}``,
    ``{"error": "..."}`` (Ollama, llama.cpp), ``{"message"}``, ``{"detail"}`` (FastAPI servers)."""
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        kind = error.get("type")
        return f"{error['message']} ({kind})" if isinstance(kind, str) and kind else error["message"]
    for value in (error, body.get("message"), body.get("detail")):
        if isinstance(value, str) and value:
            return value
    return None


def retry_after(response: HttpReply) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms``, ``Retry-After`` seconds or date), if any."""
    millis = response.headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # only for the rare HTTP-date form: not paid at start-up

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _transport_reason(exc: BaseException, bound: float) -> str:
    if isinstance(exc, asyncio.TimeoutError) or (isinstance(exc, TransportFailure) and exc.timeout):
        return f"timed out: no reply within {bound:.3g} s"
    if isinstance(exc, TransportFailure):
        return f"connection error ({exc})"
    return f"connection error ({type(exc).__name__}: {str(exc).strip() or type(exc).__name__})"


Send = Callable[[float], Awaitable[HttpReply]]


async def _bounded(awaitable: Awaitable[HttpReply], seconds: float) -> HttpReply:
    """``awaitable`` within ``seconds``; `asyncio.timeout` (3.11+) makes no extra task, unlike `wait_for`."""
    timeout = getattr(asyncio, "timeout", None)
    if timeout is None:  # Python 3.10
        return await asyncio.wait_for(awaitable, seconds)
    async with timeout(seconds):
        return await awaitable


class EndpointRefused(BackendError):
    """The endpoint refused the connection before it had ever answered: nothing listens there."""


async def send_with_retries(
    send: Send, *, policy: RetryPolicy, timeout_s: float | None, label: str, secrets: Iterable[str] = (),
    refused_is_final: bool = False,
) -> HttpReply:
    """Call ``send(attempt_timeout_s)`` until it returns a 2xx response; raise `BackendError` otherwise.

    Args:
        send: makes one attempt, bounded by the seconds it is given.
        policy: attempts, delays and budgets.
        timeout_s: the caller's bound on the whole request (a case's timeout), or None.
        label: names the backend in error messages.
        secrets: strings that must never appear in an error message.
        refused_is_final: a refused connection raises `EndpointRefused` at once, unretried (the
            backend says so until its endpoint has answered once: a server that is not there yet
            is not coming back in the seconds the retries wait).
    """
    secrets = tuple(secrets)
    budget = policy.total_s if timeout_s is None else min(policy.total_s, timeout_s)
    deadline = time.monotonic() + budget
    problem, status, made = f"timed out: no reply within the {budget:g} s timeout", None, 0
    while made < max(1, policy.attempts):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        made += 1
        wait: float | None = None
        bound = min(policy.request_timeout_s, left)
        try:
            response = await _bounded(send(bound), bound)
        except ReplyTooLarge as exc:  # asking again would read as much again
            raise BackendError(redact(f"{label}: {exc}", secrets), status=None, kind="backend_protocol") from None
        except (TransportFailure, asyncio.TimeoutError, OSError) as exc:
            problem, status = _transport_reason(exc, bound), None
            if refused_is_final and isinstance(exc, TransportFailure) and exc.refused:
                raise EndpointRefused(redact(f"{label}: {problem}", secrets), kind="backend_connection") from None
        else:
            if response.is_success:
                return response
            status = response.status_code
            problem = f"HTTP {status}: {api_message(response)}"
            if status not in RETRY_STATUSES:
                raise BackendError(redact(f"{label}: {problem}", secrets), status=status)
            wait = retry_after(response)
        if made >= policy.attempts:
            break
        wait = policy.backoff(made - 1) if wait is None else wait
        if time.monotonic() + wait >= deadline:
            problem += f"; the next retry (in {wait:.1f} s) would pass the {budget:g} s budget"
            break
        await asyncio.sleep(wait)
    tries = f"{made} attempt{'' if made == 1 else 's'}"
    kind = "backend_connection" if status is None else "backend_overloaded"  # what asking later may fix
    raise BackendError(redact(f"{label}: {problem} (after {tries})", secrets), status=status, kind=kind)
