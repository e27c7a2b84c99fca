"""The suites compiled ahead, in a second process, while a model run does the rest of its start-up.

A model run's start-up has two long parts that hold the GIL: compiling its suites (about 130 ms for
1,000 cases) and importing the HTTP client with the rest of what a model run needs (aiohttp, its SSL
contexts, the record's models: about 100 ms). In one process they take turns. `evaldsl run` forks a
child that compiles the files, through the suite cache as the run would, and hands the suites back
pickled the suite cache's way (`compile._pickling`). Meanwhile the parent imports and sets up. Its
`load_suites` then takes them, at about 7 us a case to read back (bench/README.md, "A first model
run": 1.15-1.18x the bare loop instead of 1.20-1.23x).

It is done only where it pays and is safe, else the run compiles in its own process as before:

- the command line's `run` (`allowed`): a library caller's process is never forked;
- a model run, or one with a judge or a simulated user, over HTTP (not the offline ``demo`` provider):
  the HTTP client's import is the work done beside the compile (an agent run has little to do
  meanwhile, and would only wait and then read the suites back);
- `os.fork` exists and the process has one thread (a fork copies only the calling thread);
- no harness: its predicates are part of the compile;
- the .evl files named hold at most `MAX_BYTES`: past that, reading a larger suite back costs about
  what the parallel work saves;
- ``EVALDSL_COMPILE_AHEAD`` is not ``off`` (nor ``0``, ``no``, ``false``).

Whatever goes wrong in the child (a suite the pickler refuses, an error, a signal) makes it exit
without a result, and the parent compiles the files itself. The child's only output is what the suite
cache says on stderr; its diagnostics come back to be printed by the parent. A world's file is imported
by both: by the child to compile, by the parent when it reads the suites back (as from the suite cache).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ._request import RunRequest

MAX_BYTES = 1 << 20
"""The most .evl text (the files named, not the files they `use`) compiled ahead: about 5,000 to
10,000 cases, which read back in 35-70 ms."""

_allowed = False


@contextmanager
def allowed() -> Iterator[None]:
    """Let `start` fork while the block runs: the command line's `run` alone (cli/_run.py)."""
    global _allowed
    _allowed = True
    try:
        yield
    finally:
        _allowed = False


class CompileAhead:
    """A child compiling the run's files; `take` its result once, `close` if it is not taken."""

    def __init__(self, pid: int, fd: int) -> None:
        self._pid, self._fd = pid, fd

    @classmethod
    def start(cls, files: Sequence[Path], request: RunRequest, model: str | None) -> CompileAhead | None:
        """Fork the child that compiles ``files`` as ``request`` asks, or None when it would not pay or
        is not safe (the module's docstring)."""
        from .._files import turned_off

        o = request.models
        if (not _allowed or not hasattr(os, "fork") or threading.active_count() != 1 or request.harness
                or not any(map(_over_http, (model, o.judge, o.user_model))) or turned_off("EVALDSL_COMPILE_AHEAD")):
            return None
        try:
            if sum(path.stat().st_size for path in files) > MAX_BYTES:
                return None
        except OSError:
            return None  # (the compile says what is wrong with the file)
        sys.stdout.flush()
        sys.stderr.flush()
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return None
        if pid == 0:  # the child: never returns
            code = 1
            try:
                os.close(read_end)
                _send(write_end, _compiled(files, request))
                code = 0
            except BaseException:  # noqa: BLE001 - any failure: no result, the parent compiles
                pass
            finally:
                try:
                    sys.stderr.flush()  # (what the suite cache said)
                finally:
                    os._exit(code)
        os.close(write_end)
        return cls(pid, read_end)

    def take(self) -> tuple[str, Any] | None:
        """``("suites", [CompiledSuite...])`` or ``("error", (diagnostics, sources))`` from the child, or
        None (the child failed: the caller compiles)."""
        chunks = []
        try:
            while chunk := os.read(self._fd, 1 << 20):
                chunks.append(chunk)
        except BaseException:
            self.close()
            raise
        os.close(self._fd)
        self._fd = -1
        status = _reaped(self._pid)
        self._pid = 0
        if status != 0 or not chunks:
            return None
        from ..compile import _pickling

        try:
            result = _pickling.loads(b"".join(chunks))
        except Exception:  # noqa: BLE001 - unreadable: the caller compiles
            return None
        return result if isinstance(result, tuple) and len(result) == 2 else None

    def close(self) -> None:
        """Stop the child if its result was not taken (the plan failed first)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._pid:
            import signal

            try:
                if os.waitpid(self._pid, os.WNOHANG) == (0, 0):  # still running, and still this process's child
                    os.kill(self._pid, signal.SIGKILL)
                    os.waitpid(self._pid, 0)
            except (ChildProcessError, ProcessLookupError):
                pass  # ended and reaped already
            self._pid = 0


def _over_http(spec: str | None) -> bool:
    """Whether the model ``spec`` names is reached over HTTP (not the offline ``demo`` provider): the
    client's import is then the work done beside the compile."""
    return spec is not None and not spec.startswith("demo:")


def _reaped(pid: int) -> int:
    """The child's exit status, once it has ended; 0 when the system reaped it already (a parent that
    ignores SIGCHLD): its result, whole or not, then decides."""
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def _compiled(files: Sequence[Path], request: RunRequest) -> tuple[str, Any]:
    """What `load_suites` compiles (`_inputs.compiled`), as the child hands it back."""
    from ..syntax._diagnostics import EvlError
    from ._inputs import compiled

    try:
        return "suites", compiled(files, request)
    except EvlError as exc:  # (an exception pickles by its message: the parts go, it is made again)
        return "error", (exc.diagnostics, exc.sources)


def _send(fd: int, result: tuple[str, Any]) -> None:
    from ..compile import _pickling

    data = memoryview(_pickling.dumps(result))
    while data:
        data = data[os.write(fd, data):]
    os.close(fd)
