"""A conversation's turns: what each turn did, as chat messages, merged, and scored (LANGUAGE.md 11).

`PlayedTurn` is one turn while a run plays it (`run._conversation`) or as a
record holds it (`rescore`); `score_turns` judges a case's expectations over
them: each turn's own on that turn, the whole conversation's on the turns
merged (`merged`: every call in order, the last reply, tokens and times
summed). `turn_messages` is a turn as the chat messages the next turn's
``ctx.messages`` carries; `conversation_prompt` is what a judge is shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..artifacts import RunArtifacts, ToolCall
from ..compile._model import NO_STATE, CompiledCase, EvalContext, JudgeFn, PredicateFn
from ..compile._regex import disarm as disarm_matches
from ._control import LoopClock
from ._record import ConversationResult, ErrorInfo, ExpectationResult
from ._scoring import evaluate
from ._threads import DaemonPool


class PlayedTurn:
    """A turn while it is played (a `TurnResult` once the run ends)."""

    __slots__ = ("number", "message", "simulated", "artifacts", "latency", "state", "warnings", "replies")

    def __init__(self, number: int, message: str, simulated: bool) -> None:
        self.number, self.message, self.simulated = number, message, simulated
        self.artifacts: RunArtifacts | None = None
        self.latency = 0.0
        self.state: Any = NO_STATE
        self.warnings: list[str] = []
        self.replies: list[dict[str, Any]] | None = None
        """The agent's side of the turn as chat messages (`turn_messages`), once made."""


async def score_turns(case: CompiledCase, turns: list[PlayedTurn], world: Any, *, judge: JudgeFn | None,
                      predicates: Mapping[str, PredicateFn], pool: DaemonPool,
                      clock: LoopClock | None = None
                      ) -> tuple[list[ExpectationResult], ErrorInfo | None, RunArtifacts | None]:
    """Every expectation of a conversation's case over its turns (a run's, or a record's for `rescore`): each
    turn's own on that turn, the whole conversation's on the turns merged; in the order they are written.
    Returns the results, the first that could not be evaluated, and the turns merged (`merged`). A judge is
    shown the conversation up to the end of what it judges (`conversation_prompt`)."""
    timeout = case.settings.timeout_s
    results: list[ExpectationResult] = []
    eval_error: ErrorInfo | None = None
    judged = [t for t in turns if t.artifacts is not None]
    history: list[dict[str, Any]] = []
    whole = None
    try:
        for turn in turns:
            scoped = case.turns[turn.number - 1].expectations if turn.number <= len(case.turns) else ()
            history.append({"role": "user", "content": turn.message})
            if turn.artifacts is not None and scoped:
                judged_here = any(e.needs_judge for e in scoped)  # only a judge reads the conversation as text
                prompt = conversation_prompt(history) if judged_here else turn.message
                ctx = EvalContext(artifacts=turn.artifacts, prompt=prompt, world=world,
                                  duration_s=turn.latency, judge=judge, predicates=predicates,
                                  world_state=turn.state, tools=case.tools)
                found, error = await evaluate(scoped, ctx, pool=pool, timeout=timeout, clock=clock, turn=turn.number)
                results.extend(found)
                eval_error = eval_error or error
            if turn.artifacts is not None:
                replies = turn.replies
                history.extend(replies if replies is not None else turn_messages(turn.message, turn.artifacts,
                                                                                 turn.number))
        whole = merged(judged)
        if whole is not None and case.expectations:
            prompt = turns[0].message if len(turns) == 1 else conversation_prompt(history)
            ctx = EvalContext(artifacts=whole, prompt=prompt, world=world,
                              duration_s=sum(t.latency for t in judged), judge=judge, predicates=predicates,
                              world_state=judged[-1].state, tools=case.tools)
            found, error = await evaluate(case.expectations, ctx, pool=pool, timeout=timeout, clock=clock)
            results.extend(found)
            eval_error = eval_error or error
    finally:
        disarm_matches()
    results.sort(key=lambda r: r.line)  # the order they are written in: whole-conversation ones above the turns
    return results, eval_error, whole


def recorded_turns(conversation: ConversationResult, case: CompiledCase) -> list[PlayedTurn]:
    """A record's turns as `score_turns` takes them (`rescore`)."""
    out = []
    for t in conversation.turns:
        turn = PlayedTurn(t.turn, t.message, t.simulated)
        turn.artifacts, turn.latency = t.artifacts, t.latency_s
        turn.state = t.world_state if (t.world_state is not None or case.world is not None) else NO_STATE
        out.append(turn)
    return out


def merged(turns: list[PlayedTurn]) -> RunArtifacts | None:
    """The turns' artifacts as one run's: every call in order, the last reply, tokens and times summed."""
    if not turns:
        return None
    if len(turns) == 1:
        return turns[0].artifacts
    parts = [t.artifacts for t in turns if t.artifacts is not None]
    last = parts[-1]

    def total(name: str) -> int | None:
        values = [getattr(p, name) for p in parts if getattr(p, name) is not None]
        return sum(values) if values else None

    return RunArtifacts(
        tool_calls=[c for p in parts for c in p.tool_calls], final_text=last.final_text,
        tokens=total("tokens"), input_tokens=total("input_tokens"), output_tokens=total("output_tokens"),
        error=last.error, error_kind=last.error_kind, transcript=[m for p in parts for m in p.transcript],
        duration_s=sum(p.duration_s or 0.0 for p in parts),
    )


def turn_messages(message: str, artifacts: RunArtifacts, turn: int) -> list[dict[str, Any]]:
    """The agent's side of one turn as chat messages: its own transcript from this turn's user message
    on, when it is made of chat messages that hold its calls; else its calls (an assistant message with
    ``tool_calls`` and a ``tool`` message each) and its reply."""
    transcript = artifacts.transcript
    for i in range(len(transcript) - 1, -1, -1):
        item = transcript[i]
        if isinstance(item, dict) and item.get("role") == "user" and item.get("content") == message:
            rest = transcript[i + 1:]
            chat = all(isinstance(m, dict) and m.get("role") in ("assistant", "tool") for m in rest)
            shown = sum(len(m.get("tool_calls") or ()) for m in rest if isinstance(m, dict))
            if rest and chat and shown >= len(artifacts.tool_calls):  # it holds the calls too
                return [dict(m) for m in rest]
            break
    out: list[dict[str, Any]] = []
    for k, call in enumerate(artifacts.tool_calls, 1):
        call_id = f"call_{turn}_{k}"
        out.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": call.name, "arguments": _arguments(call)}}]})
        out.append({"role": "tool", "tool_call_id": call_id,
                    "content": call.result if isinstance(call.result, str) else json.dumps(call.result)})
    out.append({"role": "assistant", "content": artifacts.final_text or ""})
    return out


def _arguments(call: ToolCall) -> str:
    if isinstance(call.args, str):
        return call.args
    try:
        return json.dumps(call.args, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(call.args)


def conversation_prompt(messages: list[dict[str, Any]]) -> str:
    """A conversation as the judge's ``prompt``: each user message and agent reply on its own lines."""
    if len(messages) == 1:
        return str(messages[0].get("content") or "")
    lines = []
    for m in messages:
        role, content = m.get("role"), m.get("content")
        if role == "user":
            lines.append(f"[user] {content}")
        elif role == "assistant" and content:
            lines.append(f"[agent] {content}")
    return "\n".join(lines)
