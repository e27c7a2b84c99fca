"""`evaldsl.adapters`' converters: calls paired with results by id, the final text, raw arguments kept."""

from __future__ import annotations

from evaldsl.adapters import from_anthropic_messages, from_openai_chat, from_openai_responses


def test_openai_chat_messages() -> None:
    out = from_openai_chat([
        {"role": "user", "content": "2 + 3?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "calc", "arguments": '{"op": "add"}'}},
            {"id": "b", "type": "function", "function": {"name": "calc", "arguments": "{not json"}}]},
        {"role": "tool", "tool_call_id": "b", "content": "bad args"},
        {"role": "tool", "tool_call_id": "a", "content": "5"},
        {"role": "assistant", "content": "5"},
    ], tokens=12)
    assert [(c.name, c.args, c.result) for c in out.tool_calls] == [
        ("calc", {"op": "add"}, "5"), ("calc", "{not json", "bad args")]
    assert out.final_text == "5" and out.tokens == 12 and len(out.transcript) == 5


def test_anthropic_messages() -> None:
    out = from_anthropic_messages([
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": [{"type": "text", "text": "checking"},
                                          {"type": "tool_use", "id": "t1", "name": "w", "input": {"c": "Oslo"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "-3"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "cold"}]},
    ])
    assert [(c.name, c.args, c.result) for c in out.tool_calls] == [("w", {"c": "Oslo"}, "-3")]
    assert out.final_text == "cold" and out.tokens is None


def test_openai_responses_items() -> None:
    out = from_openai_responses([
        {"type": "function_call", "call_id": "c1", "name": "search", "arguments": '{"q": "x"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "found"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
    ])
    assert [(c.name, c.args, c.result) for c in out.tool_calls] == [("search", {"q": "x"}, "found")]
    assert out.final_text == "done"
