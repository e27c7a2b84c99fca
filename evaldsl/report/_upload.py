"""Sending a finished run record to a server: POST, idempotent, retried, never fatal.

`upload_record` POSTs the record's JSON (exactly what ``--json`` writes) to
a URL with ``Content-Type: application/json``, ``Authorization: Bearer
$EVALDSL_UPLOAD_TOKEN`` when that variable is set, and an
``Idempotency-Key``: the SHA-256 of the record's suites, its agent (or
model) and its start time. The key is made from the record alone, not from
the machine or the directory, so `run --upload` and a later `evaldsl upload`
of the same record send the same key, and a server that honours the header
stores a retried or repeated upload once.

Retries: on HTTP 429 and 5xx, on connection errors and on timeouts, up to
`ATTEMPTS` attempts in all, waiting `BACKOFF` seconds, then twice that, and
so on (never more than `MAX_DELAY`); a ``Retry-After`` header (seconds or an
HTTP date) is waited out when it asks for longer. When it asks for more than
`MAX_DELAY`, the upload stops there rather than hold a CI job hostage. Other
statuses (400, 401, 404, a redirect: redirects are not followed, so the token
never goes to another host) are not retried.

With a token, a ``user:password@`` in the URL is not sent (the bearer token
is the credential); without one, httpx sends it as HTTP Basic.

Failure is a warning, never an exception: the run's exit code and its local
record are untouched. No message ever contains the token, and URLs are
shown without their user, password and query (where tokens hide).
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..run._record import EvalReport

TOKEN_ENV = "EVALDSL_UPLOAD_TOKEN"
ATTEMPTS = 4
TIMEOUT_S = 30.0
"""Per attempt: connect, send, and the server's answer."""
BACKOFF = 0.5
MAX_DELAY = 30.0


@dataclass(frozen=True)
class UploadResult:
    """How an upload ended."""

    ok: bool
    attempts: int
    status: int | None
    """The last HTTP status; None when no answer came."""
    message: str
    """One line for a person: where it went, or why it did not (never the token)."""


