"""One agent process: started without a shell in its own process group, read with
bounded buffers, and killed with every child it started.

Why a process group: an agent that starts a helper (a language server, a
`node` child, a shell pipeline) and then hangs must not leave that helper
behind. The process is made a session leader (``start_new_session``), so
`kill` sends SIGKILL to the whole group. Every live group is also noted in a
module-wide set that an ``atexit`` hook empties, so an interrupted evaldsl
(Ctrl-C unwinds the event loop; the hook runs on the way out) leaves no agent.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import signal
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

MAX_LINE = 1 << 20
"""The longest line (bytes) an agent may write on standard output."""
STDERR_TAIL = 4096
"""How much of the end of standard error is kept with a run."""

_LIVE: set[int] = set()


def _kill_live() -> None:
    for pgid in list(_LIVE):
        _killpg(pgid)


atexit.register(_kill_live)


def _killpg(pgid: int) -> None:
    _LIVE.discard(pgid)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class AgentProcess:
    """A started agent: write lines to it, read lines from it, keep its stderr's end."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self._stderr_task = asyncio.ensure_future(self._drain_stderr())
        _LIVE.add(proc.pid)

    @classmethod
    async def start(cls, argv: Sequence[str], env: Mapping[str, str], *, stdin: bool = True) -> AgentProcess:
        """Start ``argv`` (no shell) in its own process group.

        Raises:
            OSError: the program cannot be started (not found, not executable).
        """
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=dict(env), start_new_session=True, limit=MAX_LINE,
        )
        return cls(proc)

    async def _drain_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        while chunk := await stream.read(65536):
            self._tail.append(chunk)
            self._tail_size += len(chunk)
            while self._tail_size - len(self._tail[0]) >= STDERR_TAIL:
                self._tail_size -= len(self._tail.popleft())

    def stderr_tail(self) -> str:
        """The last `STDERR_TAIL` bytes of standard error (decoded, trimmed)."""
        data = b"".join(self._tail)[-STDERR_TAIL:]
        return data.decode("utf-8", "replace").strip()

    async def write_line(self, obj: Any) -> bool:
        """Write one JSON line; False when the process no longer reads its input."""
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(obj, ensure_ascii=False).encode() + b"\n")
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    async def read_line(self) -> bytes | None:
        """The next non-empty line of standard output; None at its end.

        Raises:
            ValueError: a line longer than `MAX_LINE`.
        """
        stdout = self.proc.stdout
        assert stdout is not None
        while True:
            line = await stdout.readline()
            if not line:
                return None
            if line.strip():
                return line

    async def read_all(self, limit: int) -> bytes | None:
        """All of standard output; None when it passed ``limit`` bytes (the process is then killed)."""
        stdout = self.proc.stdout
        assert stdout is not None
        chunks, size = [], 0
        while chunk := await stdout.read(65536):
            size += len(chunk)
            if size > limit:
                self.kill()
                return None
            chunks.append(chunk)
        return b"".join(chunks)

    async def finish(self, grace_s: float) -> int | None:
        """Close standard input, give the process ``grace_s`` to exit, then kill its group.
        Returns its exit code (None when it had to be killed)."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            code: int | None = await asyncio.wait_for(self.proc.wait(), grace_s)
        except asyncio.TimeoutError:
            code = None
        await self.close()
        return code

    def kill(self) -> None:
        """SIGKILL the whole group (the agent and every child it started). Safe to repeat."""
        _killpg(self.proc.pid)

    async def close(self) -> None:
        """Kill the group and reap the process; its stderr is read to the end first."""
        self.kill()
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
            await asyncio.wait_for(asyncio.shield(self._stderr_task), 1)
        except (asyncio.TimeoutError, Exception):  # a child holding stderr open: keep what came
            self._stderr_task.cancel()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode
