"""Predicates over the tool calls (docs/language.md section 6.1).

Tool selection is what an agent eval is mostly about, and a bare "failed"
is useless there, so each check, when it fails, says what the agent did
instead: the calls of the tool in question with the reason the closest one
(fewest failing keys) missed the argument pattern; for an order, the whole
sequence and the step that was not found; for a count, the count. Tool
names compare exactly, as written.

A chain `called S1 then S2` is a subsequence test. Matching each step at
the earliest call after the previous step's is enough: if any embedding
exists, the greedy one finds it, since an earlier match only leaves more
calls for the steps after it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..artifacts import ToolCall
from ..syntax import _ast as a
from ._errors import CompileProblem
from ._model import Check, EvalContext, Outcome
from ._patterns import ArgsMisses, Miss, compile_args_misses, format_miss
from ._values import compact_json, label, shorten, show, to_number, tool_name

_HOLDS = Outcome(1.0)
_LISTED = 5
"""How many calls a detail shows in full before it says how many more."""

Misses = ArgsMisses


class _Step:
    """A compiled step: a tool name (None for `any tool`) and its argument test."""

    __slots__ = ("tool", "misses", "args")

    def __init__(self, tool: str | None, misses: Misses | None, args: str) -> None:
        self.tool = tool
        self.misses = misses
        self.args = args
        """How its argument pattern is written (`<op: add>`); '' without one."""

    @property
    def label(self) -> str:
        """How the step is written: `search`, `any tool`, `calc with <op: add>`."""
        shown = "any tool" if self.tool is None else self.tool
        return f"{shown} with {self.args}" if self.args else shown

    def matches(self, call: ToolCall) -> bool:
        if self.tool is not None and call.name != self.tool:
            return False
        return self.misses is None or self.misses.fits(call.args)


def compile_calls(node: Any) -> Check:
    """Compile a tool-call predicate into a check over a run.

    Args:
        node: Called, CalledAny, CalledSequence, CallsAre, OnlyCalled,
            FirstCall, LastCall, EveryCall or NoToolCalls.

    Raises:
        CompileProblem: for a COUNT after a `then` chain, an impossible COUNT,
            a bad argument pattern, or an unfilled placeholder.
    """
    factory = _FACTORIES.get(type(node))
    if factory is None:
        raise CompileProblem(f"not a tool-call predicate: {getattr(node, 'kind', node)}", node)
    return factory(node)


# --------------------------------------------------------------- helpers --


def _step(tool: Any, args: Any) -> _Step:
    name = None if tool is None else tool_name(tool)
    if args is None:
        return _Step(name, None, "")
    return _Step(name, compile_args_misses(args), label(args))


def _names(calls: Sequence[ToolCall]) -> str:
    """`calls: a, b, c`, or `no tool was called`."""
    if not calls:
        return "no tool was called"
    names = [call.name for call in calls[:20]]
    more = f", … ({len(calls) - 20} more)" if len(calls) > 20 else ""
    return f"calls: {', '.join(names)}{more}"


def _shown(calls: Sequence[ToolCall]) -> str:
    """The first few calls in full, `name({...})`, comma-separated."""
    if len(calls) == 1:  # the usual one call, without a list and a join
        return shorten(_display(calls[0]), 100)
    text = ", ".join([shorten(_display(call), 100) for call in calls[:_LISTED]])
    return text + (f", … ({len(calls) - _LISTED} more)" if len(calls) > _LISTED else "")


def _display(call: ToolCall) -> str:
    """`call.display()`, with its JSON made by `compact_json` when it can (the encoder is most of its time)."""
    if type(call) is ToolCall:  # (a subclass may display itself otherwise)
        args = call.args
        shown = args if isinstance(args, str) else compact_json(args)
        if shown is not None:
            return f"{call.name}({shown})"
    return call.display()


def _not_called(tool: str | None, calls: Sequence[ToolCall]) -> str:
    return f"{tool} was not called; {_names(calls)}" if calls else "no tool was called"


def _times(n: int, unit: str = "time") -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def _closest(misses: Misses, calls: Sequence[ToolCall]) -> tuple[ToolCall, str]:
    """The call whose arguments fail the fewest keys (the first of those), with its reasons joined."""
    best: list[Miss] | None = None
    closest = calls[0]
    for call in calls:
        found = misses.match(call.args)
        if best is None or len(found) < len(best):
            best, closest = found, call
    return closest, _reasons(best or [])


def _reasons(misses: list[Miss]) -> str:
    """The misses as a detail lists them, `a: expected 0, got 1; b: ...` (only the closest call's are worded)."""
    if len(misses) == 1:
        return format_miss(misses[0])
    return "; ".join([format_miss(miss) for miss in misses])


def _step_miss(step: _Step, call: ToolCall, which: str, joiner: str,
               calls: Sequence[ToolCall]) -> str | None:
    """Why one call (`which`: "call 2", "first call") does not fit `step`; None when it does."""
    if step.tool is not None and call.name != step.tool:
        return f"{which} was {call.name}, {joiner} {step.tool}; {_names(calls)}"
    found = step.misses.match(call.args) if step.misses else None
    if found:
        return f"{which} {shorten(_display(call), 100)} did not match {step.args}: {_reasons(found)}"
    return None


def _no_match(step: _Step, of_tool: Sequence[ToolCall], closest: list[Miss] | None,
              calls: Sequence[ToolCall]) -> str:
    """Why no call matched `step` (a named tool with arguments), given its calls and the closest one's misses."""
    if closest is None:
        return _not_called(step.tool, calls)
    return (f"no call of {step.tool} matched {step.args}; calls of {step.tool}: "
            f"{_shown(of_tool)}; closest: {_reasons(closest)}")


def _count(node: a.Count) -> tuple[Callable[[int], bool], str]:
    """A COUNT as a test on a number of calls, and its wording."""
    n = _whole(node.n) if node.n is not None else 0
    if node.form == "once":
        return (lambda k: k == 1), "once"
    if node.form == "twice":
        return (lambda k: k == 2), "twice"
    if node.form == "times":
        return (lambda k: k == n), _times(n)
    if node.form == "at least":
        return (lambda k: k >= n), f"at least {_times(n)}"
    if node.form == "at most":
        return (lambda k: k <= n), f"at most {_times(n)}"
    m = _whole(node.m)
    if n > m:
        raise CompileProblem(f"between {n} and {m} times can never hold: "
                             "the first bound is above the second", node, code="E213")
    return (lambda k: n <= k <= m), f"between {n} and {_times(m)}"


def _whole(node: Any) -> int:
    value = to_number(node)
    if value < 0 or (isinstance(value, float) and not value.is_integer()):
        raise CompileProblem(f"a count must be a whole number, 0 or more, not {show(value)}",
                             node, code="E213")
    return int(value)


# ---------------------------------------------------------------- called --


def _called(node: a.Called) -> Check:
    step = _step(node.tool, node.args)
    if node.count is not None:
        return _counted(step, node.count)
    return _Called(step)


class _Called:
    """`called T [with ARGS]`: some call fits the step (an object: a suite of many cases holds little a case)."""

    __slots__ = ("step",)

    def __init__(self, step: _Step) -> None:
        assert step.tool is not None  # (`called` always names its tool: `any tool` is CalledAny)
        self.step = step

    def __call__(self, ctx: EvalContext) -> Outcome:
        step = self.step
        tool, misses = step.tool, step.misses
        calls = ctx.artifacts.tool_calls
        if misses is None:
            for call in calls:
                if call.name == tool:
                    return _HOLDS
            return Outcome(0.0, _not_called(tool, calls))
        # one pass: each call of the tool is matched once, and the fewest misses kept for the detail
        of_tool: list[ToolCall] = []
        closest: list[Miss] | None = None
        for call in calls:
            if call.name == tool:
                found = misses.match(call.args)
                if not found:
                    return _HOLDS
                of_tool.append(call)
                if closest is None or len(found) < len(closest):
                    closest = found
        return Outcome(0.0, _no_match(step, of_tool, closest, calls))


def _counted(step: _Step, count: a.Count) -> Check:
    test, wording = _count(count)

    def check(ctx: EvalContext) -> Outcome:
        calls = ctx.artifacts.tool_calls
        hits = sum(1 for call in calls if step.matches(call))
        if test(hits):
            return _HOLDS
        if step.misses is None:
            return Outcome(0.0, f"expected {step.label} {wording}, called {_times(hits)}")
        of_tool = [call for call in calls if call.name == step.tool]
        seen = f"calls of {step.tool}: {_shown(of_tool)}" if of_tool else _names(calls)
        return Outcome(0.0, f"expected {step.label} {wording}, matched {_times(hits)}; {seen}")

    return check


def _called_any(node: a.CalledAny) -> Check:
    test, wording = _count(node.count) if node.count else ((lambda k: k >= 1), "")

    def check(ctx: EvalContext) -> Outcome:
        calls = ctx.artifacts.tool_calls
        if test(len(calls)):
            return _HOLDS
        if not wording:
            return Outcome(0.0, "no tool was called")
        return Outcome(0.0, f"expected any tool {wording}, called {_times(len(calls))}; "
                            f"{_names(calls)}")

    return check


# ----------------------------------------------------------------- order --


def _sequence(node: a.CalledSequence) -> Check:
    if node.count is not None:
        raise CompileProblem("a count cannot follow a `then` chain", node.count, code="E204",
                             help="count one tool instead: `called T at least 2 times`")
    steps = [_step(step.tool, step.args) for step in node.steps]

    def check(ctx: EvalContext) -> Outcome:
        calls = ctx.artifacts.tool_calls
        start, previous = 0, ""
        for number, step in enumerate(steps, 1):
            found = _first_match(step, calls, start)
            if found is None:
                return Outcome(0.0, _step_missing(number, step, previous, calls[start:], calls))
            previous = f" after {calls[found].name} at call {found + 1}"
            start = found + 1
        return _HOLDS

    return check


def _first_match(step: _Step, calls: Sequence[ToolCall], start: int) -> int | None:
    """The index of the first call from `start` on that fits `step` (a loop: no generator a step)."""
    for index in range(start, len(calls)):
        if step.matches(calls[index]):
            return index
    return None


def _step_missing(number: int, step: _Step, previous: str, rest: Sequence[ToolCall],
                  calls: Sequence[ToolCall]) -> str:
    detail = f"step {number} ({step.label}) not found{previous}; {_names(calls)}"
    if step.misses is not None:
        candidates = [call for call in rest if step.tool in (None, call.name)]
        if candidates:
            call, reasons = _closest(step.misses, candidates)
            detail += f"; closest: {shorten(_display(call), 100)}: {reasons}"
    return detail


def _calls_are(node: a.CallsAre) -> Check:
    steps = [_step(step.tool, step.args) for step in node.steps]

    def check(ctx: EvalContext) -> Outcome:
        calls = ctx.artifacts.tool_calls
        for number, (step, call) in enumerate(zip(steps, calls, strict=False), 1):
            if step.misses is None and call.name == step.tool:
                continue  # a step that names the call's tool and no arguments holds: nothing to word
            miss = _step_miss(step, call, f"call {number}", "expected", calls)
            if miss:
                return Outcome(0.0, miss)
        if len(calls) != len(steps):
            return Outcome(0.0, f"expected {_times(len(steps), 'call')}, got {len(calls)}; "
                                f"{_names(calls)}")
        return _HOLDS

    return check


# ------------------------------------------------------------- the rest --


def _only_called(node: a.OnlyCalled) -> Check:
    allowed = [tool_name(tool) for tool in node.tools]
    permitted = frozenset(allowed)

    def check(ctx: EvalContext) -> Outcome:
        calls = ctx.artifacts.tool_calls
        others = [f"{call.name} (call {i})" for i, call in enumerate(calls, 1)
                  if call.name not in permitted]
        if not others:
            return _HOLDS
        shown = ", ".join(others[:_LISTED]) + (", …" if len(others) > _LISTED else "")
        return Outcome(0.0, f"called tools not allowed: {shown}; allowed: {', '.join(allowed)}")

    return check


def _end_call(node: a.FirstCall | a.LastCall) -> Check:
    step = _step(node.tool, node.args)
    which = "first" if isinstance(node, a.FirstCall) else "last"
    index = 0 if which == "first" else -1

    def check(ctx: EvalContext) -> Outcome:
        calls = ctx.artifacts.tool_calls
        if not calls:
            return Outcome(0.0, "no tool was called")
        miss = _step_miss(step, calls[index], f"{which} call", "not", calls)
        return Outcome(0.0, miss) if miss else _HOLDS

    return check


def _every_call(node: a.EveryCall) -> Check:
    step = _step(node.tool, node.args)
    misses = step.misses
    assert misses is not None

    def check(ctx: EvalContext) -> Outcome:
        of_tool = [(i, call) for i, call in enumerate(ctx.artifacts.tool_calls, 1)
                   if call.name == step.tool]
        failed = [(i, call, found) for i, call in of_tool if (found := misses.match(call.args))]
        if not failed:
            return _HOLDS
        i, call, found = failed[0]
        return Outcome(0.0, f"{len(failed)} of {len(of_tool)} calls of {step.tool} did not "
                            f"match {step.args}; call {i} "
                            f"{shorten(_display(call), 100)}: {_reasons(found)}")

    return check


def _no_tool_calls(node: a.NoToolCalls) -> Check:
    def check(ctx: EvalContext) -> Outcome:
        calls = ctx.artifacts.tool_calls
        if not calls:
            return _HOLDS
        return Outcome(0.0, f"expected no tool calls, got {len(calls)}; {_names(calls)}")

    return check


_FACTORIES: dict[type, Callable[[Any], Check]] = {
    a.Called: _called,
    a.CalledAny: _called_any,
    a.CalledSequence: _sequence,
    a.CallsAre: _calls_are,
    a.OnlyCalled: _only_called,
    a.FirstCall: _end_call,
    a.LastCall: _end_call,
    a.EveryCall: _every_call,
    a.NoToolCalls: _no_tool_calls,
}
