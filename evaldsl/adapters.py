"""`evaldsl.adapters`: turn what an agent with its own loop kept into `RunArtifacts` (docs/agents.md)."""

from .agents.adapters import from_anthropic_messages, from_openai_chat, from_openai_responses

__all__ = ["from_anthropic_messages", "from_openai_chat", "from_openai_responses"]
