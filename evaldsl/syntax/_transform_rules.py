"""Transformer methods for expressions, predicates and statements.

Split from `_transform.py` to keep each module short: `ToAst` inherits
these, and they use its helpers (`_node`, `_regex`, `_duration`, ...). As
there, each method is named like its grammar rule and the AST class it builds.
"""

from __future__ import annotations

from typing import Any

from . import _ast as a


class RuleMethods:
    """One method per expression, predicate and statement rule."""

    _node: Any
    _regex: Any
    _duration: Any
    _unique_keys: Any
    string_token: Any
    token_value: Any

    # ---- expressions --------------------------------------------------------
    def expectation(self, meta: Any, c: list) -> a.Expectation:
        return self._node(a.Expectation, meta, expr=c[0], fallbacks=tuple(c[1:]))

    def fallback(self, meta: Any, c: list) -> a.Fallback:
        return self._node(a.Fallback, meta, expr=c[0], credit=c[1])

    def or_expr(self, meta: Any, c: list) -> a.OrExpr:
        return self._node(a.OrExpr, meta, items=tuple(c))

    def and_expr(self, meta: Any, c: list) -> a.AndExpr:
        return self._node(a.AndExpr, meta, items=tuple(c))

    def negation(self, meta: Any, c: list) -> a.Negation:
        return self._node(a.Negation, meta, expr=c[0])

    # ---- call predicates ----------------------------------------------------
    def step(self, meta: Any, c: list) -> a.Step:
        return self._node(a.Step, meta, tool=c[0], args=c[1])

    def any_step(self, meta: Any, c: list) -> a.Step:
        return self._node(a.Step, meta, tool=None, args=None)

    def called(self, meta: Any, c: list) -> Any:
        *steps, count = c
        if len(steps) > 1:
            return self._node(a.CalledSequence, meta, steps=tuple(steps), count=count)
        step = steps[0]
        if step.tool is None:
            return self._node(a.CalledAny, meta, count=count)
        return self._node(a.Called, meta, tool=step.tool, args=step.args, count=count)

    def calls_are(self, meta: Any, c: list) -> a.CallsAre:
        return self._node(a.CallsAre, meta, steps=tuple(c))

    def only_called(self, meta: Any, c: list) -> a.OnlyCalled:
        return self._node(a.OnlyCalled, meta, tools=tuple(c))

    def first_call(self, meta: Any, c: list) -> a.FirstCall:
        return self._node(a.FirstCall, meta, tool=c[0], args=c[1])

    def last_call(self, meta: Any, c: list) -> a.LastCall:
        return self._node(a.LastCall, meta, tool=c[0], args=c[1])

    def every_call(self, meta: Any, c: list) -> a.EveryCall:
        return self._node(a.EveryCall, meta, tool=c[0], args=c[1])

    def no_tool_calls(self, meta: Any, c: list) -> a.NoToolCalls:
        return self._node(a.NoToolCalls, meta)

    def no_error(self, meta: Any, c: list) -> a.NoError:
        return self._node(a.NoError, meta)

    def _count(self, meta: Any, form: str, c: list) -> a.Count:
        return self._node(a.Count, meta, form=form, n=c[0] if c else None, m=c[1] if len(c) > 1 else None)

    def once(self, meta: Any, c: list) -> a.Count:
        return self._count(meta, "once", c)

    def twice(self, meta: Any, c: list) -> a.Count:
        return self._count(meta, "twice", c)

    def times(self, meta: Any, c: list) -> a.Count:
        return self._count(meta, "times", c)

    def at_least_times(self, meta: Any, c: list) -> a.Count:
        return self._count(meta, "at least", c)

    def at_most_times(self, meta: Any, c: list) -> a.Count:
        return self._count(meta, "at most", c)

    def between_times(self, meta: Any, c: list) -> a.Count:
        return self._count(meta, "between", c)

    # ---- final-answer and other predicates ----------------------------------
    def text_contains(self, meta: Any, c: list) -> a.TextContains:
        return self._node(a.TextContains, meta, text=c[0], ignore_case=bool(c[1]))

    def text_is(self, meta: Any, c: list) -> a.TextIs:
        return self._node(a.TextIs, meta, text=c[0], ignore_case=bool(c[1]))

    def text_empty(self, meta: Any, c: list) -> a.TextEmpty:
        return self._node(a.TextEmpty, meta)

    def text_starts_with(self, meta: Any, c: list) -> a.TextStartsWith:
        return self._node(a.TextStartsWith, meta, text=c[0], ignore_case=bool(c[1]))

    def text_ends_with(self, meta: Any, c: list) -> a.TextEndsWith:
        return self._node(a.TextEndsWith, meta, text=c[0], ignore_case=bool(c[1]))

    def text_matches(self, meta: Any, c: list) -> a.TextMatches:
        return self._node(a.TextMatches, meta, regex=self._regex(c[0]))

    def number_is(self, meta: Any, c: list) -> a.NumberIs:
        return self._node(a.NumberIs, meta, value=c[0], within=c[1])

    def number_compare(self, meta: Any, c: list) -> a.NumberCompare:
        return self._node(a.NumberCompare, meta, op=c[0], value=c[1])

    def number_between(self, meta: Any, c: list) -> a.NumberBetween:
        return self._node(a.NumberBetween, meta, low=c[0], high=c[1])

    def final_json(self, meta: Any, c: list) -> a.FinalJson:
        return self._node(a.FinalJson, meta, pattern=c[0])

    def tokens_at_most(self, meta: Any, c: list) -> a.TokensAtMost:
        return self._node(a.TokensAtMost, meta, limit=c[0])

    def duration_at_most(self, meta: Any, c: list) -> a.DurationAtMost:
        return self._node(a.DurationAtMost, meta, limit=self._duration(c[0]))

    def judge(self, meta: Any, c: list) -> a.Judge:
        return self._node(a.Judge, meta, rubric=c[0], threshold=c[1])

    def custom_predicate(self, meta: Any, c: list) -> a.CustomPredicate:
        entries = tuple(x for x in c[1:] if isinstance(x, a.Entry))
        self._unique_keys(entries)
        return self._node(a.CustomPredicate, meta, name=c[0], args=entries)

    def world_state(self, meta: Any, c: list) -> a.WorldState:
        return self._node(a.WorldState, meta, pattern=c[0])

    def world_predicate(self, meta: Any, c: list) -> a.CustomPredicate:
        """A v1 custom predicate named `world`: `world(...)` still calls it (`world` before `(`)."""
        return self.custom_predicate(meta, ["world", *c])

    # ---- statements -----------------------------------------------------------
    def suite_stmt(self, meta: Any, c: list) -> a.SuiteStmt:
        return self._node(a.SuiteStmt, meta, name=c[0])

    def description_stmt(self, meta: Any, c: list) -> a.DescriptionStmt:
        return self._node(a.DescriptionStmt, meta, text=c[0])

    def use_stmt(self, meta: Any, c: list) -> a.UseStmt:
        return self._node(a.UseStmt, meta, path=self.string_token(c[0]))

    def tags_stmt(self, meta: Any, c: list) -> a.TagsStmt:
        return self._node(a.TagsStmt, meta, tags=tuple(c))

    def repeat_stmt(self, meta: Any, c: list) -> a.RepeatStmt:
        return self._node(a.RepeatStmt, meta, count=c[0])

    def pass_rate_stmt(self, meta: Any, c: list) -> a.PassRateStmt:
        return self._node(a.PassRateStmt, meta, rate=c[0])

    def timeout_stmt(self, meta: Any, c: list) -> a.TimeoutStmt:
        return self._node(a.TimeoutStmt, meta, duration=self._duration(c[0]))

    def system_stmt(self, meta: Any, c: list) -> a.SystemStmt:
        return self._node(a.SystemStmt, meta, text=c[0])

    def mode_stmt(self, meta: Any, c: list) -> a.ModeStmt:
        return self._node(a.ModeStmt, meta, mode=str(c[0]))

    def max_turns_stmt(self, meta: Any, c: list) -> a.MaxTurnsStmt:
        return self._node(a.MaxTurnsStmt, meta, count=c[0])

    def skip_stmt(self, meta: Any, c: list) -> a.SkipStmt:
        return self._node(a.SkipStmt, meta, reason=c[0])

    def xfail_stmt(self, meta: Any, c: list) -> a.XfailStmt:
        return self._node(a.XfailStmt, meta, reason=c[0])

    def case_stmt(self, meta: Any, c: list) -> a.CaseStmt:
        return self._node(a.CaseStmt, meta, name=c[0])

    def prompt_stmt(self, meta: Any, c: list) -> a.PromptStmt:
        return self._node(a.PromptStmt, meta, text=c[0])

    def setup_stmt(self, meta: Any, c: list) -> a.SetupStmt:
        return self._node(a.SetupStmt, meta, value=self.token_value(c[0]))

    def expect_stmt(self, meta: Any, c: list) -> a.ExpectStmt:
        return self._node(a.ExpectStmt, meta, expectation=c[0])

    def examples_stmt(self, meta: Any, c: list) -> a.ExamplesStmt:
        source = self.string_token(c[0]) if c[0] is not None else None
        return self._node(a.ExamplesStmt, meta, source=source, rows=())

    def table_row(self, meta: Any, c: list) -> a.TableRow:
        return self._node(a.TableRow, meta, cells=tuple(self.token_value(x) for x in c))

    def tool_stmt(self, meta: Any, c: list) -> a.ToolStmt:
        return self._node(a.ToolStmt, meta, name=c[0], description=c[1])

    def param_stmt(self, meta: Any, c: list) -> a.ParamStmt:
        name, optional, type_, description = c
        return self._node(a.ParamStmt, meta, name=name, optional=optional is not None,
                          type=type_, description=description)

    def simple_type(self, meta: Any, c: list) -> a.SimpleType:
        return self._node(a.SimpleType, meta, name=str(c[0]))

    def array_type(self, meta: Any, c: list) -> a.ArrayType:
        return self._node(a.ArrayType, meta, of=c[0])

    def one_of_type(self, meta: Any, c: list) -> a.OneOfType:
        return self._node(a.OneOfType, meta, values=tuple(x for x in c if x is not None))

    def when_stmt(self, meta: Any, c: list) -> a.WhenStmt:
        return self._node(a.WhenStmt, meta, args=c[0], action=c[1], text=c[2], then=_steps(c[1], c[3:]))

    def otherwise_stmt(self, meta: Any, c: list) -> a.OtherwiseStmt:
        return self._node(a.OtherwiseStmt, meta, action=c[0], text=c[1], then=_steps(c[0], c[2:]))

    # ---- v2: conversations, tool answers, worlds ------------------------------
    def answer_step(self, meta: Any, c: list) -> a.AnswerStep:
        """A step whose verb is left out gets None here; `_steps` fills in the one before it."""
        return self._node(a.AnswerStep, meta, action=c[0], text=c[1])

    def user_stmt(self, meta: Any, c: list) -> a.UserStmt:
        return self._node(a.UserStmt, meta, text=c[0])

    def simulated_user_stmt(self, meta: Any, c: list) -> a.SimulatedUserStmt:
        return self._node(a.SimulatedUserStmt, meta, text=c[0])

    def user_turns_stmt(self, meta: Any, c: list) -> a.UserTurnsStmt:
        return self._node(a.UserTurnsStmt, meta, count=c[0])

    def world_stmt(self, meta: Any, c: list) -> a.WorldStmt:
        return self._node(a.WorldStmt, meta, path=self.string_token(c[0]))

    def given_stmt(self, meta: Any, c: list) -> a.GivenStmt:
        return self._node(a.GivenStmt, meta, tool=c[0], args=c[1], action=c[2], text=c[3],
                          then=_steps(c[2], c[4:]))


def _steps(first: str, steps: list) -> tuple[a.AnswerStep, ...]:
    """The later steps of a sequence, each step without a verb given the verb of the step before."""
    out = []
    action = first
    for step in steps:
        if step.action is None:
            step = a.replaced(step, action=action)
        action = step.action
        out.append(step)
    return tuple(out)
