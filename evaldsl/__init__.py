"""evaldsl: pytest, but for LLM agents.

Write `.evl` case files, compile them into checks, run them against your
agent. This module only re-exports the public API.
"""

from ._api import compile, format, load, parse
from .artifacts import RunArtifacts, ToolCall
from .compile._model import (
    CaseSettings,
    CompiledCase,
    CompiledExpectation,
    CompiledSuite,
    CompiledTool,
    EvalContext,
    Outcome,
    ToolAnswer,
)
from .syntax._ast import Span, Suite
from .syntax._diagnostics import Diagnostic, EvlError

__version__ = "0.1.0"

__all__ = [
    "CaseSettings",
    "CompiledCase",
    "CompiledExpectation",
    "CompiledSuite",
    "CompiledTool",
    "Diagnostic",
    "EvalContext",
    "EvlError",
    "Outcome",
    "RunArtifacts",
    "Span",
    "Suite",
    "ToolAnswer",
    "ToolCall",
    "__version__",
    "compile",
    "format",
    "load",
    "parse",
]
