"""Adapters: converters from agents' own message lists to `RunArtifacts` (framework objects: not yet)."""

from ._convert import from_anthropic_messages, from_openai_chat, from_openai_responses

__all__ = ["from_anthropic_messages", "from_openai_chat", "from_openai_responses"]
