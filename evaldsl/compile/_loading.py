"""Loading suites from disk: a file, a folder, a list of files (`load`, `compile_files`, `compile_file`),
through the suite cache when one is given (`cache_options` is what its key holds besides the files)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..syntax import _ast as a
from ..syntax._diagnostics import EvlError, error
from ._compiler import compile_suite
from ._described import describe
from ._model import CompiledSuite
from ._reading import read_source


def load(
    path: str | Path, *, predicates: Mapping[str, Any] | None = None, root: str | Path | None = None
) -> list[CompiledSuite]:
    """Compile a .evl file, or every `*.evl` in a directory (sorted by name).

    ``root``: refuse `use` and `examples from` paths outside this folder (E230).

    Raises:
        EvlError: naming each malformed file with every problem in it.
    """
    where = Path(path)
    if where.is_dir():
        files = sorted(p for p in where.glob("*.evl") if p.is_file())
    elif where.is_file():
        files = [where]
    else:
        raise EvlError([error("E002", f"no such file or directory: {where}", a.Span(file=str(where)))])
    return compile_files(files, predicates=predicates, root=root)


def compile_files(
    files: Iterable[str | Path], *, predicates: Mapping[str, Any] | None = None, root: str | Path | None = None,
    cache: Any = None,
) -> list[CompiledSuite]:
    """Compile every file, in order; one `EvlError` with every file's problems when any has an error.
    ``cache``: a `SuiteCache` to reuse what an earlier compile of an unchanged file produced."""
    suites, diagnostics, sources = [], [], {}
    for file in files:
        try:
            suites.append(compile_file(file, predicates=predicates, root=root, cache=cache))
        except EvlError as exc:
            diagnostics.extend(exc.diagnostics)
            sources.update(exc.sources)
    if any(d.severity == "error" for d in diagnostics):
        raise EvlError(diagnostics, sources)
    return suites


def compile_file(
    path: str | Path, *, predicates: Mapping[str, Any] | None = None, root: str | Path | None = None,
    cache: Any = None,
) -> CompiledSuite:
    """Read and compile one .evl file (unreadable or non-UTF-8 input is an EvlError); ``root`` as in `load`,
    ``cache`` as in `compile_files`."""
    text = read_source(path)
    if cache is None:
        return compile_suite(text, str(path), predicates=predicates, root=root)

    def build() -> CompiledSuite:
        suite = compile_suite(text, str(path), predicates=predicates, root=root)
        describe(suite)  # the fingerprint's lines, made before the entry is written: stored with it
        return suite

    return cache.compiled(str(path), text, cache_options("run", predicates, root), build)


def cache_options(kind: str, predicates: Mapping[str, Any] | None, root: str | Path | None) -> tuple:
    """What a compile depends on besides its files, for the suite cache's key: the kind of compile,
    the custom predicates' names (unknown names are errors only when they are given) and the root."""
    names = None if predicates is None else tuple(sorted(predicates))
    return kind, names, None if root is None else str(Path(root).resolve())
