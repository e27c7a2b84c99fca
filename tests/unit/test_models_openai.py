"""The OpenAI-compatible backend against a scripted server on loopback: what it sends, what it reads."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from servers import RawBody, ScriptedServer, call, sequence, text, tool_calls

from evaldsl.models._backends import make_backend
from evaldsl.models._chat import BackendError, ChatReply, Sampling
from evaldsl.models._transport import TRANSPORTS, SharedClient

USER = [{"role": "user", "content": "What's the weather in Paris?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


@pytest.fixture(autouse=True)
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def chat(server: ScriptedServer, messages: list[dict[str, Any]] = USER, **kwargs: Any) -> ChatReply:
    async def go() -> ChatReply:
        backend = make_backend("openai:test-model", base_url=server.base_url, client=kwargs.pop("client", None))
        try:
            return await backend.chat(messages, **kwargs)
        finally:
            await backend.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_text_reply_and_usage_over_each_transport(openai_server: ScriptedServer, transport: str) -> None:
    openai_server.reply = sequence(text("Sunny.", input_tokens=12, output_tokens=3))
    reply = chat(openai_server, client=SharedClient(transport))
    assert reply.text == "Sunny." and reply.tool_calls == [] and not reply.cached
    assert (reply.input_tokens, reply.output_tokens, reply.tokens) == (12, 3, 15)
    assert reply.message == {"role": "assistant", "content": "Sunny."}
    sent = openai_server.requests[0]
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.json == {"model": "test-model", "messages": USER}


def test_request_carries_tools_sampling_and_schema(openai_server: ScriptedServer) -> None:
    schema = {"type": "object", "properties": {"score": {"type": "number"}}}
    chat(openai_server, tools=TOOLS, response_schema=schema, sampling=Sampling(temperature=0, max_tokens=50, seed=7))
    body = openai_server.requests[0].json
    assert body["tools"] == TOOLS and body["tool_choice"] == "auto"
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0, 50, 7)
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}


def test_tool_calls_several_in_one_reply(openai_server: ScriptedServer) -> None:
    openai_server.reply = sequence(
        tool_calls(call("get_weather", {"city": "Paris"}, id="a"), call("get_weather", {"city": "Rome"}, id="b"))
    )
    reply = chat(openai_server, tools=TOOLS)
    assert [(c.name, c.args) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Rome"}),
    ]
    assert reply.call_ids == ["a", "b"] and reply.text is None
    assert [c["function"]["arguments"] for c in reply.message["tool_calls"]] == [
        '{"city": "Paris"}',
        '{"city": "Rome"}',
    ]


def test_invalid_json_arguments_are_kept_raw(openai_server: ScriptedServer) -> None:
    openai_server.reply = sequence(tool_calls(call("get_weather", raw='{"city": "Par'), call("get_weather", raw="[1]")))
    reply = chat(openai_server, tools=TOOLS)
    assert [c.args for c in reply.tool_calls] == ['{"city": "Par', "[1]"]
    assert reply.message["tool_calls"][0]["function"]["arguments"] == '{"city": "Par'


def test_empty_arguments_mean_none(openai_server: ScriptedServer) -> None:
    openai_server.reply = sequence(tool_calls(call("now", raw="")))
    assert chat(openai_server).tool_calls[0].args == {}


def test_no_key_no_authorization_header(openai_server: ScriptedServer) -> None:
    chat(openai_server)
    assert "authorization" not in openai_server.requests[0].headers


def test_key_and_base_url_from_env(openai_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)

    async def go() -> ChatReply:
        backend = make_backend("openai:m")
        assert backend.describe() == {"provider": "openai", "model": "m", "base_url": openai_server.base_url}
        assert "sk-test" not in repr(backend) and "sk-test" not in str(backend.describe())
        try:
            return await backend.chat(USER)
        finally:
            await backend.aclose()

    assert asyncio.run(go()).text == "ok"
    assert openai_server.requests[0].sent_secret("authorization", "Bearer sk-test-123")


def test_a_reply_without_choices_is_a_backend_error(openai_server: ScriptedServer) -> None:
    openai_server.reply = sequence(RawBody({"object": "chat.completion"}))
    with pytest.raises(BackendError, match="cannot read") as info:
        chat(openai_server)
    assert info.value.status == 200


def test_bad_specs_are_one_line_value_errors() -> None:
    for spec in ("gpt-4o", "google:gemini", "openai:", ":m"):
        with pytest.raises(ValueError, match=r"use one of openai:MODEL, anthropic:MODEL") as info:
            make_backend(spec)
        assert "\n" not in str(info.value)
    backend = make_backend("openai:llama3.1:8b", base_url="http://127.0.0.1:1/v1")
    assert (backend.model, backend.label) == ("llama3.1:8b", "openai:llama3.1:8b")


def test_a_base_url_no_request_could_use_is_a_value_error() -> None:
    for url in ("localhost:11434/v1", "ftp://host/v1", "http://"):
        with pytest.raises(ValueError, match="bad base URL"):
            make_backend("openai:m", base_url=url)
