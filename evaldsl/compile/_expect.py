"""One `expect` line -> a `CompiledExpectation`.

Predicates come from their families (_calls, _text, _other); this module
composes them with `not` / `and` / `or` and applies partial credit
(docs/language.md 6.5): the credit is 1 when the main expression holds, else the
credit of the first fallback that holds, else 0. It also lints what only
the suite as a whole can know: calls of undeclared tools, argument keys
that are not a declared tool's params, unknown custom predicates.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from ..syntax import _ast as a
from ..syntax._diagnostics import Diagnostic, warning
from ..syntax._unparse import unparse
from ._errors import CompileProblem
from ._model import Check, CompiledExpectation, EvalContext, Outcome
from ._never import describe, never_reason
from ._values import shorten, show, to_number

_CALLS = (a.Called, a.CalledAny, a.CalledSequence, a.CallsAre, a.OnlyCalled, a.FirstCall,
          a.LastCall, a.EveryCall, a.NoToolCalls, a.CalledAnyOrder, a.CallsAreAnyOrder, a.ValidArguments)
_FINAL = (a.TextContains, a.TextIs, a.TextEmpty, a.TextStartsWith, a.TextEndsWith, a.TextMatches,
          a.NumberIs, a.NumberCompare, a.NumberBetween, a.FinalJson)
_HOLDS = Outcome(1.0)


def compile_expr(node: Any) -> Check:
    """Compile an expression tree (predicates joined by not / and / or)."""
    if isinstance(node, a.Negation):
        return _negate(compile_expr(node.expr), unparse(node.expr), _evidence(node.expr))
    if isinstance(node, a.AndExpr):
        return _all_of([compile_expr(x) for x in node.items])
    if isinstance(node, a.OrExpr):
        return _any_of([compile_expr(x) for x in node.items])
    if isinstance(node, (a.CalledAnyOrder, a.CallsAreAnyOrder)):  # v2: precise matching
        from ._any_order import compile_any_order

        return compile_any_order(node)
    if isinstance(node, a.ValidArguments):
        from ._validate import ValidArguments

        return ValidArguments()
    if isinstance(node, _CALLS):
        from ._calls import compile_calls

        return compile_calls(node)
    if isinstance(node, _FINAL):
        from ._text import compile_final

        return compile_final(node)
    from ._other import compile_other

    return compile_other(node)


def _evidence(node: Any) -> Any:
    """What to show when `not X` fails because X held: the calls, or the final text."""
    if isinstance(node, _CALLS):
        def calls(ctx: EvalContext) -> str:
            shown = ", ".join(shorten(c.display(), 80) for c in ctx.artifacts.tool_calls[:10])
            return f"calls: {shown or '(none)'}"

        return calls
    if isinstance(node, _FINAL):
        return lambda ctx: f"final text: {show(ctx.artifacts.final_text)}"
    return lambda ctx: None


def _negate(inner: Check, text: str, evidence: Any) -> Check:
    def check(ctx: EvalContext) -> Outcome:
        if inner(ctx).passed:
            extra = evidence(ctx)
            return Outcome(0.0, f"expected not `{text}`, but it held" + (f"; {extra}" if extra else ""))
        return _HOLDS

    return check


def _all_of(checks: list[Check]) -> Check:
    def check(ctx: EvalContext) -> Outcome:
        for part in checks:
            outcome = part(ctx)
            if not outcome.passed:
                return Outcome(0.0, outcome.detail)
        return _HOLDS

    return check


def _any_of(checks: list[Check]) -> Check:
    def check(ctx: EvalContext) -> Outcome:
        details = []
        for part in checks:
            outcome = part(ctx)
            if outcome.passed:
                return outcome
            details.append(outcome.detail or "did not hold")
        return Outcome(0.0, "none held: " + "; ".join(details))

    return check


def compile_expectation(
    node: a.Expectation, filename: str, *, from_suite: bool = False, needs_judge: bool | None = None,
    checks: dict[str, tuple[str, Check]] | None = None, label: str | None = None,
) -> CompiledExpectation:
    """Compile one expectation with its fallbacks.

    ``checks`` (label -> (label, check)) shares one compiled check among expectations
    of the same canonical text: what a check does depends on its text alone,
    and a suite of many similar cases then holds each distinct one once.
    """
    label = unparse(node) if label is None else label  # (the caller may have it already)
    shared = checks.get(label) if checks is not None else None
    if shared is None:
        check = _check(node)
        if checks is not None:
            checks[label] = (label, check)
    else:
        label, check = shared  # its label too: one string for every case that writes it
    line = node.span.line if node.span else 0
    return CompiledExpectation(
        label=label, file=filename, line=line, check=check,
        needs_judge=any(isinstance(n, a.Judge) for n in a.walk(node)) if needs_judge is None else needs_judge,
        from_suite=from_suite,
    )


def _check(node: a.Expectation) -> Check:
    main = compile_expr(node.expr)
    fallbacks = []
    for fb in node.fallbacks:
        credit = to_number(fb.credit)
        if not 0 < credit <= 1:
            raise CompileProblem(f"a fallback's credit must be above 0 and at most 1, not {credit}",
                                 fb.credit, code="E210")
        fallbacks.append((compile_expr(fb.expr), float(credit), unparse(fb.expr)))
    if not fallbacks:
        return main  # a check that does not hold gives credit 0 itself: nothing to add

    def check(ctx: EvalContext) -> Outcome:
        outcome = main(ctx)
        if outcome.passed:
            return outcome
        for fallback, credit, text in fallbacks:
            if fallback(ctx).passed:
                return Outcome(credit, f"{outcome.detail}; fallback `{text}` held, credit {credit:g}")
        return Outcome(0.0, outcome.detail)

    return check


_WITH_ARGS = (a.Called, a.Step, a.FirstCall, a.LastCall, a.EveryCall)


def lint(
    node: a.Expectation,
    tools: Mapping[str, Any],
    predicates: Mapping[str, Any] | None,
) -> tuple[list[CompileProblem], list[Diagnostic], bool]:
    """Suite-level checks of one (filled-in) expectation.

    Returns its errors, its warnings, and whether it needs a judge (one walk does all three).
    """
    problems: list[CompileProblem] = []
    warnings: list[Diagnostic] = []
    needs_judge = False
    # `not called delete_repo` is a safety rule: naming a tool the suite does not declare is the point
    nodes = list(a.walk(node))
    negated = {id(t) for neg in nodes if isinstance(neg, a.Negation)
               for t in a.walk(neg.expr) if isinstance(t, a.ToolName)}
    for n in nodes:
        if isinstance(n, a.Judge):
            needs_judge = True
        elif isinstance(n, a.CalledSequence) and n.count is not None:
            problems.append(CompileProblem(
                "a count cannot follow a `then` chain", n.count, code="E204",
                help="count each tool in its own expectation: expect called T twice"))
        elif isinstance(n, a.ToolName) and tools and n.name not in tools and id(n) in negated:
            near = [t for t in sorted(tools) if one_edit_apart(n.name, t)]
            if near:
                warnings.append(warning(
                    "W305", f"`{n.name}` under `not` is no declared tool, but one edit away from `{near[0]}`",
                    n.span, suggestion=near[0],
                    help="a misspelt tool name under `not` can never fail; if the name is meant, ignore this"))
        elif isinstance(n, a.ToolName) and tools and n.name not in tools:
            close = difflib.get_close_matches(n.name, list(tools), n=1)
            problems.append(CompileProblem(
                f"no declared tool is called `{n.name}`", n, code="E218",
                suggestion=close[0] if close else None,
                help=f"declared tools: {', '.join(sorted(tools))}"))
        elif isinstance(n, a.CustomPredicate) and predicates is not None and n.name not in predicates:
            close = difflib.get_close_matches(n.name, list(predicates), n=1)
            known = ", ".join(sorted(predicates)) or "(none registered)"
            problems.append(CompileProblem(
                f"unknown predicate `{n.name}`", n, code="E209",
                suggestion=close[0] if close else None, help=f"known predicates: {known}"))
        elif tools and isinstance(n, _WITH_ARGS):
            warnings.extend(_param_warnings(n, tools))
    return problems, warnings, needs_judge


def _param_warnings(node: Any, tools: Mapping[str, Any]) -> Iterator[Diagnostic]:
    tool, args = node.tool, node.args
    if not isinstance(tool, a.ToolName) or tool.name not in tools:
        return
    params = tools[tool.name].parameters.get("properties", {})
    for entry in (e for obj in _arg_objects(args) for e in obj.entries):
        if entry.key in params and (why := never_reason(entry.pattern, params[entry.key])) is not None:
            yield warning("W306", f"`{entry.key}` of tool `{tool.name}` can never match: {why}",
                          entry.pattern.span, help=f"the param `{entry.key}` {describe(params[entry.key])}; "
                          "a case that expects this call cannot pass")
        if entry.key not in params and not isinstance(entry.pattern, a.AbsentPattern):  # `absent`: the point
            close = difflib.get_close_matches(entry.key, list(params), n=1)
            yield warning("W302", f"`{entry.key}` is not a param of tool `{tool.name}`", entry.span,
                          suggestion=close[0] if close else None,
                          help=f"its params: {', '.join(params) or '(none)'}")


def _arg_objects(args: Any) -> Iterator[a.ObjectPattern]:
    """The object patterns a call's arguments are matched by: the pattern itself, or (v2) those under
    `only`, `or` and `and` (not under `not`: a key named there need not be a param)."""
    if isinstance(args, a.ObjectPattern):
        yield args
    elif isinstance(args, a.OnlyPattern):
        yield from _arg_objects(args.pattern)
    elif isinstance(args, (a.PatternOr, a.PatternAnd)):
        for part in args.patterns:
            yield from _arg_objects(part)


def called_names(node: Any) -> set[str]:
    """The tool names an AST node (a suite, a case, an expectation) expects calls of, those under
    `not` left out: `expect not called delete_repo` needs no declaration to mean what it says."""
    nodes = list(a.walk(node))
    negated = {id(t) for neg in nodes if isinstance(neg, a.Negation)
               for t in a.walk(neg.expr) if isinstance(t, a.ToolName)}
    return {n.name for n in nodes if isinstance(n, a.ToolName) and id(n) not in negated}


def one_edit_apart(a_name: str, b_name: str) -> bool:
    """Whether one letter inserted, deleted, changed, or two neighbours swapped, turns one name into the other."""
    if a_name == b_name or abs(len(a_name) - len(b_name)) > 1:
        return False
    if len(a_name) > len(b_name):
        a_name, b_name = b_name, a_name
    i = 0
    while i < len(a_name) and a_name[i] == b_name[i]:
        i += 1
    if len(a_name) < len(b_name):
        return a_name[i:] == b_name[i + 1:]
    swapped = i + 1 < len(a_name) and a_name[i] == b_name[i + 1] and a_name[i + 1] == b_name[i]
    return a_name[i + 1:] == b_name[i + 1:] or (swapped and a_name[i + 2:] == b_name[i + 2:])
