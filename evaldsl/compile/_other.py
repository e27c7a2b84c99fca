"""The other predicates (docs/language.md section 6.3): errors, budgets, judge, custom.

These read what the runner hands in rather than what the agent said. The
judge and the custom predicates are functions from the outside (the runner
passes the judge, the harness registers the predicates), so compile never
imports HTTP code or user code; a check only calls what `EvalContext` holds.

A missing judge, an unknown predicate name, or a reply that cannot be read
is not a failed expectation but a broken run: these raise, and the runner
marks the run an error, never giving it a default score.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..syntax import _ast as a
from ._errors import CompileProblem
from ._model import Check, EvalContext, JudgeVerdict, Outcome
from ._user_code import call_bounded
from ._values import is_number, shorten, show, to_number, to_python, to_text

_HOLDS = Outcome(1.0)


def compile_other(node: Any) -> Check:
    """Compile NoError, TokensAtMost, DurationAtMost, Judge or CustomPredicate.

    Raises:
        CompileProblem: for a threshold outside [0, 1], a negative limit, or
            an unfilled placeholder.
    """
    factory = _FACTORIES.get(type(node))
    if factory is None:
        raise CompileProblem(f"not a predicate: {getattr(node, 'kind', node)}", node)
    return factory(node)


def _no_error(node: a.NoError) -> Check:
    def check(ctx: EvalContext) -> Outcome:
        error = ctx.artifacts.error
        if error is None:
            return _HOLDS
        return Outcome(0.0, f"the run reported an error: {shorten(error)}")

    return check


def _tokens(node: a.TokensAtMost) -> Check:
    limit = to_number(node.limit)
    if limit < 0:
        raise CompileProblem("a token limit cannot be negative", node.limit, code="E213")

    def check(ctx: EvalContext) -> Outcome:
        used = ctx.artifacts.tokens
        if used is None:
            return Outcome(0.0, "the run reported no token count")
        if used <= limit:
            return _HOLDS
        return Outcome(0.0, f"the run used {used} tokens, more than {show(limit)}")

    return check


def _duration(node: a.DurationAtMost) -> Check:
    limit = node.limit.seconds
    written = f"{node.limit.amount}{node.limit.unit}"

    def check(ctx: EvalContext) -> Outcome:
        took = ctx.duration_s if ctx.duration_s is not None else ctx.artifacts.duration_s
        if took is None:
            return Outcome(0.0, "the run's duration is unknown")
        if took <= limit:
            return _HOLDS
        return Outcome(0.0, f"the run took {took:.3g}s, more than {written}")

    return check


def _judge(node: a.Judge) -> Check:
    rubric = to_text(node.rubric)
    threshold = 0.5 if node.threshold is None else to_number(node.threshold)
    if not 0 <= threshold <= 1:
        raise CompileProblem(f"a judge threshold is a score from 0 to 1, not {show(threshold)}",
                             node.threshold, code="E213")

    def check(ctx: EvalContext) -> Outcome:
        if ctx.judge is None:
            raise RuntimeError(f"no judge configured: `judge {show(rubric, limit=60)}` needs "
                               "a judge model to grade the run")
        score, reasoning = _verdict(ctx.judge(rubric=rubric, prompt=ctx.prompt, artifacts=ctx.artifacts))
        why = f"; reasoning: {reasoning}" if reasoning else ""
        if score >= threshold:
            return Outcome(1.0, f"judge scored {score:.2f}, at least {show(threshold)}{why}")
        return Outcome(0.0, f"judge scored {score:.2f}, below {show(threshold)}, "
                            f"on {show(rubric, limit=80)}{why}")

    return check


def _verdict(value: Any) -> tuple[float, str]:
    """A judge's return value (a score, a (score, reasoning) pair, a JudgeVerdict) as (score, reasoning).

    Raises:
        ValueError: for anything else, or a score outside [0, 1].
    """
    reasoning: Any = ""
    if isinstance(value, JudgeVerdict):
        value, reasoning = value.score, value.reasoning
    elif isinstance(value, tuple) and len(value) == 2:
        value, reasoning = value
    if not is_number(value) or math.isnan(value) or not 0 <= value <= 1:
        raise ValueError(f"the judge returned {value!r}, not a score from 0 to 1")
    if not isinstance(reasoning, str):
        raise ValueError(f"the judge returned reasoning {reasoning!r}, not text")
    return float(value), reasoning.strip()


def _custom(node: a.CustomPredicate) -> Check:
    name = node.name
    kwargs = {entry.key: to_python(entry.value) for entry in node.args}

    def check(ctx: EvalContext) -> Outcome:
        fn = ctx.predicates.get(name)
        if fn is None:
            known = ", ".join(sorted(ctx.predicates)) or "none"
            raise LookupError(f"no custom predicate named {name!r}; known: {known}")
        result = call_bounded(f"custom predicate {name!r}", fn, ctx.artifacts, ctx.world, **kwargs)
        return _custom_outcome(name, result)

    return check


def _custom_outcome(name: str, result: Any) -> Outcome:
    """Read a custom predicate's result: a bool, a credit, or (bool, detail)."""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], bool):
        held, detail = result
        return _HOLDS if held else Outcome(0.0, str(detail) if detail else f"{name} failed")
    if isinstance(result, bool):
        return _HOLDS if result else Outcome(0.0, f"{name} returned false")
    if is_number(result):
        if math.isnan(result) or not 0 <= result <= 1:
            raise ValueError(f"custom predicate {name!r} returned credit {result!r}, "
                             "outside 0 to 1")
        credit = float(result) + 0.0  # -0.0 is credit 0
        return _HOLDS if credit == 1 else Outcome(credit, f"{name} gave credit {credit:g}")
    raise TypeError(f"custom predicate {name!r} returned {type(result).__name__}; expected "
                    "a bool, a credit from 0 to 1, or a (bool, detail) pair")


_FACTORIES: dict[type, Callable[[Any], Check]] = {
    a.NoError: _no_error,
    a.TokensAtMost: _tokens,
    a.DurationAtMost: _duration,
    a.Judge: _judge,
    a.CustomPredicate: _custom,
    a.WorldState: lambda node: _world_state(node),
}


def _world_state(node: a.WorldState) -> Check:
    from ._world_state import compile_world_state  # v2; its own module

    return compile_world_state(node)
