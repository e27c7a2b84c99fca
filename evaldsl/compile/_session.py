"""What a file's cases are compiled in: the compile's `Session` and the file's `Prelude`.

A `Session` is the state of one compile: the diagnostics gathered so far
(`compile_suite` fails once, with all of them), the texts they point into,
the `use` files already read, and the cache of compiled checks that cases
with the same expectation text share. A `Prelude` is what the head of a file
(above its first case) gives every case: settings, tools, suite-wide
expectations and the world.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from ..syntax import _ast as a
from ..syntax._diagnostics import Diagnostic, EvlError, error
from ._errors import CompileProblem
from ._model import CaseSettings, CompiledExpectation, CompiledTool
from ._offered import Offered
from ._reading import read_source
from ._reads import note_read

Sources = Union[Mapping[str, str], Mapping[Path, str], Mapping[Union[str, Path], str]]
"""Texts standing in for `use` files on disk, by path (`compile(sources=...)`)."""

CHECK_CACHE = 512
"""How many compiled checks `check` keeps for reuse by expectations of the same text."""
SHARED_CHECKS = 8192
"""How many a compile keeps for that reuse: past it the cache starts again (cases already
compiled keep theirs), so a suite of 100,000 distinct expectations does not also hold an
index of them all."""


class Session:
    """State of one compile: diagnostics, sources and the imported-file cache."""

    def __init__(self, predicates: Mapping[str, Any] | None, root: str | Path | None = None,
                 sources: Sources | None = None, import_worlds: bool = True) -> None:
        self.predicates = predicates
        self.import_worlds = import_worlds
        """Whether a `world` file is imported (to know its tools); `check` only when asked."""
        self.has_world = False  # the file being compiled has a `world` line
        self.root = Path(root).resolve() if root is not None else None
        self.overlay = {Path(p).resolve(): text for p, text in (sources or {}).items()}
        """Texts standing in for files on disk (an editor's unsaved buffers), by resolved path."""
        self.diagnostics: list[Diagnostic] = []
        self.sources: dict[str, str] = {}
        self.libraries: dict[Path, list[CompiledTool]] = {}
        self.may_have_templates = True
        self.warned: set[Diagnostic] = set()
        self.checks: dict[str, Any] = {}  # (label, compiled check) by their expectation's text, shared
        self.checks_limit = SHARED_CHECKS
        self.linted: dict[str, bool] = {}  # expectation text -> needs a judge, for texts that linted clean
        self.holes: set[int] | None = None  # see `_examples.holes`: set while a file's rows are compiled
        self.needs_judge: dict[int, bool] = {}  # by `expect` statement, once linted (only in `_Rebuild`)

    def problem(self, exc: CompileProblem, fallback: Any = None) -> None:
        shown_text = getattr(exc, "source_text", None)  # a problem inside an examples file
        if shown_text is not None:
            self.sources.setdefault(*shown_text)
        span = getattr(exc.node, "span", None) or getattr(fallback, "span", None)
        self.diagnostics.append(error(exc.code, exc.message, span, help=exc.help, suggestion=exc.suggestion))

    def warn(self, warnings: list[Diagnostic]) -> None:
        """Add warnings, each once: every row of a table lints the same `expect` line again."""
        for diag in warnings:
            if diag not in self.warned:
                self.warned.add(diag)
                self.diagnostics.append(diag)

    def outside_root(self, path: Path, node: a.Node, what: str) -> CompileProblem | None:
        """A positioned error when ``path`` (resolved: symlinks followed) is outside ``--root``."""
        if self.root is None:
            return None
        resolved = path.resolve()
        if inside_root(resolved, self.root):
            return None
        return CompileProblem(f"{what} {resolved} is outside the root {self.root}", node, code="E230",
                              help="--root (root= in the API) confines `use`, `examples from` and `world` files "
                                   "to one folder")

    def parse_file(self, path: Path, shown: str) -> a.Suite | None:
        try:
            if path not in self.overlay:
                note_read(path)
            text = self.overlay[path] if path in self.overlay else read_source(path, shown)
        except EvlError as exc:
            self.diagnostics.extend(exc.diagnostics)
            self.sources.update(exc.sources)
            return None
        self.sources[shown] = text
        from ..syntax._parser import parse_with_diagnostics

        suite, diags = parse_with_diagnostics(text, shown)
        self.diagnostics.extend(diags)
        return None if any(d.severity == "error" for d in diags) else suite


def inside_root(resolved: Path, root: Path | None) -> bool:
    """True when ``resolved`` (a resolved path) may be read under ``--root``: no root, or inside it."""
    return root is None or resolved == root or root in resolved.parents


@dataclass
class Prelude:
    """What every case of a file is compiled with: the head's settings, tools and suite-wide expectations."""

    tools: dict[str, CompiledTool]
    defaults: CaseSettings
    name: str
    description: str | None
    expects: list[CompiledExpectation]
    world: Any = None
    """The suite's `WorldClass` (v2), loaded or (check without --import-worlds) known by name only."""

    @property
    def names_known(self) -> bool:
        """Whether every tool name is known: not when a world's file was not imported."""
        return self.world is None or self.world.loaded

    @property
    def lint_tools(self) -> dict[str, CompiledTool]:
        """The tools calls are checked against: none (no check) when not every name is known."""
        return self.tools if self.names_known else {}

    @property
    def tool_tuple(self) -> tuple[CompiledTool, ...]:
        """The tools, one tuple that every case of the file shares."""
        if self._tool_tuple is None:
            self._tool_tuple = tuple(self.tools.values())
        return self._tool_tuple

    _tool_tuple: tuple[CompiledTool, ...] | None = None

    def offered(self, settings: CaseSettings) -> tuple[CompiledTool, ...]:
        """The tools a case with ``settings`` offers (v2, `tools T1, T2`): a tuple shared by its like."""
        if self._offered is None:
            self._offered = Offered(self.tools, self.tool_tuple)
        return self._offered(settings)

    _offered: Offered | None = None
