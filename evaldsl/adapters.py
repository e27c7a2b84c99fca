"""`evaldsl.adapters`: framework agents and converters to `RunArtifacts` (docs/agents.md, section 2)."""

from .agents.adapters import (
                              LangGraphAgent,
                              from_anthropic_messages,
                              from_langchain_messages,
                              from_openai_chat,
                              from_openai_responses,
                              recognise,
)

__all__ = ["LangGraphAgent", "from_anthropic_messages", "from_langchain_messages", "from_openai_chat",
           "from_openai_responses", "recognise"]
