"""Every way an agent is reached besides a Python function (docs/agents.md).

The command and HTTP bridges end in the same `RunArtifacts` as any agent, so
the runner never knows which one ran.
"""

from ._command import CommandAgent
from ._http import HttpAgent

__all__ = ["CommandAgent", "HttpAgent"]
