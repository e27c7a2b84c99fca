"""Adapters: framework objects as agents (each framework imported only when met) and converters
from agents' own message lists to `RunArtifacts`."""

from typing import Any

from ._convert import from_anthropic_messages, from_openai_chat, from_openai_responses
from ._langgraph import LangGraphAgent, from_langchain_messages, is_langchain_runnable
from ._openai_agents import OpenAIAgentsAgent, from_agents_result, is_openai_agent
from ._pydantic_ai import PydanticAIAgent, from_pydantic_ai_result, is_pydantic_ai_agent


def recognise(obj: Any) -> Any:
    """The agent a framework object stands for, or None when it is no framework's object we know."""
    if is_langchain_runnable(obj):
        return LangGraphAgent(obj)
    if is_openai_agent(obj):
        return OpenAIAgentsAgent(obj)
    if is_pydantic_ai_agent(obj):
        return PydanticAIAgent(obj)
    return None


__all__ = ["LangGraphAgent", "OpenAIAgentsAgent", "PydanticAIAgent", "from_agents_result", "from_anthropic_messages",
           "from_langchain_messages", "from_openai_chat", "from_openai_responses", "from_pydantic_ai_result",
           "recognise"]
