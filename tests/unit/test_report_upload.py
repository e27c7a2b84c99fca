"""upload_record against real servers on 127.0.0.1: headers, body, idempotency, retries, timeouts, secrecy."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from _receiver import Reply, receiver
from _records import case, record, run

from evaldsl.report._upload import idempotency_key, shown_url, upload_record
from evaldsl.run._record import EvalReport

TOKEN = "s3cr3t-t0ken-value"


@pytest.fixture(autouse=True)
def _no_proxy_no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("EVALDSL_UPLOAD_TOKEN", raising=False)


def sample() -> EvalReport:
    return record(case("adds", run()), case("wrong", run(False)))


def test_success_posts_the_record_with_token_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALDSL_UPLOAD_TOKEN", TOKEN)
    report = sample()
    with receiver(Reply(201)) as server:
        result = upload_record(report, server.url)
    assert result.ok and result.status == 201 and result.attempts == 1
    [got] = server.received
    assert got.path == "/runs"
    assert got.headers["authorization"] == f"Bearer {TOKEN}"
    assert got.headers["content-type"] == "application/json"
    assert got.headers["idempotency-key"] == idempotency_key(report)
    assert EvalReport.model_validate_json(got.body) == report
    assert TOKEN not in result.message


def test_with_a_token_the_bearer_header_is_the_credential_even_with_user_info_in_the_url(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with receiver(Reply(201)) as server:
        with_info = server.url.replace("://", "://me:pw@", 1)
        assert upload_record(sample(), with_info).ok  # no token: the URL's user:password, as HTTP Basic
        monkeypatch.setenv("EVALDSL_UPLOAD_TOKEN", TOKEN)
        result = upload_record(sample(), with_info + "?q=1")
    assert result.ok and "me:pw" not in result.message
    basic, bearer = server.received
    assert basic.headers["authorization"].startswith("Basic ")
    assert bearer.headers["authorization"] == f"Bearer {TOKEN}" and bearer.path == "/runs?q=1"


def test_no_token_no_authorization_header() -> None:
    with receiver() as server:
        assert upload_record(sample(), server.url).ok
    assert "authorization" not in server.received[0].headers


def test_idempotency_key_depends_on_suites_agent_and_start_only() -> None:
    a, b = sample(), sample()
    b.cases = b.cases[:1]  # other results, same run
    assert idempotency_key(a) == idempotency_key(b)
    assert len(idempotency_key(a)) == 64
    later = record(case("adds", run()), started=datetime(2026, 3, 2, tzinfo=timezone.utc))
    other = record(case("adds", run()), agent="agent-b")
    assert len({idempotency_key(a), idempotency_key(later), idempotency_key(other)}) == 3


def test_500_twice_then_200_is_retried_with_the_same_key() -> None:
    waits: list[float] = []
    with receiver(Reply(500), Reply(503), Reply(200)) as server:
        result = upload_record(sample(), server.url, sleep=waits.append, backoff=0.5)
    assert result.ok and result.attempts == 3
    assert waits == [0.5, 1.0]
    keys = {r.headers["idempotency-key"] for r in server.received}
    assert len(server.received) == 3 and len(keys) == 1
    assert server.received[0].body == server.received[2].body


def test_retry_after_is_honoured_and_a_long_one_stops_retrying() -> None:
    waits: list[float] = []
    with receiver(Reply(429, {"Retry-After": "3"}), Reply(200)) as server:
        assert upload_record(sample(), server.url, sleep=waits.append, backoff=0.5).ok
    assert waits == [3.0]
    with receiver(Reply(503, {"Retry-After": "3600"})) as server:
        result = upload_record(sample(), server.url, sleep=waits.append, max_delay=30)
    assert not result.ok and len(server.received) == 1
    assert "retry after 3600s" in result.message


def test_500_forever_gives_up_with_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALDSL_UPLOAD_TOKEN", TOKEN)
    waits: list[float] = []
    with receiver(Reply(500, body=f"internal error, your token {TOKEN} was bad")) as server:
        result = upload_record(sample(), server.url, sleep=waits.append, attempts=4)
    assert not result.ok and result.attempts == 4 and len(server.received) == 4
    assert waits == [0.5, 1.0, 2.0]
    assert "HTTP 500" in result.message and "after 4 attempt(s)" in result.message
    assert TOKEN not in result.message and "***" in result.message


def test_client_errors_are_not_retried() -> None:
    with receiver(Reply(401, body="bad token")) as server:
        result = upload_record(sample(), server.url, sleep=lambda s: None)
    assert not result.ok and len(server.received) == 1 and "HTTP 401: bad token" in result.message


def test_redirects_are_not_followed() -> None:
    with receiver(Reply(307, {"Location": "http://127.0.0.1:9/elsewhere"})) as server:
        result = upload_record(sample(), server.url, token=TOKEN)
    assert not result.ok and len(server.received) == 1 and "not followed" in result.message


def test_a_slow_server_times_out_into_a_warning() -> None:
    with receiver(Reply(200, delay=2.0)) as server:
        result = upload_record(sample(), server.url, timeout=0.2, attempts=2, sleep=lambda s: None)
    assert not result.ok and result.status is None and "timed out" in result.message
    assert len(server.received) == 2  # a timeout is retried: the key makes a second POST safe


def test_a_server_that_trickles_its_reply_is_bounded_as_a_whole() -> None:
    # each byte comes within httpx's read timeout, so only a bound on the whole request stops it
    with receiver(Reply(200, body="x" * 10_000, trickle=0.05)) as server:
        result = upload_record(sample(), server.url, timeout=0.5, attempts=2, sleep=lambda s: None)
    assert not result.ok and result.status is None
    assert "timed out: no whole reply within 0.5s" in result.message
    assert len(server.received) == 2


def test_connection_refused_is_a_warning() -> None:
    with receiver() as server:
        url = server.url
    result = upload_record(sample(), url, attempts=2, sleep=lambda s: None)  # the server is gone
    assert not result.ok and "ConnectError" in result.message


def test_urls_are_shown_without_credentials() -> None:
    assert shown_url("https://user:pw@example.test:8443/api/runs?token=abc#x") == "https://example.test:8443/api/runs"
    result = upload_record(sample(), "ftp://user:pw@example.test/x")
    assert not result.ok and "pw" not in result.message and "not an http(s) URL" in result.message
    assert "with a host" in upload_record(sample(), "http://", attempts=3).message


def test_the_token_in_the_url_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    with receiver(Reply(500)) as server:
        url = server.url + f"?token={TOKEN}"
        result = upload_record(sample(), url, attempts=1)
    assert not result.ok and TOKEN not in result.message and server.received[0].path == f"/runs?token={TOKEN}"


def test_body_is_exactly_the_record_json() -> None:
    report = sample()
    with receiver() as server:
        upload_record(report, server.url)
    assert json.loads(server.received[0].body) == json.loads(report.model_dump_json())


@pytest.mark.parametrize("url", ["http://[::1", "not a url", "", "http://", "http://exa mple.test/x"])
def test_a_bad_url_is_a_warning_not_a_crash(url: str) -> None:
    result = upload_record(sample(), url, attempts=1)
    assert not result.ok and result.message


def test_the_recorded_command_keeps_no_url_credentials() -> None:
    from evaldsl.plan import recorded_command

    argv = ["run", "s.evl", "--upload", "https://u:pw@x.example/api?token=t#f", "--base-url=http://h:1/v1?k=s",
            "-k", "name with spaces"]
    assert recorded_command(argv) == ("evaldsl run s.evl --upload https://x.example/api "
                                      "--base-url=http://h:1/v1 -k 'name with spaces'")
