"""The compiled suite: what `compile()` returns and the runner executes (this module gathers it).

A compiled expectation is a plain callable over an `EvalContext`; it was
built once by the compiler and a run only calls it. Nothing here knows how
an agent is run or how results are reported. The types live in three
modules by meaning, all importable from here: `_model_check` (what an
expectation is, sees and gives), `_model_suite` (the suite, its cases and
tools), `_model_lazy` (cases made when they are read).
"""

from __future__ import annotations

from ._model_check import (
    NO_STATE,
    Check,
    CompiledExpectation,
    EvalContext,
    JudgeFn,
    JudgeVerdict,
    Outcome,
    PredicateFn,
)
from ._model_lazy import LazyCases, SuiteCases, case_keys, outlined
from ._model_suite import (
    AnswerRule,
    CaseSettings,
    CompiledCase,
    CompiledSuite,
    CompiledTool,
    CompiledTurn,
    ToolAnswer,
)

__all__ = [
    "NO_STATE",
    "AnswerRule",
    "CaseSettings",
    "Check",
    "CompiledCase",
    "CompiledExpectation",
    "CompiledSuite",
    "CompiledTool",
    "CompiledTurn",
    "EvalContext",
    "JudgeFn",
    "JudgeVerdict",
    "LazyCases",
    "Outcome",
    "PredicateFn",
    "SuiteCases",
    "ToolAnswer",
    "case_keys",
    "outlined",
]
