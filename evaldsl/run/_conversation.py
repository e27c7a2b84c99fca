"""One run of a conversation (LANGUAGE.md 11-14): the turns, the simulated user, the world, the scoring.

A case with `user` lines, a `simulated user` or a suite `world` runs here;
a single-prompt case without a world keeps `execute_run`'s fast path. A
single-prompt case with a world is a conversation of one turn.

One run, in order:

1. The world instance is made (`RunWorld`), then a harness's ``setup``.
2. Each message is sent: the scripted `user` lines (or the `prompt`), then,
   with a `simulated user`, the simulated user's messages until it says it is
   done or ``user turns N`` is reached. The agent is called once per message,
   ``run(message, ctx)``, with `CaseContext.messages` the conversation so far
   (ending with this message), ``ctx.turn`` and one ``ctx.conversation_id``;
   the calls it makes through the context are that turn's calls. After each
   turn the world's state is read.
3. An agent error (it raised, returned no artifacts, or set ``error``) ends the
   conversation: the run is an error and the turns before it stay. The case's
   ``timeout`` bounds the whole conversation.
4. The world's ``close()`` and the agent's ``close_conversation`` (when it has
   one) are called, whatever happened.
5. Scoring: each turn's expectations on that turn (its calls, its reply, its
   tokens and time, the state after it); the whole-conversation ones on the
   turns merged (every call in order, the last reply, tokens and times summed,
   the state at the end). A run passes when all hold; its score is the product
   of all credits. After an agent error, only the turns that returned artifacts
   are judged, and the whole-conversation expectations only when one did.

A sync agent's whole run (world, setup, turns, state, close) happens on one
thread of its own (`OneThread`), so a world holding a thread-bound resource
(an sqlite connection) works; an async agent's happens on the event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..compile._answerer import ToolAnswerer
from ..compile._model import NO_STATE, CompiledCase, JudgeFn, PredicateFn
from ..compile._regex import set_match_limit
from ._bounded import bounded
from ._context import CaseContext, with_recorded_calls
from ._control import LoopClock, forget_cancel, runner_cancelling
from ._protocols import Subject
from ._record import ConversationResult, ErrorInfo, RunResult, TurnResult
from ._safe import cancelled_info, clip, error_info, safe_text
from ._scoring import _awaited, coerce_artifacts, is_awaitable
from ._threads import DaemonPool, RunTimeout
from ._trusted import run_result
from ._turns import PlayedTurn, score_turns, turn_messages
from ._world_run import RunWorld

_ids = itertools.count(1)


class ConversationUsage(ValueError):
    """A conversation case that this run cannot play: the agent takes no conversation, or a simulated
    user has no model. A usage error (exit code 4), raised before any case runs."""


def refusals(subject: Subject, cases: Any, *, user: Any) -> list[str]:
    """Why each conversation case cannot run with this agent and simulated-user model (empty: all can).

    Args:
        subject: the agent or harness; one whose object says ``one_shot`` (a command agent with
            ``{prompt}``) takes one prompt only, as does one whose ``run`` takes no case context.
        cases: the compiled cases to run (outlines do: only their shape is read).
        user: the simulated user's model (None: `--user-model` was not given).
    """
    out: list[str] = []
    one_shot = getattr(getattr(subject.run, "__self__", None), "one_shot", False) is True
    takes = subject.context and not one_shot
    for case in _may_converse(cases):
        if case.settings.skip is not None:
            continue
        where = f"{case.file}:{case.line}: case {case.name!r}"
        if case.is_conversation and not takes:
            how = ("--agent-cmd with {prompt} sends one prompt; drop {prompt} to use the line form (JSON Lines "
                   "on stdin/stdout), which holds a conversation" if one_shot else
                   "give its run a second parameter, run(message, ctx) (a harness: run(message, world, ctx)); "
                   "it is then called once per user message, with ctx.messages the conversation so far")
            out.append(f"{where} is a conversation, but the agent takes a single prompt: {how}")
        if case.simulated_user is not None and user is None:
            out.append(f"{where} has a `simulated user`, and no model plays it: pass --user-model "
                       "PROVIDER:MODEL (--evl-user-model to pytest, user= in Python)")
    return out


def _may_converse(cases: Any) -> Iterator[CompiledCase]:
    """The cases, as outlines, leaving out the rows of an examples file whose case holds no conversation:
    every row of one case has that case's shape, so its first row answers for all (a run of 100,000 rows
    does not make each one's outline to learn that none converses)."""
    from ..compile._model import LazyCases, SuiteCases, outlined

    if isinstance(cases, SuiteCases):
        for part in cases.parts:
            yield from _may_converse(part)
        return
    shown = outlined(cases, labels=False)
    if isinstance(cases, LazyCases) and cases.one_case and len(shown) and not shown[0].is_conversation:
        return
    yield from shown


