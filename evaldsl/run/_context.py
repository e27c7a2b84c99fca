"""The case context: what a case tells the agent beyond its prompt.

A model run (`models._loop`) needs the case's system prompt, mode, turn bound
and declared tools, and answers tool calls from the tools' canned answers.
A user's own agent deserves the same, or a suite's `system` line and mock
tools are silently ignored when it runs. So both get one `CaseContext`: the
built-in model loop and any agent or harness whose ``run`` takes a second
(for a harness, third) parameter.

Calls made through `CaseContext.call` / `acall` are answered exactly as the
model loop answers them (one `ToolAnswerer` per run: param checks, the
case's `given` lines, `when` / `otherwise` / `fails` with their sequences,
a world's methods) and recorded. The runner makes the recorded
calls the run's ``tool_calls`` when the agent's returned artifacts list none
of their own; an agent that reports its own calls is trusted with them
(``record=False`` keeps a call out of the record altogether).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..artifacts import ToolCall
from ..compile._answerer import ToolAnswerer, undeclared
from ..compile._model import CompiledTool, ToolAnswer

if TYPE_CHECKING:
    from ..compile._model import CompiledCase


@dataclass
class CaseContext:
    """One run of one case, as an agent sees it.

    Handed to ``run(prompt, ctx)`` (a harness: ``run(prompt, world, ctx)``)
    when ``run`` takes that parameter. Build one for your own tests with
    `CaseContext.for_case`.
    """

    name: str
    """The case's name (one row of an examples table is one case)."""
    suite: str = ""
    """The suite's display name."""
    tags: tuple[str, ...] = ()
    """The case's tags, the suite's included."""
    system: str | None = None
    """The ``system`` prompt; None when the suite and case set none."""
    mode: str = "agent"
    """``agent`` (the full tool loop) or ``single-turn`` (stop after the first reply)."""
    max_turns: int = 10
    """The bound on model calls in one run (``max turns``)."""
    repeat_index: int = 0
    """Which repeat of the case this run is, from 0."""
    timeout_s: float = 60.0
    """The case's ``timeout``: the runner stops the run after this long."""
    tools: tuple[CompiledTool, ...] = ()
    """The declared tools (own and imported by ``use``), in declaration order."""
    calls: list[ToolCall] = field(default_factory=list)
    """The calls made through `call` / `acall` with ``record=True``, each with its result."""
    answerer: ToolAnswerer | None = field(default=None, repr=False, compare=False)
    """This run's tool answers (`given` lines, sequences, world methods); None: made from `tools`
    when first asked, as a case without `given` lines or world would have it."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The conversation so far as chat messages, ending with this turn's user message (v2): each earlier
    user message (``{"role": "user", "content": ...}``), the agent's tool calls (an ``assistant`` message with
    ``tool_calls``) and their results (``tool`` messages), and its replies (``assistant``). For a
    single-prompt case, the one user message."""
    turn: int = 1
    """This user message's number in the conversation, from 1 (v2)."""
    conversation_id: str | None = None
    """The same for every turn of one run, and different for every run (v2): key an agent's own session
    on it. None outside a run (a context you built yourself)."""
    last_turn: bool = True
    """Whether this is the conversation's last message, when that is known (a scripted conversation);
    False while a simulated user may still write. The runner also calls an agent's
    ``close_conversation(conversation_id)``, when it has one, once the run ends."""

    @classmethod
    def for_case(cls, case: CompiledCase, repeat_index: int = 0, *, world: Any = None,
                 answerer: ToolAnswerer | None = None, messages: list[dict[str, Any]] | None = None) -> CaseContext:
        """The context of one run of a compiled case; ``world``: that run's world instance, if any;
        ``answerer`` and ``messages``: a conversation's, shared by its turns (default: this run's own, and
        the case's prompt as the one user message)."""
        s = case.settings
        return cls(
            name=case.name, suite=case.suite, tags=s.tags, system=s.system, mode=s.mode,
            max_turns=s.max_turns, repeat_index=repeat_index, timeout_s=s.timeout_s, tools=case.tools,
            answerer=answerer if answerer is not None else ToolAnswerer.for_case(case, world),
            messages=messages if messages is not None else [{"role": "user", "content": case.prompt}],
        )

    def tools_openai(self) -> list[dict[str, Any]]:
        """The declared tools in the OpenAI chat-completions ``tools`` shape."""
        return [tool.schema() for tool in self.tools]

    def tools_anthropic(self) -> list[dict[str, Any]]:
        """The declared tools in the Anthropic Messages ``tools`` shape."""
        return [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in self.tools
        ]

    def answer(self, name: str, args: Any) -> ToolAnswer:
        """What the mock tool ``name`` answers to ``args``, without recording the call.

        ``args`` is the arguments object, or the JSON text of one (as models
        send it); text that is not JSON gets an error result, as does a tool
        that is not declared (naming the declared ones). A sequence's step is
        used up by asking, recorded or not.
        """
        return self._answerer().answer(name, args)

    async def aanswer(self, name: str, args: Any) -> ToolAnswer:
        """`answer`, for code on the event loop (a world's async method is awaited)."""
        return await self._answerer().aanswer(name, args)

    def _answerer(self) -> ToolAnswerer:
        if self.answerer is None:  # made on first use: most runs never call a tool through the context
            self.answerer = ToolAnswerer(self.tools)
        return self.answerer

    def call(self, name: str, args: Any = None, *, record: bool = True) -> ToolAnswer:
        """Call a declared tool: its canned answer (``ok`` and ``text``), recorded in `calls`.

        Args:
            name: the tool's name.
            args: the arguments object (or its JSON text); None means ``{}``.
            record: False keeps the call out of the run's artifacts.
        """
        args = {} if args is None else args
        result = self.answer(name, args)
        if record:  # list.append is atomic: a sync agent may call from several threads
            self.calls.append(ToolCall(name=name, args=args, result=result.text))
        return result

    async def acall(self, name: str, args: Any = None, *, record: bool = True) -> ToolAnswer:
        """`call`, for ``async def`` agents (a canned answer is computed at once; a world's async
        method is awaited)."""
        args = {} if args is None else args
        result = await self.aanswer(name, args)
        if record:
            self.calls.append(ToolCall(name=name, args=args, result=result.text))
        return result


