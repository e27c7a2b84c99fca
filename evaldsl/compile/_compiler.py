"""AST -> `CompiledSuite`: the entry points and the order of the work.

`compile_suite` gathers every problem of a file before it fails once with an
`EvlError` (DESIGN rule 6). `load` compiles a file or every `*.evl` of a
directory, sorted by name; a malformed file fails the load and is named.

Memory does not grow with a file's cases beyond what is kept of them: text
is compiled as it is parsed, a case at a time (`_compile_streaming`), and
an `examples from` file's cases are made from their rows when read
(`FileCases`, `LazyCases`). `check_suite` keeps no compiled case at all.

The rooms of the work: `_session` (a compile's state, a file's `Prelude`),
`_prelude` (the file's head: settings, `use`, tools, world), `_case` (one
case for one row), `_file_cases` (an `examples from` file's cases); here,
each case's examples and the checks across cases (duplicate names).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..syntax import _ast as a
from ..syntax._diagnostics import Diagnostic, EvlError, error, warning
from ._case import one_case
from ._conversation import shape_problems
from ._errors import CompileProblem
from ._example_files import file_rows
from ._examples import cell_text, table_rows, unknown_columns, unused_columns
from ._file_cases import FileCases
from ._model import CompiledCase, CompiledSuite, SuiteCases
from ._prelude import make_prelude
from ._session import CHECK_CACHE, Prelude, Session, Sources


def compile_suite(
    source: str | a.Suite,
    filename: str = "<string>",
    *,
    predicates: Mapping[str, Any] | None = None,
    base_dir: str | Path | None = None,
    root: str | Path | None = None,
    sources: Sources | None = None,
    import_worlds: bool = True,
) -> CompiledSuite:
    """Compile .evl text (or a parsed `Suite`) into runnable cases.

    Args:
        source: the text of a .evl file, or the `Suite` that `parse` returned.
        filename: shown in diagnostics; also the base for `use` and `examples from`.
        predicates: the harness's custom predicates; when given, unknown names are errors.
        base_dir: where relative paths resolve (default: the file's folder).
        root: when given, a `use` or `examples from` path outside this folder is
            an error (E230); by default a suite may read any file.
        sources: texts of `use` files, by path, read in place of the files on disk.
        import_worlds: import a `world` file to know its tools (False: its tools are unknown, and
            calls and `given` lines are not checked against them; the cases cannot run).

    Raises:
        EvlError: with every error found (warnings ride along in `.diagnostics`).
    """
    from ..syntax._parser import gc_paused  # here, as every use of the parser: a cached suite needs no lark

    with gc_paused():
        return _compile_source(source, filename, predicates, base_dir, root, sources, import_worlds=import_worlds)


def check_suite(text: str, filename: str, *, predicates: Mapping[str, Any] | None = None,
                root: str | Path | None = None, keep_cases: bool = False,
                import_worlds: bool = False) -> CompiledSuite:
    """`compile_suite` for `evaldsl check`: every diagnostic, but (unless ``keep_cases``) a suite
    without its cases, which are dropped as soon as each is compiled: memory does not grow with them.
    A `world` file is imported only with ``import_worlds`` (`check --import-worlds`)."""
    from ..syntax._parser import gc_paused

    with gc_paused():
        return _compile_source(text, filename, predicates, None, root, keep_cases=keep_cases,
                               import_worlds=import_worlds)


def _compile_source(source: str | a.Suite, filename: str, predicates: Mapping[str, Any] | None,
                    base_dir: str | Path | None, root: str | Path | None = None,
                    sources: Sources | None = None, keep_cases: bool = True,
                    import_worlds: bool = True) -> CompiledSuite:
    base = Path(base_dir) if base_dir is not None else Path(filename).parent
    top = (base / Path(filename).name).resolve()
    session = Session(predicates, root, sources, import_worlds)
    if isinstance(source, str):
        try:
            return _compile_streaming(session, source, filename, base, (top,), keep_cases)
        except _ToolAfterCase:
            session = Session(predicates, root, sources, import_worlds)  # again, from the whole file's AST
        session.sources[filename] = source
        session.may_have_templates = "{{" in source
        from ..syntax._parser import parse_with_diagnostics

        suite, diags = parse_with_diagnostics(source, filename)
        session.diagnostics.extend(diags)
    else:
        suite = source
    compiled = None
    if not any(d.severity == "error" for d in session.diagnostics):
        compiled = _compile(session, suite, filename, base, chain=(top,))
    if compiled is None or any(d.severity == "error" for d in session.diagnostics):
        raise EvlError(session.diagnostics, session.sources)
    return compiled


class _ToolAfterCase(Exception):
    """A `tool` block below a case: the cases above it were compiled without it; start again."""


def _compile_streaming(session: Session, text: str, filename: str, base: Path, chain: tuple[Path, ...],
                       keep_cases: bool) -> CompiledSuite:
    """Compile each case as soon as the parser has grouped it, and drop its AST.

    The file's head (settings, `use`, tools, suite-wide `expect`) comes before
    its first case, so each case can be compiled as it is read: no AST of the
    whole file is ever held, and with ``keep_cases=False`` (`evaldsl check`)
    no compiled case either. The diagnostics are those of `_compile` over the
    whole AST, in the same order: the parse's first, and the compiler's only
    when the parse found no error (as when the file is compiled after parsing).
    """
    session.sources[filename] = text
    session.may_have_templates = "{{" in text
    stream = _Stream(session, filename, base, chain, keep_cases)
    if not keep_cases:
        session.checks_limit = CHECK_CACHE
    from ..syntax._parser import parse_items

    suite, parse_diags = parse_items(text, filename, emit=stream.add)
    if any(d.severity == "error" for d in parse_diags):
        raise EvlError(parse_diags, {filename: text})
    compiled = stream.finish()
    session.diagnostics[:0] = parse_diags
    if any(d.severity == "error" for d in session.diagnostics):
        raise EvlError(session.diagnostics, session.sources)
    warnings = tuple(d for d in session.diagnostics if d.severity == "warning")
    return replace(compiled, warnings=warnings)


class _Stream:
    """The items of a file as the parser gives them: head first, then each case compiled at once."""

    def __init__(self, session: Session, filename: str, base: Path, chain: tuple[Path, ...], keep: bool) -> None:
        self.session, self.filename, self.base, self.chain = session, filename, base, chain
        self.head: list[Any] = []
        self.tool_blocks: list[a.Tool] = []
        self.prelude: Prelude | None = None
        self.cases = _Cases(keep)

    def add(self, item: Any) -> None:
        if isinstance(item, a.Case):
            if self.prelude is None:
                self.prelude = make_prelude(self.session, self.head, self.tool_blocks, self.filename, self.base,
                                            self.chain)
            self.cases.add(item, _compile_case(self.session, item, self.prelude, self.filename, self.base))
        elif isinstance(item, a.Tool):
            if self.prelude is not None:
                raise _ToolAfterCase
            self.tool_blocks.append(item)
        else:
            self.head.append(item)

    def finish(self) -> CompiledSuite:
        if self.prelude is None:
            self.prelude = make_prelude(self.session, self.head, self.tool_blocks, self.filename, self.base,
                                        self.chain)
        return self.cases.suite(self.session, self.prelude, self.filename)


class _Cases:
    """A file's compiled cases (kept or not) and what the checks across cases need: each name's first line."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.parts: list[Sequence[CompiledCase]] = [[]]
        self.first_line: dict[str, int] = {}
        self.duplicates: list[Diagnostic] = []

    def add(self, case: a.Case, compiled: Iterable[CompiledCase]) -> None:
        span = case.span
        lazy = isinstance(compiled, FileCases)
        kept = self.parts[-1]
        names: list[str] = []
        for one in compiled:
            if lazy:
                names.append(one.name)
            first = self.first_line.get(one.name)
            if first is None:
                self.first_line[one.name] = one.line
            else:
                if first == one.line:
                    hint = "two rows of this case's examples give it this name: put a column in the name"
                else:
                    hint = f"another case of this name is at line {first}"
                shown = span if span is not None and span.line == one.line else None
                self.duplicates.append(error("E205", f"duplicate case name {one.name!r}", shown, help=hint))
            if self.keep and not lazy:
                kept.append(one)  # type: ignore[attr-defined]
        if self.keep and lazy:
            self.parts += [compiled.lazy(names), []]  # type: ignore[attr-defined]

    def suite(self, session: Session, prelude: Prelude, filename: str) -> CompiledSuite:
        session.diagnostics.extend(self.duplicates)
        cases = tuple(self.parts[0]) if len(self.parts) == 1 else SuiteCases(self.parts)
        return CompiledSuite(name=prelude.name, file=filename, cases=cases,
                             description=prelude.description, tools=prelude.tool_tuple, world=prelude.world)


def _compile(session: Session, suite: a.Suite, filename: str, base: Path, chain: tuple[Path, ...]) -> CompiledSuite:
    prelude = make_prelude(session, suite.head, suite.tools, filename, base, chain)
    cases = _Cases(keep=True)
    for case in suite.cases:
        cases.add(case, _compile_case(session, case, prelude, filename, base))
    compiled = cases.suite(session, prelude, filename)
    warnings = tuple(d for d in session.diagnostics if d.severity == "warning")
    return replace(compiled, warnings=warnings)


def _compile_case(session: Session, case: a.Case, prelude: Prelude, filename: str, base: Path
                  ) -> Iterable[CompiledCase]:
    examples = [s for s in case.body if isinstance(s, a.ExamplesStmt)]
    # A case's own shape problems are reported, and the case is compiled on: what else
    # is wrong with it (its placeholders, its name given twice) shows in the same check.
    if len(examples) > 1:
        session.problem(CompileProblem("a case has at most one `examples` table", examples[1], code="E214"))
    for problem in shape_problems(case):
        session.problem(problem)
    if not any(isinstance(s, a.ExpectStmt) for s in case.body) and not prelude.expects:
        session.problem(CompileProblem("this case has no expectations", case, code="E220",
                                       help="add an `expect` line (or a suite-wide one above the first case)"))
    try:
        if examples and examples[0].source is not None:
            outside = session.outside_root(base / examples[0].source.value, examples[0].source, "examples file")
            if outside is not None:
                raise outside
            return FileCases(session, case, file_rows(examples[0].source, base), examples[0], prelude, filename)
        rows = table_rows(examples[0], base, report=lambda p: session.problem(p, case)) if examples else [(None, case)]
    except CompileProblem as exc:
        session.problem(exc, case)
        return []
    if examples and not rows:  # every row was reported: check the placeholders against the header
        for problem in unknown_columns(case, examples[0]):
            session.problem(problem, case)
    if examples:
        for cell in unused_columns(case, examples[0]):
            session.diagnostics.append(warning(
                "W307", f"the examples column `{cell_text(cell)}` is used nowhere in the case", cell.span,
                help="use it as `$name` or `{{ name }}` in the case, or drop the column"))
    if not examples and session.may_have_templates:
        _warn_templates(session, case)
    out = []
    for row, blame in rows:
        try:
            compiled = one_case(session, case, row, prelude, filename)
        except CompileProblem as exc:
            session.problem(exc, blame)
            continue
        if compiled is not None:
            out.append(compiled)
    return out


def _warn_templates(session: Session, case: a.Case) -> None:
    found = [(n.span.line, n.span.column, n) for n in a.walk(case)
             if isinstance(n, a.String) and "{{" in n.value and n.span is not None]
    if found:
        first = min(found, key=lambda item: item[:2])[2]
        session.diagnostics.append(warning(
            "W304", "`{{` in a case without examples is plain text", first.span,
            help="add an `examples` table to fill it, or ignore this if the braces are meant"))
