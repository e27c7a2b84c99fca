"""A scripted agent: canned artifacts per prompt, for users' own tests.

The way httpx ships `MockTransport`, evaldsl ships a test double for the
agent seam: a suite's expectations can be tested against known behaviour
without a model, and the runner's own tests use it too. A prompt that is not
in the script is an error that names the prompt and the nearest scripted
one, so a typo in a suite does not look like an agent failure.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Mapping
from typing import Any, Union

from ..artifacts import RunArtifacts

Reply = Union[RunArtifacts, Mapping[str, Any], str, Callable[[str], Any]]
"""What a script maps a prompt to: artifacts; a dict of their fields; a
string (the final text, no tool calls); or a function of the prompt that
returns one of those (or raises, to simulate an agent crash)."""


class UnscriptedPrompt(LookupError):
    """The scripted agent was sent a prompt its script does not cover."""


class ScriptedAgent:
    """An `Agent` that answers each prompt from a script.

    Args:
        script: prompt -> reply (see `Reply`). Prompts match exactly.
        default: the reply for any prompt not in the script; without one,
            such a prompt raises `UnscriptedPrompt`.
        name: the agent's name in records.

    Every prompt received is appended to ``prompts`` (in arrival order,
    thread-safe), so a test can check what the runner sent.
    """

    def __init__(
        self,
        script: Mapping[str, Reply] | None = None,
        *,
        default: Reply | None = None,
        name: str = "scripted",
    ) -> None:
        self.script: dict[str, Reply] = dict(script or {})
        self.default = default
        self.name = name
        self.prompts: list[str] = []
        self._lock = threading.Lock()

    def run(self, instruction: str) -> RunArtifacts:
        with self._lock:
            self.prompts.append(instruction)
        reply = self.script.get(instruction, self.default)
        if reply is None:
            raise UnscriptedPrompt(self._unknown(instruction))
        if callable(reply) and not isinstance(reply, RunArtifacts):
            reply = reply(instruction)
        return _as_artifacts(reply)

    def _unknown(self, prompt: str) -> str:
        message = f"the scripted agent has no reply for the prompt {prompt!r}"
        close = difflib.get_close_matches(prompt, list(self.script), n=1, cutoff=0.6)
        if close:
            return f"{message}; did you mean {close[0]!r}?"
        if not self.script:
            return f"{message}; its script is empty"
        return f"{message}; it knows {len(self.script)} prompt(s)"


def _as_artifacts(reply: Any) -> RunArtifacts:
    if isinstance(reply, RunArtifacts):
        return reply
    if isinstance(reply, str):
        return RunArtifacts(final_text=reply)
    if isinstance(reply, Mapping):
        return RunArtifacts.model_validate(dict(reply))
    raise TypeError(
        f"a scripted reply must be RunArtifacts, a dict, a string or a function; got {type(reply).__name__}"
    )
