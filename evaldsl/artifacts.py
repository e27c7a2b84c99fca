"""What an agent did in one run: the shared vocabulary of every stage.

`RunArtifacts` is what an `Agent.run` returns and what every compiled
expectation reads. It imports nothing else of evaldsl, so the parser, the
compiler, the runner and user code can all depend on it.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

JsonValue = Any
"""Any JSON value: dict, list, str, int, float, bool or None."""


class ToolCall(BaseModel):
    """One tool call the agent made."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    """The tool's name, as the agent called it."""
    args: JsonValue = Field(default_factory=dict)
    """The call's arguments: any JSON value, or the raw string a model sent
    when it was not valid JSON (such a call matches no argument pattern)."""
    result: JsonValue = None
    """What the tool answered, when the agent reports it (optional)."""

    def display(self) -> str:
        """A one-line rendering, ``name(args)``, for summaries."""
        if isinstance(self.args, str):
            shown = self.args
        else:
            shown = _display_encoder().encode(self.args)
        return f"{self.name}({shown})"


@functools.cache
def _display_encoder() -> Any:
    """`ToolCall.display`'s JSON encoder, made once (`json.dumps` with options builds one per call)."""
    import json

    return json.JSONEncoder(ensure_ascii=False)


class RunArtifacts(BaseModel):
    """Everything one run of an agent produced; every field is optional."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    tool_calls: list[ToolCall] = Field(default_factory=list)
    """The tool calls, in the order the agent made them."""
    final_text: str | None = None
    """The agent's final answer; None when it gave none ('' is an empty answer)."""
    tokens: int | None = Field(default=None, ge=0)
    """Tokens the run used, when the agent reports them (0 or more)."""
    input_tokens: int | None = Field(default=None, ge=0)
    """Of ``tokens``, those of the prompts sent to the model (input), when reported: kept apart for cost."""
    output_tokens: int | None = Field(default=None, ge=0)
    """Of ``tokens``, those the model wrote (output), when reported."""
    error: str | None = None
    """Set when the run failed (a backend error, say); such a run is an error."""
    error_kind: str | None = None
    """Why, in one word, when ``error`` is set (one of the record's error kinds, e.g.
    ``backend_http``; see docs/running.md section 8); None reads as ``agent_error``."""
    transcript: list[JsonValue] = Field(default_factory=list)
    """The conversation, as chat messages or any JSON the agent chooses."""
    duration_s: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """Wall-clock seconds of the run; the runner fills it in when it times the run."""
