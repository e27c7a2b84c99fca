"""Faults against a loopback server: retries, Retry-After, timeouts, dropped connections, and the key never shown."""

from __future__ import annotations

import asyncio
import email.utils
import time
import traceback
from typing import Any

import pytest
from servers import Delay, Drop, HttpError, ScriptedServer, always, sequence, text

from evaldsl.models._backends import make_backend
from evaldsl.models._chat import BackendError, ChatReply
from evaldsl.models._retry import RetryPolicy, retry_after
from evaldsl.models._transport import HttpReply

SENTINEL = "sk-SENTINEL-0123456789abcdef-KEY"
FAST = RetryPolicy(attempts=5, base_delay_s=0.001, max_delay_s=0.005)
USER = [{"role": "user", "content": "hi"}]
raised: list[BaseException] = []


@pytest.fixture(autouse=True)
def sentinel_keys(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every test here runs with the sentinel as both keys; every error raised is checked for it."""
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SENTINEL)
    raised.clear()
    yield
    for error in raised:
        shown = str(error) + repr(error) + "".join(traceback.format_exception(error))
        assert SENTINEL not in shown and SENTINEL[-8:] not in shown


def chat(server: ScriptedServer, *, policy: RetryPolicy = FAST, **kwargs: Any) -> ChatReply:
    async def go() -> ChatReply:
        backend = make_backend(f"{server.flavour}:m", base_url=server.base_url, retry=policy)
        try:
            return await backend.chat(USER, **kwargs)
        except BaseException as exc:
            raised.append(exc)
            raise
        finally:
            await backend.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("flavour", ["openai", "anthropic"])
def test_429_with_retry_after_is_retried(flavour: str, request: pytest.FixtureRequest) -> None:
    server: ScriptedServer = request.getfixturevalue(f"{flavour}_server")
    server.reply = sequence(HttpError(429, headers={"retry-after": "0"}), HttpError(529), text("done"))
    assert chat(server).text == "done"
    assert len(server.requests) == 3
    assert server.requests[0].sent_secret(
        "authorization" if flavour == "openai" else "x-api-key",
        f"Bearer {SENTINEL}" if flavour == "openai" else SENTINEL,
    )


def test_500_then_success(openai_server: ScriptedServer) -> None:
    openai_server.reply = sequence(HttpError(500), HttpError(502), text("ok"))
    assert chat(openai_server).text == "ok" and len(openai_server.requests) == 3


def test_500_forever_gives_status_and_the_apis_message(openai_server: ScriptedServer) -> None:
    openai_server.reply = always(HttpError(500, {"error": {"message": "The server had an error", "type": "server"}}))
    with pytest.raises(BackendError) as info:
        chat(openai_server, policy=RetryPolicy(attempts=3, base_delay_s=0.001))
    assert info.value.status == 500
    assert str(info.value) == "openai:m: HTTP 500: The server had an error (server) (after 3 attempts)"
    assert len(openai_server.requests) == 3


def test_anthropic_error_body_is_read(anthropic_server: ScriptedServer) -> None:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: too large"}}
    anthropic_server.reply = always(HttpError(400, body))
    with pytest.raises(BackendError, match=r"HTTP 400: max_tokens: too large \(invalid_request_error\)$") as info:
        chat(anthropic_server)
    assert info.value.status == 400 and len(anthropic_server.requests) == 1  # not retried


def test_an_echoed_key_is_redacted(openai_server: ScriptedServer) -> None:
    message = f"Incorrect API key provided: {SENTINEL}. Or ...{SENTINEL[-8:]}"
    openai_server.reply = always(HttpError(401, {"error": {"message": message}}))
    with pytest.raises(BackendError, match="Incorrect API key provided: <redacted>") as info:
        chat(openai_server)
    assert info.value.status == 401


def test_dropped_connection_then_success(openai_server: ScriptedServer) -> None:
    openai_server.reply = sequence(Drop(), text("back"))
    assert chat(openai_server).text == "back" and len(openai_server.requests) == 2


def test_dropped_forever_is_a_connection_error(anthropic_server: ScriptedServer) -> None:
    anthropic_server.reply = always(Drop())
    with pytest.raises(BackendError, match=r"connection error .*\(after 2 attempts\)$") as info:
        chat(anthropic_server, policy=RetryPolicy(attempts=2, base_delay_s=0.001))
    assert info.value.status is None


def test_refused_connection_is_a_connection_error() -> None:
    with ScriptedServer("openai") as server:
        url = server.base_url
    backend = make_backend("openai:m", base_url=url, retry=RetryPolicy(attempts=2, base_delay_s=0.001))

    async def go() -> None:
        try:
            await backend.chat(USER)
        finally:
            await backend.aclose()

    with pytest.raises(BackendError, match=r"connection error") as info:
        asyncio.run(go())
    raised.append(info.value)


def test_slow_reply_beyond_the_timeout(openai_server: ScriptedServer) -> None:
    openai_server.reply = always(Delay(10, text("late")))
    with pytest.raises(BackendError, match=r"timed out: no reply within 0\.3 s") as info:
        chat(openai_server, timeout_s=0.3)
    assert info.value.status is None


def test_a_slow_attempt_is_retried_within_the_case_timeout(openai_server: ScriptedServer) -> None:
    openai_server.reply = sequence(Delay(10, text("late")), text("quick"))
    policy = RetryPolicy(base_delay_s=0.001, request_timeout_s=0.2)
    assert chat(openai_server, policy=policy, timeout_s=5).text == "quick"
    assert len(openai_server.requests) == 2


def test_retry_after_beyond_the_budget_stops_at_once(openai_server: ScriptedServer) -> None:
    openai_server.reply = always(HttpError(429, headers={"retry-after": "60"}))
    with pytest.raises(BackendError, match=r"HTTP 429: .*next retry \(in 60\.0 s\) would pass the 2 s budget") as info:
        chat(openai_server, timeout_s=2)
    assert info.value.status == 429 and len(openai_server.requests) == 1


def test_retry_after_forms() -> None:
    def after(**headers: str) -> float | None:
        return retry_after(HttpReply(429, headers, b""))

    assert after() is None and after(**{"retry-after": "soon"}) is None
    assert after(**{"retry-after": "2"}) == 2.0 and after(**{"retry-after": "-1"}) == 0.0
    assert after(**{"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    in_30s = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < (after(**{"retry-after": in_30s}) or 0) <= 30


def test_backoff_is_full_jitter_and_capped() -> None:
    policy = RetryPolicy(base_delay_s=1, max_delay_s=4)
    waits = [policy.backoff(n) for n in range(6) for _ in range(50)]
    assert all(0 <= w <= 4 for w in waits)
    assert max(policy.backoff(5) for _ in range(50)) > 1  # grows past the base
