"""The typed front door: parse, compile, format, load.

Thin wrappers over the stages, so that `evaldsl.parse` / `evaldsl.compile`
keep one stable signature while the stages evolve behind them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .compile._compiler import Sources, compile_suite
from .compile._loading import load as _load
from .compile._model import CompiledSuite
from .syntax._ast import Suite


def parse(text: str, filename: str = "<string>") -> Suite:
    """Parse .evl text into its AST (a frozen `Suite`).

    Args:
        text: the source.
        filename: used in diagnostics and spans.

    Raises:
        EvlError: listing every syntax error, positioned.
    """
    from .syntax._parser import parse as _parse  # here: a run whose suites come from the cache imports no lark

    return _parse(text, filename)


def compile(
    source: str | Suite,
    filename: str = "<string>",
    *,
    predicates: Mapping[str, Any] | None = None,
    base_dir: str | Path | None = None,
    sources: Sources | None = None,
    root: str | Path | None = None,
    import_worlds: bool = True,
) -> CompiledSuite:
    """Compile .evl text or a parsed `Suite` into a `CompiledSuite` of runnable cases.

    Args:
        source: .evl text, or the result of `parse`.
        filename: used in diagnostics; relative `use` and `examples from` paths resolve
            from its folder unless `base_dir` is given.
        predicates: a harness's custom predicates by name; when given, unknown names are errors.
        base_dir: folder for relative paths.
        sources: the texts of files that `use` lines reach, by path, read in place of the
            files on disk (a language server passes an editor's unsaved buffers).
        root: when given, a `use` or `examples from` path outside this folder is an error
            (E230), as `evaldsl check --root` and `load(path, root=...)`.
        import_worlds: import the suite's `world` file to know its tools (the default). False
            (a language server, `evaldsl check` without --import-worlds): no Python is run, the
            world's tool names are unknown and not checked, and the cases cannot run.

    Raises:
        EvlError: listing every error found.
    """
    return compile_suite(source, filename, predicates=predicates, base_dir=base_dir, sources=sources, root=root,
                         import_worlds=import_worlds)


def format(text: str, filename: str = "<string>", *, line_width: int = 100) -> str:
    """Return .evl text in canonical layout, every comment kept.

    Args:
        text: .evl source.
        filename: used in diagnostics.
        line_width: columns a line may take before it is broken, where breaking helps.

    Raises:
        EvlError: when the text does not parse.
    """
    from .syntax._format import format_text

    return format_text(text, filename, line_width=line_width)


def load(
    path: str | Path, *, predicates: Mapping[str, Any] | None = None, root: str | Path | None = None
) -> list[CompiledSuite]:
    """Compile a .evl file, or every `*.evl` file of a directory, sorted by name.

    ``root``: when given, a `use` or `examples from` path outside that folder is an error (E230).

    Raises:
        EvlError: naming every malformed file with all its problems; nothing is skipped silently.
    """
    return _load(path, predicates=predicates, root=root)
