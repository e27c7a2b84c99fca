"""The scripted test servers themselves: what other tests rely on them to send and record."""

from __future__ import annotations

import httpx
import pytest
from servers import Drop, HttpError, ScriptedServer, call, sequence, text, tool_calls, tool_then_text


def post(server: ScriptedServer, body: dict, headers: dict | None = None) -> httpx.Response:
    path = "/chat/completions" if server.flavour == "openai" else "/v1/messages"
    return httpx.post(server.base_url + path, json=body, headers=headers or {}, timeout=5)


def test_openai_server_renders_tool_calls_then_text(openai_server: ScriptedServer) -> None:
    openai_server.reply = tool_then_text("search", {"q": "x"}, "done")
    first = post(openai_server, {"model": "m", "messages": [{"role": "user", "content": "hi"}]}).json()
    calls = first["choices"][0]["message"]["tool_calls"]
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in calls] == [("search", '{"q": "x"}')]
    messages = [{"role": "tool", "tool_call_id": calls[0]["id"], "content": "r"}]
    second = post(openai_server, {"model": "m", "messages": messages}).json()
    assert second["choices"][0]["message"]["content"] == "done"
    assert [r.index for r in openai_server.requests] == [0, 1]


def test_anthropic_server_renders_blocks_and_raw(anthropic_server: ScriptedServer) -> None:
    anthropic_server.reply = sequence(tool_calls(call("a", {"x": 1}), call("b", raw="{bad"), text="thinking"))
    body = post(anthropic_server, {"model": "m", "messages": []}).json()
    assert [b["type"] for b in body["content"]] == ["text", "tool_use", "tool_use"]
    assert body["content"][2]["input"] == {"raw": "{bad"}
    assert body["usage"] == {"input_tokens": 10, "output_tokens": 5}


def test_secret_headers_are_redacted_but_checkable(openai_server: ScriptedServer) -> None:
    post(openai_server, {"messages": []}, {"Authorization": "Bearer sk-SENTINEL-1"})
    recorded = openai_server.requests[0]
    assert recorded.headers["authorization"] == "<redacted>"
    assert "sk-SENTINEL-1" not in repr(recorded)
    assert recorded.sent_secret("Authorization", "Bearer sk-SENTINEL-1")
    assert not recorded.sent_secret("Authorization", "Bearer other")


def test_errors_and_drops(openai_server: ScriptedServer) -> None:
    openai_server.reply = sequence(HttpError(429, headers={"retry-after": "0"}), Drop(), text("ok"))
    first = post(openai_server, {"messages": []})
    assert first.status_code == 429 and first.headers["retry-after"] == "0"
    assert first.json()["error"]["message"] == "scripted error 429"
    with pytest.raises(httpx.TransportError):
        post(openai_server, {"messages": []})
    assert post(openai_server, {"messages": []}).status_code == 200