def idempotency_key(report: EvalReport) -> str:
    """The record's upload key: SHA-256 over its suites, its agent and its start time."""
    meta = report.meta
    started = meta.started_at.isoformat() if meta.started_at is not None else ""
    material = "\x1f".join(["evaldsl-record-v1", "\x1e".join(meta.suites), meta.agent, started])
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def shown_url(url: str) -> str:
    """``url`` without user, password, query and fragment: safe to print."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:
        return "(an unparsable URL)"


def upload_record(
    report: EvalReport,
    url: str,
    *,
    token: str | None = None,
    attempts: int = ATTEMPTS,
    timeout: float = TIMEOUT_S,
    backoff: float = BACKOFF,
    max_delay: float = MAX_DELAY,
    sleep: Callable[[float], None] = time.sleep,
    transport: Any = None,
) -> UploadResult:
    """POST ``report`` to ``url``; never raises (but KeyboardInterrupt).

    Args:
        report: the record to send.
        url: an http(s) URL.
        token: the bearer token; default ``$EVALDSL_UPLOAD_TOKEN`` (none when unset or empty).
        attempts: tries in all, at least 1.
        timeout: seconds per attempt.
        backoff: the first wait between tries; it doubles each time.
        max_delay: the longest wait, Retry-After included.
        sleep: how to wait (tests pass a recorder).
        transport: an httpx transport (tests); default a real connection.
    """
    token = os.environ.get(TOKEN_ENV) if token is None else token
    where = shown_url(url)
    if _scheme(url) not in ("http", "https"):
        return UploadResult(False, 0, None, f"not uploaded: {where or url!r} is not an http(s) URL with a host")

    headers = {"Content-Type": "application/json", "Idempotency-Key": idempotency_key(report),
               "User-Agent": f"evaldsl/{report.meta.evaldsl_version or 'unknown'}"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
        url = _without_userinfo(url)  # else httpx would send the URL's user:password as Basic instead
    body = report.model_dump_json().encode("utf-8")
    scrub = _scrubber(token, url)
    delay = backoff
    for attempt in range(1, max(1, attempts) + 1):
        status, why, wait = _bounded_attempt(url, body, headers, scrub, timeout, transport)
        if status is not None and 200 <= status < 300:
            return UploadResult(True, attempt, status, f"record uploaded to {where} (HTTP {status})")
        if wait is None or attempt >= attempts:
            tries = f" after {attempt} attempt(s)" if attempt > 1 else ""
            return UploadResult(False, attempt, status, f"upload to {where} failed{tries}: {why}")
        if wait > max_delay:
            return UploadResult(False, attempt, status, f"upload to {where} failed: {why}; the server asked "
                                f"to retry after {wait:g}s, longer than {max_delay:g}s, so it was not retried")
        sleep(max(min(delay, max_delay), wait))
        delay *= 2
    raise AssertionError("unreachable")  # pragma: no cover


def _bounded_attempt(
    url: str, body: bytes, headers: dict[str, str], scrub: Callable[[str], str], timeout: float, transport: Any
) -> tuple[int | None, str, float | None]:
    """`_attempt` bounded as a whole by ``timeout`` seconds: httpx's timeouts bound each read, so a
    server that trickles its reply a byte at a time would hold it forever. The attempt runs on a
    daemon thread with a client of its own; past the bound it is abandoned (its socket closes with
    the process) and counted a timeout, which is retried like any other."""
    import httpx

    outcome: list[tuple[int | None, str, float | None]] = []

    def work() -> None:
        try:
            with httpx.Client(timeout=timeout, follow_redirects=False, transport=transport) as client:
                outcome.append(_attempt(client, url, body, headers, scrub))
        except Exception as exc:  # anything the client itself raised: this attempt's failure
            outcome.append((None, scrub(f"{type(exc).__name__}: {exc}"), None))

    thread = threading.Thread(target=work, name="evaldsl-upload", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive() or not outcome:
        return None, f"timed out: no whole reply within {timeout:g}s", 0.0
    return outcome[0]


def _attempt(
    client: Any, url: str, body: bytes, headers: dict[str, str], scrub: Callable[[str], str]
) -> tuple[int | None, str, float | None]:
    """One POST: (status, why it failed, how long to wait before a retry or None for no retry)."""
    import httpx

    try:
        response = client.post(url, content=body, headers=headers)
    except httpx.TimeoutException as exc:
        return None, scrub(f"timed out ({type(exc).__name__})"), 0.0
    except httpx.TransportError as exc:
        return None, scrub(f"{type(exc).__name__}: {exc}"), 0.0
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:  # a URL httpx cannot use, and the like
        return None, scrub(f"{type(exc).__name__}: {exc}"), None
    status = response.status_code
    if 200 <= status < 300:
        return status, "", None
    why = f"HTTP {status}" + (f": {scrub(_snippet(response.text))}" if response.text.strip() else "")
    if status == 429 or status >= 500:
        return status, why, _retry_after(response.headers.get("Retry-After"))
    if 300 <= status < 400:
        why += " (a redirect; not followed, so the token never leaves for another address)"
    return status, why, None


def _without_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` (a URL that does not parse is left for the POST to report)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[1], parts.path, parts.query, parts.fragment))


def _scheme(url: str) -> str:
    """The URL's scheme; '' when it is unparsable or names no host."""
    try:
        parts = urlsplit(url)
        return parts.scheme if parts.hostname else ""
    except ValueError:
        return ""


def _retry_after(value: str | None) -> float:
    """Seconds a ``Retry-After`` header asks for (0 when absent or unreadable)."""
    if not value:
        return 0.0
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return 0.0
    return max(0.0, when.timestamp() - time.time())


def _snippet(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "…"


def _scrubber(token: str | None, url: str) -> Callable[[str], str]:
    """Removes the token and the full URL (which may hold credentials) from a message."""
    secrets = [s for s in (url, token) if s]
    safe = shown_url(url)

    def scrub(message: str) -> str:
        for secret in secrets:
            message = message.replace(secret, safe if secret == url else "***")
        return message

    return scrub


def print_upload(result: UploadResult) -> None:
    """Print a failed upload as a warning on stderr (a success as a note)."""
    prefix = "evaldsl: " if result.ok else "evaldsl: warning: "
    print(prefix + result.message + ("" if result.ok else "; the local record is unchanged"), file=sys.stderr)
