"""evaldsl: pytest, but for LLM agents.

Write `.evl` case files, compile them into checks, run them against your
agent. This module only re-exports the public API; the runner's part is
imported on first use, so `evaldsl check` stays quick.
"""

from typing import TYPE_CHECKING, Any

from ._api import compile, format, load, parse
from .artifacts import RunArtifacts, ToolCall
from .compile._model import (
    CaseSettings,
    CompiledCase,
    CompiledExpectation,
    CompiledSuite,
    CompiledTool,
    EvalContext,
    JudgeVerdict,
    Outcome,
    ToolAnswer,
)
from .syntax._ast import Span, Suite
from .syntax._diagnostics import Diagnostic, EvlError

if TYPE_CHECKING:
    from ._baseline import baseline, baseline_files, dump_baseline
    from .models._judge import LLMJudge
    from .models._loop import ModelAgent
    from .models._user import SimulatedUser
    from .report._compare import Comparison, compare_records
    from .report._json import read_record
    from .report._merge import MergeError, merge_records
    from .run._api import arun_case, arun_eval, arun_suite, run_case, run_eval, run_suite
    from .run._context import CaseContext
    from .run._conversation import ConversationUsage
    from .run._protocols import Agent, Harness, Predicates
    from .run._ray import RayExecutor
    from .run._record import (
        CaseResult,
        ConversationResult,
        EvalReport,
        ExpectationResult,
        RunMeta,
        RunResult,
        Summary,
        TurnResult,
    )
    from .run._rescore import Rescored, rescore
    from .run._scripted import ScriptedAgent
    from .run._shard import Shard

__version__ = "0.1.0"

_LAZY = {
    "baseline": "._baseline", "baseline_files": "._baseline", "dump_baseline": "._baseline",
    "read_record": ".report._json",
    "Comparison": ".report._compare", "compare_records": ".report._compare",
    "Rescored": ".run._rescore", "rescore": ".run._rescore",
    "MergeError": ".report._merge", "merge_records": ".report._merge",
    "RayExecutor": ".run._ray", "Shard": ".run._shard",
    "arun_case": ".run._api", "arun_eval": ".run._api", "arun_suite": ".run._api",
    "run_case": ".run._api", "run_eval": ".run._api", "run_suite": ".run._api",
    "Agent": ".run._protocols", "Harness": ".run._protocols", "Predicates": ".run._protocols",
    "CaseResult": ".run._record", "EvalReport": ".run._record", "ExpectationResult": ".run._record",
    "RunMeta": ".run._record", "RunResult": ".run._record", "Summary": ".run._record",
    "ConversationResult": ".run._record", "TurnResult": ".run._record",
    "ConversationUsage": ".run._conversation", "SimulatedUser": ".models._user",
    "ScriptedAgent": ".run._scripted",
    "CaseContext": ".run._context", "LLMJudge": ".models._judge", "ModelAgent": ".models._loop",
}


if not TYPE_CHECKING:  # hidden from type checkers, which would take any name as Any: a typo must be an error

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'evaldsl' has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value
        return value


__all__ = [
    "Agent",
    "CaseContext",
    "CaseResult",
    "CaseSettings",
    "Comparison",
    "CompiledCase",
    "CompiledExpectation",
    "CompiledSuite",
    "CompiledTool",
    "ConversationResult",
    "ConversationUsage",
    "Diagnostic",
    "EvalContext",
    "EvalReport",
    "EvlError",
    "ExpectationResult",
    "Harness",
    "JudgeVerdict",
    "LLMJudge",
    "MergeError",
    "ModelAgent",
    "Outcome",
    "Predicates",
    "RayExecutor",
    "Rescored",
    "RunArtifacts",
    "RunMeta",
    "RunResult",
    "ScriptedAgent",
    "Shard",
    "SimulatedUser",
    "Span",
    "Suite",
    "Summary",
    "ToolAnswer",
    "ToolCall",
    "TurnResult",
    "__version__",
    "arun_case",
    "arun_eval",
    "arun_suite",
    "baseline",
    "baseline_files",
    "compare_records",
    "compile",
    "dump_baseline",
    "format",
    "load",
    "merge_records",
    "parse",
    "read_record",
    "rescore",
    "run_case",
    "run_eval",
    "run_suite",
]
