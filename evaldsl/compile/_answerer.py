"""`ToolAnswerer`: one run's answers to tool calls, the same for every way an agent calls a tool.

The model loop (`models._loop`), the case context's ``call`` / ``acall``
(`run._context`) and the agents' tool server all ask one answerer, built
per run, so they answer identically (DESIGN.md, "worlds"). For a call of
tool T with arguments A it answers, in this order (docs/language.md 8, 13, 14):

1. an undeclared T gets an error answer naming the declared tools;
2. A is decoded (JSON text) and checked: against T's params for a declared
   tool, by the method's pydantic model for a world's tool; arguments that
   do not pass get the error answer a real tool would give;
3. the case's `given` lines for T, in order: the first whose pattern
   matches answers;
4. T's own `when` lines, in order, then its `otherwise`;
5. for a world's tool, the run's world instance's method (awaited when
   async; an exception is an error answer);
6. else an error answer saying no line answers these arguments.

A line with an answer sequence (`returns "a" then "b"`) answers the n-th
call it answers in this run with its n-th step, and every later call with
its last: the counts live in the answerer, so each run (each repeat)
starts again at the first step. The counts are kept under a lock: a sync
agent may call tools from several threads.
"""

from __future__ import annotations

import difflib
import inspect
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._model import AnswerRule, CompiledTool, ToolAnswer
from ._tools import first_rule, no_answer

if TYPE_CHECKING:
    from ._model import CompiledCase
    from ._world import WorldClass, WorldMethod


class ToolAnswerer:
    """Answers one run's tool calls (see the module docstring).

    Args:
        tools: the tools offered (declared, imported, and a world's).
        given: the case's `given` lines, in order.
        world: the suite's world class, when it has one.
        instance: this run's world instance (None: a world tool's call gets an error answer).
    """

    def __init__(self, tools: Sequence[CompiledTool], given: Sequence[AnswerRule] = (),
                 world: WorldClass | None = None, instance: Any = None) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.given = tuple(given)
        self.world = world
        self.instance = instance
        self._counts: dict[int, int] = {}
        self._lock = threading.Lock()

    @classmethod
    def for_case(cls, case: CompiledCase, instance: Any = None) -> ToolAnswerer:
        """The answerer of one run of ``case``; ``instance``: that run's world instance."""
        return cls(case.tools, case.given, case.world, instance)

    def answer(self, name: str, args: Any) -> ToolAnswer:
        """The answer to one call (an async world method is run to its end on a loop of its own:
        from code on an event loop, use `aanswer`)."""
        plan = self._plan(name, args)
        if isinstance(plan, ToolAnswer):
            return plan
        from ._world import _run_coroutine

        return self._called(name, plan, _run_coroutine)  # type: ignore[return-value]

    async def aanswer(self, name: str, args: Any) -> ToolAnswer:
        """`answer`, awaiting an async world method (a sync one is called in place)."""
        plan = self._plan(name, args)
        if isinstance(plan, ToolAnswer):
            return plan
        called = self._called(name, plan, None)
        if isinstance(called, ToolAnswer):
            return called
        from ._world import error_answer
        from ._world_tools import result_answer

        try:
            result = await called
        except Exception as exc:
            return error_answer(name, exc)
        return result_answer(name, result)

    def _called(self, name: str, plan: tuple[WorldMethod, dict[str, Any]], settle: Any) -> Any:
        """The world method called: its answer; or, when it is async and there is no ``settle`` (a way to
        run a coroutine to its end), the awaitable it returned."""
        from ._world import error_answer
        from ._world_tools import bound, result_answer

        method, values = plan
        try:
            result = bound(method, self.instance, values)
            if inspect.isawaitable(result):
                if settle is None:
                    return result
                result = settle(result)
        except Exception as exc:
            return error_answer(name, exc)
        return result_answer(name, result)

    def _plan(self, name: str, args: Any) -> ToolAnswer | tuple[WorldMethod, dict[str, Any]]:
        """A canned answer, or the world method to call with its validated values."""
        tool = self.tools.get(name)
        if tool is None:
            return ToolAnswer(False, undeclared(name, list(self.tools)))
        checked = tool.prepare(args) if tool.prepare is not None else args
        if isinstance(checked, ToolAnswer):
            return checked
        rule = None
        if self.given:
            mine = [line for line in self.given if line.tool == name]
            rule = first_rule(name, mine, checked) if mine else None
        if rule is None and tool.rules:
            rule = first_rule(name, tool.rules, checked)
        if rule is not None:
            return self._next(rule)
        if tool.method is not None:
            if self.instance is None or self.world is None:
                return ToolAnswer(False, f"Error: {name}: this run has no world instance to answer it")
            return self.world.methods[tool.method], checked
        return no_answer(name, checked)

    def _next(self, rule: AnswerRule) -> ToolAnswer:
        if len(rule.steps) == 1:
            return rule.steps[0]
        key = id(rule)
        with self._lock:
            n = self._counts.get(key, 0)
            self._counts[key] = n + 1
        return rule.step(n)


def undeclared(name: str, declared: Sequence[str]) -> str:
    """The error answer's text for a call of a tool that is not declared."""
    if not declared:
        return f"Error: no tool named `{name}`: the suite declares no tools"
    close = difflib.get_close_matches(name, declared, n=1)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    return f"Error: no tool named `{name}`{hint}; declared tools: {', '.join(declared)}"