_undeclared = undeclared  # the name this module's callers knew


def with_recorded_calls(raw: Any, ctx: CaseContext) -> Any:
    """The agent's result with the context's recorded calls as its ``tool_calls``,
    unless it already lists tool calls of its own (or is not artifacts at all)."""
    if not ctx.calls:
        return raw
    from ..artifacts import RunArtifacts

    if isinstance(raw, RunArtifacts):
        return raw if raw.tool_calls else raw.model_copy(update={"tool_calls": list(ctx.calls)})
    if isinstance(raw, dict) and not raw.get("tool_calls"):
        return {**raw, "tool_calls": list(ctx.calls)}
    return raw


def unseen_settings(suites: Sequence[Any], who: str) -> list[str]:
    """One warning per suite whose `system` or mock tool answers an agent that
    takes no `CaseContext` would never see.

    Args:
        suites: `CompiledSuite` objects.
        who: the agent as the warning names it, e.g. ``agent 'my_agent'``.
    """
    out = []
    for suite in suites:
        systems: list[str] = []
        canned_set: set[str] = set()
        for c in suite.cases:  # one pass: a suite's cases may be made as they are read (LazyCases)
            if c.settings.system:
                systems.append(c.name)
            canned_set.update(t.name for t in c.tools if t.answers)
        canned = sorted(canned_set)
        unseen = []
        if systems:
            shown = ", ".join(repr(n) for n in systems[:3]) + (", ..." if len(systems) > 3 else "")
            unseen.append(f"`system` (case {shown})")
        if canned:
            unseen.append(f"mock tool answers ({', '.join(canned)})")
        if unseen:
            out.append(
                f"warning: {suite.file}: suite {suite.name!r} sets {' and '.join(unseen)}, but {who} "
                "takes no case context and never sees them; give its run one more parameter, ctx, "
                "to receive them (ctx.system, ctx.call(name, args): see docs/models.md)"
            )
    return out
