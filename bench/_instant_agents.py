"""Agents that return at once, importable by `evaldsl run --agent _instant_agents:NAME` (bench_scale.py)."""

from __future__ import annotations

from evaldsl.artifacts import RunArtifacts, ToolCall

ARTIFACTS = RunArtifacts(
    tool_calls=[ToolCall(name="calculator", args={"op": "add", "a": 1, "b": 2}, result="3")],
    final_text="The answer is 3.", tokens=20,
)


class InstantAsync:
    name = "instant-async"

    async def run(self, instruction: str) -> RunArtifacts:
        return ARTIFACTS


class InstantSync:
    name = "instant-sync"

    def run(self, instruction: str) -> RunArtifacts:
        return ARTIFACTS
