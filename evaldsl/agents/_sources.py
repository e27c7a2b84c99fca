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
