"""`expect world PATTERN` (LANGUAGE.md 4.3, 14): the world's state matches PATTERN.

The state is JSON the runner hands in (`EvalContext.world_state`): after
the turn, for an expectation under a `user` line; at the end of the run,
for any other. When the runner has none (`NO_STATE`) but the run's world is
a harness's with a ``state()`` method, that method is asked here, under the
case's timeout like a custom predicate. With neither, the run is an error
that says why: never a pass or a failure made up from nothing.
"""

from __future__ import annotations

from typing import Any

from ..syntax import _ast as a
from ._model import NO_STATE, Check, EvalContext, Outcome
from ._patterns import compile_pattern
from ._values import show

_HOLDS = Outcome(1.0)


def compile_world_state(node: a.WorldState) -> Check:
    matcher = compile_pattern(node.pattern)

    def check(ctx: EvalContext) -> Outcome:
        state = ctx.world_state
        if state is NO_STATE:
            state = harness_state(ctx.world)
        reason = matcher(state)
        return _HOLDS if reason is None else Outcome(0.0, f"world state {show(state, limit=160)}: {reason}")

    return check


def harness_state(world: Any) -> Any:
    """A harness's world's ``state()`` as JSON; LookupError when the run has no state to judge."""
    from pydantic_core import to_jsonable_python

    from ._user_code import call_bounded

    state = getattr(world, "state", None)
    if world is None or not callable(state):
        what = "no world" if world is None else f"a world ({type(world).__name__}) without a state() method"
        raise LookupError(f"`expect world` has no state to judge: this run has {what}; give the suite a "
                          "`world` line, or the harness's world a state() method")
    return to_jsonable_python(call_bounded("the world's state()", state), fallback=str)
