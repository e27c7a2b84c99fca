"""The response cache: hits cost no request, repeats are distinct, entries are never torn, corruption is a miss."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from servers import HttpError, ScriptedServer, call, sequence, text, tool_calls

from evaldsl.models._backends import make_backend
from evaldsl.models._cache import ResponseCache, request_key
from evaldsl.models._chat import BackendError, ChatReply, Sampling
from evaldsl.models._retry import RetryPolicy

USER = [{"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def chats(server: ScriptedServer, cache: ResponseCache, calls: list[dict[str, Any]]) -> list[ChatReply]:
    async def go() -> list[ChatReply]:
        backend = make_backend(f"{server.flavour}:m", base_url=server.base_url, cache=cache)
        try:
            return [await backend.chat(USER, **kwargs) for kwargs in calls]
        finally:
            await backend.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("flavour", ["openai", "anthropic"])
def test_second_identical_call_is_served_from_disk(
    flavour: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    server: ScriptedServer = request.getfixturevalue(f"{flavour}_server")
    server.reply = sequence(tool_calls(call("search", {"q": "x"})), text("other"))
    cache = ResponseCache(tmp_path / "cache")
    first, second = chats(server, cache, [{}, {}])
    assert len(server.requests) == 1
    assert not first.cached and second.cached
    assert (second.tool_calls, second.call_ids, second.tokens) == (first.tool_calls, first.call_ids, first.tokens)
    assert (cache.hits, cache.misses) == (1, 1)
    # A new cache object on the same directory (the next run) hits too.
    again = ResponseCache(tmp_path / "cache")
    assert chats(server, again, [{}])[0].cached and len(server.requests) == 1


def test_repeat_index_and_every_part_of_the_request_make_distinct_entries(
    openai_server: ScriptedServer, tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path)
    calls = [
        {},
        {"repeat_index": 1},
        {"repeat_index": 2},
        {"sampling": Sampling(temperature=0)},
        {"tools": [{"type": "function", "function": {"name": "t"}}]},
        {"response_schema": {"type": "object"}},
    ]
    chats(openai_server, cache, calls)
    assert len(openai_server.requests) == 6
    chats(openai_server, cache, calls)
    assert len(openai_server.requests) == 6 and cache.hits == 6


def test_key_covers_base_url_and_model_not_credentials() -> None:
    body = {"model": "m", "messages": USER}
    base = request_key({"provider": "openai", "base_url": "http://a", "body": body}, 0)
    assert base != request_key({"provider": "openai", "base_url": "http://b", "body": body}, 0)
    assert base != request_key({"provider": "openai", "base_url": "http://a", "body": {**body, "model": "n"}}, 0)
    assert base == request_key({"body": body, "base_url": "http://a", "provider": "openai"}, 0)  # order-free


def test_errors_are_not_cached(openai_server: ScriptedServer, tmp_path: Path) -> None:
    openai_server.reply = sequence(HttpError(400), text("ok"))
    cache = ResponseCache(tmp_path)

    async def go() -> str | None:
        backend = make_backend("openai:m", base_url=openai_server.base_url, cache=cache, retry=RetryPolicy(attempts=1))
        try:
            with pytest.raises(BackendError):
                await backend.chat(USER)
            return (await backend.chat(USER)).text
        finally:
            await backend.aclose()

    assert asyncio.run(go()) == "ok" and len(openai_server.requests) == 2


def test_a_corrupt_entry_is_a_miss_and_is_overwritten(openai_server: ScriptedServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    chats(openai_server, cache, [{}])
    (entry,) = tmp_path.glob("*/*.json")
    for damage in (
        b'{"format": 1, "key": "',
        b"",
        json.dumps({"format": 1, "key": "other", "response": {}}).encode(),
        json.dumps({"format": 1, "key": entry.stem, "response": {"choices": []}}).encode(),
    ):
        entry.write_bytes(damage)
        assert chats(openai_server, cache, [{}])[0].text == "ok"
        assert json.loads(entry.read_bytes())["response"]["choices"][0]["message"]["content"] == "ok"
    assert len(openai_server.requests) == 5


def test_an_unwritable_directory_warns_once_and_the_call_succeeds(
    openai_server: ScriptedServer, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.warns(UserWarning, match="cannot write"):
        assert [r.text for r in chats(openai_server, ResponseCache(blocker / "cache"), [{}, {"repeat_index": 1}])] == [
            "ok",
            "ok",
        ]


WRITER = """
import sys
from evaldsl.models._cache import ResponseCache
cache = ResponseCache(sys.argv[1])
n = int(sys.argv[2])
for i in range(150):
    cache.put(sys.argv[3], {"writer": n, "i": i, "pad": "x" * (1000 * (n + 1) + i)})
"""


def test_concurrent_writers_never_leave_a_torn_entry(tmp_path: Path) -> None:
    key = request_key({"body": "same"}, 0)
    path = tmp_path / key[:2] / f"{key}.json"
    torn: list[bytes] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue
            try:
                json.loads(data)
            except ValueError:
                torn.append(data[:80])

    reader = threading.Thread(target=read)
    reader.start()
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(n), key]) for n in range(3)]
    in_process = threading.Thread(target=lambda: [ResponseCache(tmp_path).put(key, {"t": i}) for i in range(150)])
    in_process.start()
    assert all(w.wait(60) == 0 for w in writers)
    in_process.join()
    stop.set()
    reader.join()
    assert torn == []
    assert ResponseCache(tmp_path).get(key) is not None
    assert list(path.parent.glob("*.tmp")) == []


def test_a_cache_folder_removed_mid_run_is_made_again(tmp_path: Path) -> None:
    import shutil
    import warnings as _warnings

    cache = ResponseCache(tmp_path / "c")
    first, second = request_key({"n": 1}, 0), request_key({"n": 2}, 0)
    cache.put(first, {"n": 1})
    shutil.rmtree(tmp_path / "c")
    with _warnings.catch_warnings():
        _warnings.simplefilter("error")  # no "cannot write" warning
        cache.put(second, {"n": 2})
    assert cache.get(second) == {"n": 2} and cache.get(first) is None
    assert not list((tmp_path / "c").rglob("*.tmp"))  # no temporary file left behind


def test_a_fifo_where_an_entry_should_be_is_a_miss_with_a_warning_never_a_hang(tmp_path: Path) -> None:
    import os
    import warnings

    cache = ResponseCache(tmp_path)
    key = "ab" + "0" * 62
    (tmp_path / "ab").mkdir()
    os.mkfifo(tmp_path / "ab" / f"{key}.json")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cache.get(key) is None  # a plain open() of a FIFO would block here forever
    assert cache.misses == 1 and "is not a regular file" in str(caught[0].message)
