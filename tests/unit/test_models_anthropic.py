"""The Anthropic backend: OpenAI-shaped messages and tools out, tool_use blocks back, against a loopback server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from servers import ScriptedServer, call, sequence, text, tool_calls

from evaldsl.models._anthropic import to_anthropic_messages
from evaldsl.models._backends import make_backend
from evaldsl.models._chat import ChatReply, Sampling

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
    {"type": "function", "function": {"name": "now", "parameters": {}}},
]

CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": "t2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}},
        ],
    },
    {"role": "tool", "tool_call_id": "t1", "content": "sunny"},
    {"role": "tool", "tool_call_id": "t2", "content": "rain"},
]


@pytest.fixture(autouse=True)
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def chat(server: ScriptedServer, messages: list[dict[str, Any]], **kwargs: Any) -> ChatReply:
    async def go() -> ChatReply:
        backend = make_backend("anthropic:claude-test", base_url=server.base_url)
        try:
            return await backend.chat(messages, **kwargs)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_conversation_is_translated_out(anthropic_server: ScriptedServer) -> None:
    chat(anthropic_server, CONVERSATION, tools=TOOLS, sampling=Sampling(temperature=0.5, seed=3))
    sent = anthropic_server.requests[0]
    assert sent.path == "/v1/messages" and sent.headers["anthropic-version"] == "2023-06-01"
    body = sent.json
    assert body["system"] == "Be brief." and body["max_tokens"] == 4096 and body["temperature"] == 0.5
    assert "seed" not in body and "tool_choice" not in body
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "t2", "name": "get_weather", "input": {"city": "Rome"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "rain"},
            ],
        },
    ]
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather of a city.",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
        {"name": "now", "input_schema": {"type": "object", "properties": {}}},
    ]


def test_a_user_turn_after_tool_results_joins_their_message() -> None:
    system, messages = to_anthropic_messages([*CONVERSATION[1:], {"role": "user", "content": "And Oslo?"}])
    assert system is None
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[-1]["content"][-1] == {"type": "text", "text": "And Oslo?"}


def test_tool_use_blocks_come_back_as_calls(anthropic_server: ScriptedServer) -> None:
    anthropic_server.reply = sequence(
        tool_calls(call("get_weather", {"city": "Paris"}, id="u1"), call("now", id="u2"), text="Let me look.")
    )
    reply = chat(anthropic_server, CONVERSATION[:2], tools=TOOLS)
    assert [(c.name, c.args) for c in reply.tool_calls] == [("get_weather", {"city": "Paris"}), ("now", {})]
    assert reply.call_ids == ["u1", "u2"] and reply.text == "Let me look."
    assert (reply.input_tokens, reply.output_tokens) == (10, 5)
    assert reply.message["tool_calls"][0] == {
        "id": "u1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    # The echoed message translates back to the same blocks.
    _, again = to_anthropic_messages([reply.message])
    assert again[0]["content"][1] == {"type": "tool_use", "id": "u1", "name": "get_weather", "input": {"city": "Paris"}}


def test_text_reply(anthropic_server: ScriptedServer) -> None:
    anthropic_server.reply = sequence(text("Sunny.", input_tokens=7, output_tokens=2))
    reply = chat(anthropic_server, CONVERSATION)
    assert (reply.text, reply.tool_calls, reply.tokens) == ("Sunny.", [], 9)


@pytest.mark.parametrize(
    ("schema", "given", "expected"),
    [
        ({"type": "object", "properties": {"score": {"type": "number"}}}, {"score": 0.8}, {"score": 0.8}),
        ({"type": "array", "items": {"type": "number"}}, {"value": [1, 2]}, [1, 2]),
    ],
)
def test_structured_output_is_a_forced_tool(
    anthropic_server: ScriptedServer, schema: dict[str, Any], given: dict[str, Any], expected: Any
) -> None:
    anthropic_server.reply = sequence(tool_calls(call("structured_output", given)))
    reply = chat(anthropic_server, CONVERSATION[:2], response_schema=schema)
    assert reply.tool_calls == [] and json.loads(reply.text or "") == expected
    body = anthropic_server.requests[0].json
    assert body["tool_choice"] == {"type": "tool", "name": "structured_output"}
    forced = body["tools"][-1]
    assert forced["name"] == "structured_output"
    assert forced["input_schema"] == (
        schema
        if schema["type"] == "object"
        else {"type": "object", "properties": {"value": schema}, "required": ["value"]}
    )


def test_key_sent_as_x_api_key(anthropic_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)

    async def go() -> None:
        backend = make_backend("anthropic:m")
        await backend.chat([{"role": "user", "content": "hi"}])
        await backend.aclose()

    asyncio.run(go())
    assert anthropic_server.requests[0].sent_secret("x-api-key", "sk-ant-test")


def test_no_key_no_x_api_key_header(anthropic_server: ScriptedServer) -> None:
    chat(anthropic_server, [{"role": "user", "content": "hi"}])
    assert "x-api-key" not in anthropic_server.requests[0].headers
    assert "authorization" not in anthropic_server.requests[0].headers
