"""Which source of a run's tool calls and tokens wins (AGENTS.md, "What every agent process gets").

The calls the agent reported; when it reported none, the calls made on the
tool server; when there were none, the calls the recording proxy saw. Its
tokens: the reported ones, else the sum of the usage the proxy saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..artifacts import RunArtifacts, ToolCall


def merged(reported: RunArtifacts, served: Sequence[ToolCall] = (), seen: RunArtifacts | None = None) -> RunArtifacts:
    """``reported`` completed from the tool server's calls and the proxy's recording."""
    update: dict[str, Any] = {}
    if not reported.tool_calls:
        if served:
            update["tool_calls"] = list(served)
        elif seen is not None and seen.tool_calls:
            update["tool_calls"] = seen.tool_calls
    if seen is not None:
        if reported.tokens is None and seen.tokens is not None:
            update["tokens"] = seen.tokens
        if seen.transcript:  # the agent's own conversation with its model, beside the turns
            update["transcript"] = [*reported.transcript, {"role": "model_calls", "content": seen.transcript}]
    return reported.model_copy(update=update) if update else reported


class TurnSlicer:
    """What a run's tool server and proxy saw during its latest turn: their records hold the whole run so
    far, and each turn of a conversation reports its own calls, tokens and model calls only."""

    def __init__(self) -> None:
        self._served = self._calls = self._transcript = 0
        self._tokens: int | None = None

    def turn(self, served: Sequence[ToolCall], seen: RunArtifacts | None) -> tuple[list[ToolCall], RunArtifacts | None]:
        """The part of ``served`` and ``seen`` (the whole run's) that this turn added; the marks move on."""
        new_served = list(served[self._served:])
        self._served = len(served)
        if seen is None:
            return new_served, None
        tokens = seen.tokens
        if tokens is not None and self._tokens is not None:
            tokens = max(0, tokens - self._tokens)
        part = RunArtifacts(tool_calls=seen.tool_calls[self._calls:], tokens=tokens,
                            transcript=seen.transcript[self._transcript:])
        self._calls, self._transcript = len(seen.tool_calls), len(seen.transcript)
        self._tokens = seen.tokens if seen.tokens is not None else self._tokens
        return new_served, part
