"""The exception compile-time helpers raise; the compiler turns it into a Diagnostic.

Inner code knows the offending AST node but not the source text (DESIGN
rule 6): it raises `CompileProblem(message, node)`, and the compiler, which
knows the file, attaches the node's span and collects every problem.
"""

from __future__ import annotations

from typing import Any


class CompileProblem(Exception):
    """A problem found while compiling one node.

    Args:
        message: what is wrong, in words.
        node: the AST node it is about (its span positions the error).
        code: the diagnostic code (E2xx).
        help: an optional hint.
        suggestion: an optional did-you-mean.
    """

    def __init__(
        self,
        message: str,
        node: Any = None,
        *,
        code: str = "E200",
        help: str | None = None,
        suggestion: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.node = node
        self.code = code
        self.help = help
        self.suggestion = suggestion
