"""`evaldsl.adapters`: framework agents and converters to `RunArtifacts` (docs/agents.md, section 2)."""

from .agents.adapters import (
    LangGraphAgent,
    OpenAIAgentsAgent,
    PydanticAIAgent,
    from_agents_result,
    from_anthropic_messages,
    from_langchain_messages,
    from_openai_chat,
    from_openai_responses,
    from_pydantic_ai_result,
    recognise,
)

__all__ = ["LangGraphAgent", "OpenAIAgentsAgent", "PydanticAIAgent", "from_agents_result", "from_anthropic_messages",
           "from_langchain_messages", "from_openai_chat", "from_openai_responses", "from_pydantic_ai_result",
           "recognise"]
