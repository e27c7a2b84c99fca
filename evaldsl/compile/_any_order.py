"""`called [S1, S2, ...] in any order` and `calls are [...] in any order` (LANGUAGE.md 4.1, v2).

Each step must be matched by a call of its own. A greedy scan (each step
takes the first free call that fits it) is wrong: for the steps `search`,
`search with <q: "paris">` and the calls search(q: "paris"), search(q:
"lyon"), the first step takes the "paris" call and leaves the second step
with nothing, though the other assignment works. The question is whether a
matching of steps to distinct calls covers every step: a maximum bipartite
matching, found here by augmenting paths (Kuhn's algorithm; k steps and n
calls cost at most k searches of O(k * n) each, nothing next to a few dozen
calls).

The greedy assignment is still tried first: when it covers every step (the
usual passing run, calls in the steps' order) no graph is built, so an
`in any order` expectation costs about what its `then` chain costs
(bench/bench_any_order.py). Only when it fails is the full matching run.

A failure names a step that no maximum matching gives a call of its own,
and the closest unmatched call of its tool, with why it missed, the way
`called T with ARGS` shows the closest call.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..artifacts import ToolCall
from ..syntax import _ast as a
from ._calls import _closest, _display, _names, _Step, _step, _times
from ._errors import CompileProblem
from ._model import Check, EvalContext, Outcome
from ._values import shorten

_HOLDS = Outcome(1.0)


def compile_any_order(node: a.CalledAnyOrder | a.CallsAreAnyOrder) -> Check:
    """Compile `called [...] in any order` (``exact`` False) or `calls are [...] in any order`."""
    if not node.steps:
        raise CompileProblem("an empty step list `[]` expects nothing", node, code="E253",
                             help="name at least one step: called [search, send_email] in any order")
    count = getattr(node, "count", None)
    if count is not None:
        raise CompileProblem("a count cannot follow a step list", count, code="E204",
                             help="count each tool in its own expectation (expect called T twice), or list "
                                  "the step as often as it must occur: called [T, T] in any order")
    steps = tuple(_step(step.tool, step.args) for step in node.steps)
    return _AnyOrder(steps, exact=isinstance(node, a.CallsAreAnyOrder))


def match_steps(steps: Sequence[_Step], calls: Sequence[ToolCall]) -> list[int | None]:
    """A maximum matching of steps to distinct calls: for each step, its call's index, or None.

    The greedy assignment first; when it leaves a step out, the full matching (augmenting paths).
    """
    taken = [False] * len(calls)
    owner: list[int | None] = []
    for step in steps:
        found = None
        for j, call in enumerate(calls):
            if not taken[j] and step.matches(call):
                found = j
                taken[j] = True
                break
        if found is None:
            return _maximum(steps, calls)
        owner.append(found)
    return owner


def _maximum(steps: Sequence[_Step], calls: Sequence[ToolCall]) -> list[int | None]:
    """Kuhn's augmenting paths over the graph of which call fits which step."""
    fits = [[j for j, call in enumerate(calls) if step.matches(call)] for step in steps]
    call_of: list[int | None] = [None] * len(steps)
    step_of: list[int | None] = [None] * len(calls)
    for i in range(len(steps)):
        _augment(i, fits, call_of, step_of, [False] * len(calls))
    return call_of


def _augment(i: int, fits: list[list[int]], call_of: list[int | None], step_of: list[int | None],
             seen: list[bool]) -> bool:
    """Find a call for step ``i``, moving other steps to other calls if need be (an augmenting path).

    Iterative (a stack of (step, next candidate)), so a long list cannot exhaust Python's recursion."""
    stack = [(i, 0)]
    path: list[tuple[int, int]] = []  # (step, call) pairs along the path being tried
    while stack:
        step, k = stack.pop()
        options = fits[step]
        while k < len(options) and seen[options[k]]:
            k += 1
        if k == len(options):
            if path:
                path.pop()
            continue
        j = options[k]
        seen[j] = True
        stack.append((step, k + 1))
        path.append((step, j))
        holder = step_of[j]
        if holder is None:  # a free call: flip the path
            for s, c in path:
                call_of[s], step_of[c] = c, s
            return True
        stack.append((holder, 0))
    return False


class _AnyOrder:
    """The compiled check: a matching covering every step (and, ``exact``, every call)."""

    __slots__ = ("steps", "exact")

    def __init__(self, steps: tuple[_Step, ...], *, exact: bool) -> None:
        self.steps = steps
        self.exact = exact

    def __call__(self, ctx: EvalContext) -> Outcome:
        calls = ctx.artifacts.tool_calls
        owner = match_steps(self.steps, calls)
        missing = next((i for i, j in enumerate(owner) if j is None), None)
        if missing is not None:  # (with fewer calls than steps, `calls are` always ends here)
            return Outcome(0.0, self._no_call(missing, owner, calls))
        if self.exact and len(calls) != len(self.steps):
            return Outcome(0.0, self._extra(calls, owner))
        return _HOLDS

    def _extra(self, calls: Sequence[ToolCall], owner: list[int | None]) -> str:
        """`calls are [...] in any order` with every step matched, but more calls than steps."""
        used = set(owner)
        rest = [f"{shorten(_display(call), 100)} (call {j})" for j, call in enumerate(calls, 1) if j - 1 not in used]
        shown = ", ".join(rest[:5]) + (f", … ({len(rest) - 5} more)" if len(rest) > 5 else "")
        return (f"expected exactly {_times(len(self.steps), 'call')}, got {len(calls)}; "
                f"no step for {shown}")

    def _no_call(self, missing: int, owner: list[int | None], calls: Sequence[ToolCall]) -> str:
        step = self.steps[missing]
        detail = f"step {missing + 1} ({step.label}) found no call of its own; {_names(calls)}"
        used = {j for j in owner if j is not None}
        free = [call for j, call in enumerate(calls) if j not in used and step.tool in (None, call.name)]
        taken = [f"step {owner.index(j) + 1}" for j, call in enumerate(calls) if j in used and step.matches(call)]
        if taken:
            detail += f"; the calls that fit it went to {', '.join(taken[:5])}"
        if free and step.misses is not None:
            call, reasons = _closest(step.misses, free)
            detail += f"; closest unmatched call: {shorten(_display(call), 100)}: {reasons}"
        elif not free and step.tool is not None:
            detail += f"; no unmatched call of {step.tool}"
        return detail


def any_order_holds(steps: Sequence[_Step], calls: Sequence[ToolCall], *, exact: bool) -> bool:
    """Whether the steps hold in any order (for tests and benchmarks): the check's verdict alone."""
    if exact and len(calls) != len(steps):
        return False
    return all(j is not None for j in match_steps(steps, calls))
