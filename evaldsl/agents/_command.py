"""`--agent-cmd`: any program as an agent (docs/agents.md, "Command agents").

Two forms, told apart by the command: an argument holding ``{prompt}`` makes
a one-shot agent (the prompt replaces it, standard output is the answer);
otherwise the program speaks JSON Lines (`_lines`) over its standard input
and output, one user line per turn. Every run gets its own process
(`_process.AgentProcess`), which never outlives the run: it is killed with
its children when the run ends, times out (the runner cancels ``run``),
breaks the protocol, or evaldsl is interrupted.

A conversation (the runtime calls ``run`` once per user message with one
``ctx.conversation_id``) keeps one process across its turns; `close_conversation`
(or `aclose`) ends it. A run without a conversation id is a one-turn
conversation: its process is finished as soon as the reply is read.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ..artifacts import RunArtifacts
from ._lines import ProtocolError, Turns, parse_line, user_line
from ._process import MAX_LINE, AgentProcess
from ._sources import TurnSlicer, merged

MAX_OUTPUT = 8 << 20
"""The most a one-shot agent may write on standard output (bytes)."""
EXIT_GRACE_S = 5.0
"""How long an agent has to exit after its standard input is closed."""


class CommandAgent:
    """A program run once per run of a case; ``run(message, ctx)`` as every agent taking a context."""

    def __init__(self, command: str | Sequence[str], *, env: Mapping[str, str] | None = None,
                 upstream: str | None = None, record_models: bool = True) -> None:
        """``command``: a string split as a POSIX shell would (no shell runs it), or argv.
        ``upstream``: where the recording proxy forwards model calls (`_proxy.upstreams`);
        ``record_models=False`` starts no proxy (the agent's own ``OPENAI_BASE_URL`` stands).

        Raises:
            ValueError: an empty command or unbalanced quotes.
        """
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise ValueError("the command is empty")
        self.argv = argv
        self.name = command if isinstance(command, str) else shlex.join(argv)
        self.one_shot = any("{prompt}" in arg for arg in argv)
        self.env = dict(env or {})
        """Added to every process's environment (the proxy's and tool server's URLs)."""
        self._conversations: dict[Any, _Conversation] = {}
        self.upstream = upstream
        self.record_models = record_models
        self._proxy: Any = None
        self._proxy_loop: Any = None
        self._tools: Any = None
        self._tools_loop: Any = None

    def __repr__(self) -> str:
        return f"CommandAgent({self.name!r})"

    async def proxy(self) -> Any:
        """The recording proxy of this event loop (one per evaldsl run), started on first use."""
        loop = asyncio.get_running_loop()
        if self._proxy is None or self._proxy_loop is not loop:
            from ._proxy import RecordingProxy

            self._proxy, self._proxy_loop = RecordingProxy(self.upstream), loop
            await self._proxy.start()
        return self._proxy

    async def tool_server(self) -> Any:
        """The MCP tool server of this event loop (one per evaldsl run), started on first use."""
        loop = asyncio.get_running_loop()
        if self._tools is None or self._tools_loop is not loop:
            from ._tool_server import ToolServer

            self._tools, self._tools_loop = ToolServer(), loop
            await self._tools.start()
        return self._tools

    async def environment(self, ctx: Any, run_id: str) -> dict[str, str]:
        """The process's environment: evaldsl's own, ``self.env``, the proxy's and tool server's
        URLs, and the run's names."""
        env = {**os.environ, **self.env, "EVALDSL_RUN_ID": run_id}
        env["EVALDSL_CASE"] = str(getattr(ctx, "name", "") or "")
        if self.record_models:
            env.update((await self.proxy()).open_run(run_id))
            env["EVALDSL_TOOLS_URL"] = await (await self.tool_server()).open_run(run_id, ctx)
        return env

    async def recorded(self, run_id: str, artifacts: RunArtifacts, *, done: bool = False,
                       slicer: TurnSlicer | None = None) -> RunArtifacts:
        """``artifacts`` completed from the tool server's calls and what the proxy saw (AGENTS.md's
        precedence); ``done`` ends the run's recordings; ``slicer``: only what this turn added."""
        if not self.record_models or self._proxy is None:
            return artifacts
        recording = self._proxy.close_run(run_id) if done else self._proxy.recording(run_id)
        served = []
        if self._tools is not None:
            served = await self._tools.close_run(run_id) if done else self._tools.calls(run_id)
        seen = recording.artifacts()
        if slicer is not None:
            served, seen = slicer.turn(served, seen)
        if artifacts.error is not None and recording.problems:  # what the agent's own message may not say
            artifacts = artifacts.model_copy(update={"error": "\n".join([artifacts.error, *recording.problems])})
        return merged(artifacts, served, seen)

    async def run(self, message: str, ctx: Any = None) -> RunArtifacts:
        """Run one user message. A conversation's later turns go to the process its first started."""
        if self.one_shot:
            return await self._one_shot(message, ctx)
        conversation_id = getattr(ctx, "conversation_id", None)
        if conversation_id is None:
            return await self.converse([message], ctx)
        conv = self._conversations.get(conversation_id)
        if conv is None:
            conv = self._conversations[conversation_id] = _Conversation(self, ctx)
        try:
            artifacts = await conv.turn(message, ctx)
        except BaseException:
            await self.close_conversation(conversation_id)
            raise
        if artifacts.error is not None or getattr(ctx, "last_turn", False):
            await self.close_conversation(conversation_id)
        return artifacts

    async def converse(self, messages: Sequence[str], ctx: Any = None) -> RunArtifacts:
        """A whole conversation in one process: one user line per message, then stdin closed.
        The artifacts hold every turn's calls and transcript; the final text is the last reply."""
        conv = _Conversation(self, ctx, whole=True)
        try:
            for message in messages:
                artifacts = await conv.turn(message, ctx)
                if artifacts.error is not None:
                    return artifacts
            return await conv.finish()
        finally:
            await conv.close()

    async def close_conversation(self, conversation_id: Any) -> None:
        """End a conversation's process (stdin closed, then its group killed)."""
        conv = self._conversations.pop(conversation_id, None)
        if conv is not None:
            await conv.finish()

    async def aclose(self) -> None:
        """End every conversation still open, then the proxy."""
        for key in list(self._conversations):
            await self.close_conversation(key)
        if self._proxy is not None:
            await self._proxy.aclose()
            self._proxy = None
        if self._tools is not None:
            await self._tools.aclose()
            self._tools = None

    async def _one_shot(self, message: str, ctx: Any) -> RunArtifacts:
        turns = Turns()
        turns.user(message)
        if getattr(ctx, "turn", 1) not in (1, None):
            return turns.artifacts("a conversation needs the line form of --agent-cmd (no {prompt})")
        argv = [arg.replace("{prompt}", message) for arg in self.argv]
        run_id = uuid.uuid4().hex
        try:
            proc = await AgentProcess.start(argv, await self.environment(ctx, run_id), stdin=False)
        except OSError as exc:
            return turns.artifacts(f"cannot start {argv[0]!r}: {exc.strerror or exc}")
        try:
            out = await proc.read_all(MAX_OUTPUT)
            code = await proc.proc.wait() if out is not None else None
        finally:
            await proc.close()
        tail = proc.stderr_tail()
        if out is None:
            error: str | None = _with_tail(f"the agent wrote more than {MAX_OUTPUT} bytes", tail)
        elif code != 0:
            error = _with_tail(f"the agent exited with code {code}", tail)
        else:
            error = None
            turns.reply({"content": out.decode("utf-8", "replace").strip()})
        return await self.recorded(run_id, turns.artifacts(error, tail), done=True)


class _Conversation:
    """One process and what its turns said so far."""

    def __init__(self, agent: CommandAgent, ctx: Any, *, whole: bool = False) -> None:
        self.agent = agent
        self.run_id = uuid.uuid4().hex
        self.env: dict[str, str] | None = None
        self.proc: AgentProcess | None = None
        self.turns = Turns()
        self.messages: list[dict[str, Any]] = []
        self.count = 0
        self.whole = whole
        """`converse`: the artifacts hold every turn; else (the runner's turns) each turn its own."""
        self.slicer = None if whole else TurnSlicer()

    async def turn(self, message: str, ctx: Any) -> RunArtifacts:
        """Send one user line, read events up to the reply; any breach ends the run as an error."""
        self.count += 1
        if not self.whole:
            self.turns = Turns()  # this turn's events only (the runner keeps the conversation)
        self.turns.user(message)
        self.messages.append({"role": "user", "content": message})
        if self.proc is None:
            self.env = await self.agent.environment(ctx, self.run_id)
            try:
                self.proc = await AgentProcess.start(self.agent.argv, self.env)
            except OSError as exc:
                error = f"cannot start {self.agent.argv[0]!r}: {exc.strerror or exc}"
                return await self.agent.recorded(self.run_id, self.turns.artifacts(error), done=True)
        known = getattr(ctx, "messages", None)  # the runner's conversation so far: tool calls and results too
        messages = [dict(m) for m in known] if isinstance(known, list) and known else list(self.messages)
        line = user_line(message, ctx, turn=self.count, messages=messages)
        try:
            if not await self.proc.write_line(line):
                raise ProtocolError(await self._exited())
            await self._read_reply()
        except ProtocolError as exc:
            await self.proc.close()  # (its recordings are ended by `recorded`, which keeps what they saw)
            tail = self.proc.stderr_tail()
            failed = self.turns.artifacts(_with_tail(f"{exc.prefix}: {exc}", tail), tail)
            return await self.agent.recorded(self.run_id, failed, done=True, slicer=self.slicer)
        self.messages.append({"role": "assistant", "content": self.turns.final_text})
        return await self.agent.recorded(self.run_id, self.turns.artifacts(), slicer=self.slicer)

    async def _read_reply(self) -> None:
        assert self.proc is not None
        while True:
            try:
                raw = await self.proc.read_line()
            except ValueError:
                raise ProtocolError(f"a line on standard output longer than {MAX_LINE} bytes") from None
            if raw is None:
                raise ProtocolError(await self._exited())
            if self.turns.event(parse_line(raw)):
                return

    async def _exited(self) -> str:
        assert self.proc is not None
        try:
            code = await asyncio.wait_for(self.proc.proc.wait(), 1)
        except asyncio.TimeoutError:
            code = None
        how = "closed its standard output" if code is None else f"exited with code {code}"
        return f"the agent {how} before its reply to turn {self.count}"

    async def finish(self) -> RunArtifacts:
        """After the last turn: close stdin, let the agent exit, kill what is left."""
        tail = ""
        if self.proc is not None:
            await self.proc.finish(EXIT_GRACE_S)
            tail = self.proc.stderr_tail()
        return await self.agent.recorded(self.run_id, self.turns.artifacts(None, tail), done=True,
                                         slicer=self.slicer)

    async def close(self) -> None:
        if self.proc is not None:
            await self.proc.close()
        if self.agent._proxy is not None:
            self.agent._proxy.close_run(self.run_id)
        if self.agent._tools is not None:
            await self.agent._tools.close_run(self.run_id)


def _with_tail(message: str, tail: str) -> str:
    return f"{message}\nstderr (end):\n{tail}" if tail else message