def check_conversations(subject: Subject, cases: Any, *, user: Any) -> None:
    """Raise `ConversationUsage` listing every case `refusals` finds (at most ten shown)."""
    found = refusals(subject, cases, user=user)
    if found:
        more = f"\n(and {len(found) - 10} more)" if len(found) > 10 else ""
        raise ConversationUsage("\n".join(found[:10]) + more)


class OneThread:
    """One daemon thread that runs a sync agent's jobs of one run, in order (see the module docstring)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="evaldsl-conversation", daemon=True)
            self._thread.start()
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._jobs.put((future, fn, args))
        return asyncio.wrap_future(future)

    def stop(self) -> None:
        """No more jobs: the thread ends after the one it is doing (an abandoned agent's, maybe never)."""
        if self._thread is not None:
            self._jobs.put(None)

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
                if is_awaitable(result):  # a sync callable handing back an awaitable: on a loop of its own
                    result = asyncio.run(_awaited(result))
            except BaseException as exc:  # the run's error, whatever it is
                future.set_exception(exc)
            else:
                future.set_result(result)


class Conversation:
    """One run of one conversation case (see the module docstring)."""

    def __init__(self, subject: Subject, case: CompiledCase, index: int, pool: DaemonPool, user: Any) -> None:
        self.subject, self.case, self.index, self.pool, self.user = subject, case, index, pool, user
        self.sync = not (subject.run_is_async or subject.setup_is_async)
        self.thread = OneThread() if self.sync else None
        self.world = RunWorld(case) if case.world is not None else None
        self.seen: Any = None
        """What predicates and `expect world` see: a harness's world, else the suite world's instance."""
        self.answerer: ToolAnswerer | None = None
        self.turns: list[PlayedTurn] = []
        self.messages: list[dict[str, Any]] = []
        self.error: ErrorInfo | None = None
        self.ended_by = "script"
        self.user_tokens: int | None = None
        self.conversation_id = f"{case.id}#{index}#{next(_ids)}"

    async def _on_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn`` on the run's own thread for a sync subject; else here, on the loop (awaited if need be)."""
        if self.thread is not None:
            return await self.thread.submit(fn, *args)
        value = fn(*args)
        return await value if is_awaitable(value) else value

    async def _part(self, fn: Callable[..., Any], *args: Any) -> Any:
        """A part of the subject (its ``setup`` or ``run``): on the run's own thread for a sync subject;
        else as `execute_run` calls it (awaited on the loop, or a sync part on a worker)."""
        if self.thread is not None:
            return await self.thread.submit(fn, *args)
        from ._execute import _call

        return await _call(fn, self.pool, *args)

    async def play(self) -> None:
        """Steps 1 and 2 of the module docstring; returns when the conversation ends."""
        instance = await self._on_thread(self.world.open) if self.world is not None else None
        self.answerer = ToolAnswerer.for_case(self.case, instance)
        setup = self.subject.setup
        self.seen = await self._part(setup, self.case.setup) if setup is not None else instance
        scripted = self.case.turns
        simulated = self.case.simulated_user is not None
        messages = [t.message for t in scripted] if scripted else ([] if simulated else [self.case.prompt])
        for n, message in enumerate(messages, 1):
            if not await self._turn(message, simulated=False, last=n == len(messages) and not simulated):
                return
        if not simulated:
            return
        for _ in range(self.case.settings.user_turns):
            text = await self._user_says()
            if text is None:
                self.ended_by = "user"
                return
            if not await self._turn(text, simulated=True, last=False):
                return
        self.ended_by = "bound"

    def _context(self, number: int, last: bool) -> CaseContext:
        ctx = CaseContext.for_case(self.case, self.index, answerer=self.answerer,  # one answerer a run: its
                                   messages=[dict(m) for m in self.messages])  # sequences count across turns
        ctx.turn, ctx.conversation_id, ctx.last_turn = number, self.conversation_id, last
        return ctx

    async def _turn(self, message: str, *, simulated: bool, last: bool) -> bool:
        """Send one message; False when the agent's error ended the conversation."""
        turn = PlayedTurn(len(self.turns) + 1, message, simulated)
        self.turns.append(turn)
        self.messages.append({"role": "user", "content": message})
        ctx = self._context(turn.number, last)
        args: tuple[Any, ...] = (message,)
        if self.subject.setup is not None:
            args += (self.seen,)
        if self.subject.context:
            args += (ctx,)
        began = time.perf_counter()
        try:
            raw = await self._part(self.subject.run, *args)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except BaseException as exc:
            return self._ended(error_info(exc))
        finally:
            turn.latency = time.perf_counter() - began
        artifacts, problem, warnings = coerce_artifacts(with_recorded_calls(raw, ctx))
        if artifacts is None:
            return self._ended(problem)
        if artifacts.duration_s is None:
            artifacts = artifacts.model_copy(update={"duration_s": turn.latency})
        turn.artifacts = artifacts
        turn.warnings = [f"turn {turn.number}: {w}" for w in warnings]
        turn.state = await self._state()
        turn.replies = turn_messages(message, artifacts, turn.number)
        self.messages.extend(turn.replies)
        if artifacts.error:
            return self._ended(ErrorInfo(type="AgentError", message=clip(safe_text(artifacts.error)),
                                         kind=artifacts.error_kind or "agent_error"))
        return True

    def _ended(self, error: ErrorInfo | None) -> bool:
        self.error, self.ended_by = error, "error"
        return False

    async def _state(self) -> Any:
        """The world's state after a turn (NO_STATE without a world, or a harness world with no state())."""
        if self.world is not None and self.subject.setup is None:
            return await self._on_thread(self.world.state) if self.sync else await self.world.astate()
        if callable(getattr(self.seen, "state", None)):
            from ..compile._world import astate_of, state_of

            if self.sync:
                return await self._on_thread(state_of, self.seen)
            return await astate_of(self.seen)
        return NO_STATE

    async def _user_says(self) -> str | None:
        """The simulated user's next message; None when it says it is done."""
        reply = self.user(instructions=self.case.simulated_user or "", messages=list(self.messages),
                          repeat_index=self.index, case=self.case.name)
        if is_awaitable(reply):
            reply = await reply
        tokens = getattr(reply, "tokens", None)
        if type(tokens) is int and tokens >= 0:
            self.user_tokens = (self.user_tokens or 0) + tokens
        text = getattr(reply, "text", reply)
        if text is not None and not isinstance(text, str):
            raise TypeError(f"the simulated user returned {type(text).__name__}, not its next message (a str) "
                            "or None (it is done)")
        return text

    async def finish(self, abandoned: bool = False) -> None:
        """Step 4: the world closed and the agent told the conversation is over, whatever happened.
        ``abandoned`` (after a timeout): the world is closed from a thread of its own, not waited for."""
        if self.world is not None and abandoned:
            threading.Thread(target=self.world.close, name="evaldsl-world-close", daemon=True).start()
        elif self.world is not None:
            await self._on_thread(self.world.close) if self.sync else await self.world.aclose()
            if self.world.close_error is not None and self.error is None:
                self.error = error_info(self.world.close_error)
        closer = getattr(getattr(self.subject.run, "__self__", None), "close_conversation", None)
        if callable(closer):
            try:
                done = closer(self.conversation_id)
                if is_awaitable(done):
                    await done
            except Exception as exc:  # the agent's own cleanup: the run keeps its result, the error is said
                if self.error is None:
                    self.error = error_info(exc)
        if self.thread is not None:
            self.thread.stop()

    def abandon(self) -> None:
        """At Ctrl-C: the world closed from a thread of its own, not waited for."""
        if self.world is not None:
            threading.Thread(target=self.world.close, name="evaldsl-world-close", daemon=True).start()
        if self.thread is not None:
            self.thread.stop()

    def results(self) -> ConversationResult:
        turns = [TurnResult(turn=t.number, message=t.message, simulated=t.simulated, artifacts=t.artifacts,
                            latency_s=t.latency, world_state=None if t.state is NO_STATE else t.state)
                 for t in self.turns]
        return ConversationResult(turns=turns, ended_by=self.ended_by, user_tokens=self.user_tokens)  # type: ignore[arg-type]


async def execute_conversation(subject: Subject, case: CompiledCase, index: int, *, pool: DaemonPool,
                               judge: JudgeFn | None = None, predicates: Mapping[str, PredicateFn] | None = None,
                               clock: LoopClock | None = None, user: Any = None) -> RunResult:
    """One run of a conversation case, scored; never raises but the runner's cancellation."""
    clock = clock if clock is not None else LoopClock()
    conv = Conversation(subject, case, index, pool, user)
    timeout = case.settings.timeout_s
    set_match_limit(timeout)
    if case.simulated_user is not None and user is None:
        conv.error = ErrorInfo(type="UsageError", kind="agent_protocol", message=(
            "this case has a `simulated user`, and no model plays it: pass --user-model PROVIDER:MODEL"))
        return _scored_nothing(conv, index)
    start, busy = time.perf_counter(), clock.busy
    abandoned = False
    try:
        await bounded(conv.play(), timeout, clock=clock, settle=pool.settle)
    except RunTimeout:
        from ._execute import timeout_run

        abandoned = True
        conv.error = timeout_run(index, timeout, 0.0, on_loop=not conv.sync).error
        conv.ended_by = "error"
    except asyncio.CancelledError as exc:
        if runner_cancelling():
            conv.abandon()
            raise
        forget_cancel()
        conv.error, conv.ended_by = cancelled_info(exc, "the agent"), "error"
    except KeyboardInterrupt:
        conv.abandon()
        raise
    except BaseException as exc:  # the world's constructor, a harness's setup, the simulated user's model
        conv.error, conv.ended_by = error_info(exc), "error"
    await conv.finish(abandoned)
    latency = max(0.0, time.perf_counter() - start - (0.0 if conv.sync else clock.busy - busy))
    return await _score(conv, latency, judge, predicates, clock)


def _scored_nothing(conv: Conversation, index: int) -> RunResult:
    return run_result(index, False, 0.0, 0.0, conv.error, [], None, (), conv.results())


async def _score(conv: Conversation, latency: float, judge: JudgeFn | None,
                 predicates: Mapping[str, PredicateFn] | None, clock: LoopClock) -> RunResult:
    """Step 5 of the module docstring."""
    predicates = conv.subject.predicates if predicates is None else predicates
    results, eval_error, whole = await score_turns(conv.case, conv.turns, conv.seen, judge=judge,
                                                   predicates=predicates, pool=conv.pool, clock=clock)
    error = conv.error or eval_error
    score, passed = 1.0, error is None
    for result in results:
        score *= result.credit
        passed = passed and result.passed
    warnings = [w for t in conv.turns for w in t.warnings]
    return run_result(conv.index, passed, 0.0 if error else score, latency, error, results, whole, warnings,
                      conv.results())
