"""Adapters: framework objects as agents (each framework imported only when met) and converters
from agents' own message lists to `RunArtifacts`."""

from typing import Any

from ._convert import from_anthropic_messages, from_openai_chat, from_openai_responses
from ._langgraph import LangGraphAgent, from_langchain_messages, is_langchain_runnable


def recognise(obj: Any) -> Any:
    """The agent a framework object stands for, or None when it is no framework's object we know."""
    if is_langchain_runnable(obj):
        return LangGraphAgent(obj)
    return None


__all__ = ["LangGraphAgent", "from_anthropic_messages", "from_langchain_messages", "from_openai_chat",
           "from_openai_responses", "recognise"]
