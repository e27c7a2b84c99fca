"""AST -> `CompiledSuite`: settings, `use` imports, examples, expectations.

`compile_suite` gathers every problem of a file before it fails once with an
`EvlError` (DESIGN rule 6). `load` compiles a file or every `*.evl` of a
directory, sorted by name; a malformed file fails the load and is named.

Memory does not grow with a file's cases beyond what is kept of them: text
is compiled as it is parsed, a case at a time (`_compile_streaming`), and
an `examples from` file's cases are made from their rows when read
(`_FileCases`, `LazyCases`). `check_suite` keeps no compiled case at all.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Union

from ..syntax import _ast as a
from ..syntax._diagnostics import Diagnostic, EvlError, error, warning
from ..syntax._unparse import unparse
from ._conversation import Scopes, given_rule, given_warnings, shape_problems, world_without_world
from ._errors import CompileProblem
from ._example_files import FileRows, bad_path, file_rows, shown_path
from ._examples import cell_text, holes, substitute, table_rows, unknown_columns, unused_columns
from ._expect import compile_expectation, lint
from ._model import (
    CaseSettings,
    CompiledCase,
    CompiledExpectation,
    CompiledSuite,
    CompiledTool,
    LazyCases,
    SuiteCases,
)
from ._offered import Offered, check_names, unoffered
from ._positions import ByPosition
from ._reading import read_source
from ._reads import note_read
from ._settings import SETTING_TYPES, apply, apply_row_columns
from ._tools import compile_tool
from ._validate import without_tools
from ._values import to_python, to_text

Sources = Union[Mapping[str, str], Mapping[Path, str], Mapping[Union[str, Path], str]]
"""Texts standing in for `use` files on disk, by path (`compile(sources=...)`)."""

CHECK_CACHE = 512
"""How many compiled checks `check` keeps for reuse by expectations of the same text."""
SHARED_CHECKS = 8192
"""How many a compile keeps for that reuse: past it the cache starts again (cases already
compiled keep theirs), so a suite of 100,000 distinct expectations does not also hold an
index of them all."""


class _Session:
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
    session = _Session(predicates, root, sources, import_worlds)
    if isinstance(source, str):
        try:
            return _compile_streaming(session, source, filename, base, (top,), keep_cases)
        except _ToolAfterCase:
            session = _Session(predicates, root, sources, import_worlds)  # again, from the whole file's AST
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


def _compile_streaming(session: _Session, text: str, filename: str, base: Path, chain: tuple[Path, ...],
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

    def __init__(self, session: _Session, filename: str, base: Path, chain: tuple[Path, ...], keep: bool) -> None:
        self.session, self.filename, self.base, self.chain = session, filename, base, chain
        self.head: list[Any] = []
        self.tool_blocks: list[a.Tool] = []
        self.prelude: _Prelude | None = None
        self.cases = _Cases(keep)

    def add(self, item: Any) -> None:
        if isinstance(item, a.Case):
            if self.prelude is None:
                self.prelude = _prelude(self.session, self.head, self.tool_blocks, self.filename, self.base, self.chain)
            self.cases.add(item, _compile_case(self.session, item, self.prelude, self.filename, self.base))
        elif isinstance(item, a.Tool):
            if self.prelude is not None:
                raise _ToolAfterCase
            self.tool_blocks.append(item)
        else:
            self.head.append(item)

    def finish(self) -> CompiledSuite:
        if self.prelude is None:
            self.prelude = _prelude(self.session, self.head, self.tool_blocks, self.filename, self.base, self.chain)
        return self.cases.suite(self.session, self.prelude, self.filename)


@dataclass
class _Prelude:
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


def _prelude(session: _Session, head: list[Any], tool_blocks: list[a.Tool], filename: str, base: Path,
             chain: tuple[Path, ...]) -> _Prelude:
    tools = _gather_tools(session, head, tool_blocks, filename, base, chain)
    world = _world(session, head, tools, tool_blocks, base)
    lint_tools = tools if world is None or world.loaded else {}
    defaults, name, description = CaseSettings(), Path(filename).stem, None
    suite_expects: list[CompiledExpectation] = []
    for stmt in head:
        try:
            if isinstance(stmt, a.SuiteStmt):
                name = to_text(stmt.name)
            elif isinstance(stmt, a.DescriptionStmt):
                description = to_text(stmt.text)
            elif isinstance(stmt, SETTING_TYPES):
                if isinstance(stmt, a.ToolsStmt):
                    check_names(stmt, tools, world is None or world.loaded)
                defaults = apply(defaults, stmt)
            elif isinstance(stmt, a.ExpectStmt):
                suite_expects.append(_expectation(session, stmt, None, lint_tools, filename, from_suite=True))
        except CompileProblem as exc:
            session.problem(exc, stmt)
    return _Prelude(tools, defaults, name, description, suite_expects, world)


def _world(session: _Session, head: list[Any], tools: dict[str, CompiledTool], tool_blocks: list[a.Tool],
           base: Path) -> Any:
    """The suite's `world` (loaded when the session imports worlds), its tools added to ``tools``."""
    found = [stmt for stmt in head if isinstance(stmt, a.WorldStmt)]
    session.has_world = bool(found)
    if not found:
        return None
    from ._worlds_compile import suite_world  # here: a suite without a world does not import its machinery

    return suite_world(session, found, tools, tool_blocks, base)


class _Cases:
    """A file's compiled cases (kept or not) and what the checks across cases need: each name's first line."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.parts: list[Sequence[CompiledCase]] = [[]]
        self.first_line: dict[str, int] = {}
        self.duplicates: list[Diagnostic] = []

    def add(self, case: a.Case, compiled: Iterable[CompiledCase]) -> None:
        span = case.span
        lazy = isinstance(compiled, _FileCases)
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

    def suite(self, session: _Session, prelude: _Prelude, filename: str) -> CompiledSuite:
        session.diagnostics.extend(self.duplicates)
        cases = tuple(self.parts[0]) if len(self.parts) == 1 else SuiteCases(self.parts)
        return CompiledSuite(name=prelude.name, file=filename, cases=cases,
                             description=prelude.description, tools=prelude.tool_tuple, world=prelude.world)


def _compile(session: _Session, suite: a.Suite, filename: str, base: Path, chain: tuple[Path, ...]) -> CompiledSuite:
    prelude = _prelude(session, suite.head, suite.tools, filename, base, chain)
    cases = _Cases(keep=True)
    for case in suite.cases:
        cases.add(case, _compile_case(session, case, prelude, filename, base))
    compiled = cases.suite(session, prelude, filename)
    warnings = tuple(d for d in session.diagnostics if d.severity == "warning")
    return replace(compiled, warnings=warnings)


def _expectation(session: _Session, stmt: a.ExpectStmt, row: dict | None, tools: dict[str, CompiledTool],
                 filename: str, *, from_suite: bool = False) -> CompiledExpectation:
    node = stmt.expectation if row is None else substitute(stmt.expectation, row, session.holes)
    # Shared: one compiled check per expectation text; not those filled from a row, which
    # differ from row to row (keeping them all would keep every row of a file compiled).
    checks = session.checks if node is stmt.expectation else None
    label = None
    needs_judge = session.needs_judge.get(id(stmt))
    if needs_judge is None and checks is not None:
        label = unparse(node)
        needs_judge = session.linted.get(label)  # this text linted clean before: so it is again
    if needs_judge is None:
        problems, warnings, needs_judge = lint(node, tools, session.predicates)
        if not session.has_world and session.predicates is None:
            problems += world_without_world(node)
        if not tools and not session.has_world:
            warnings += without_tools(node)  # v2: `valid arguments` with nothing to validate against
        session.warn(warnings)
        for problem in problems[1:]:
            session.problem(problem, stmt)
        if problems:
            raise problems[0]
        if label is not None and not warnings:
            session.linted[label] = needs_judge
    if checks is not None and len(checks) >= session.checks_limit:
        checks.clear()  # the shared checks are a cache (`check` keeps no case), kept bounded
        session.linted.clear()
    return compile_expectation(node, filename, from_suite=from_suite, needs_judge=needs_judge, checks=checks,
                               label=label)


def _compile_case(session: _Session, case: a.Case, prelude: _Prelude, filename: str, base: Path
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
            return _FileCases(session, case, file_rows(examples[0].source, base), examples[0], prelude, filename)
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
            compiled = _one_case(session, case, row, prelude, filename)
        except CompileProblem as exc:
            session.problem(exc, blame)
            continue
        if compiled is not None:
            out.append(compiled)
    return out


class _FileCases:
    """The cases of an `examples from` file: one per row, each compiled (and checked) when iterated.

    The compiler iterates them once, to report every row's problems and to
    know their names; `lazy` is what the suite keeps: the same cases, made
    again from their rows when the runner reads them.
    """

    def __init__(self, session: _Session, case: a.Case, rows: FileRows, blame: a.ExamplesStmt,
                 prelude: _Prelude, filename: str) -> None:
        self.session, self.case, self.rows, self.blame = session, case, rows, blame
        self.prelude, self.filename = prelude, filename

    def __iter__(self) -> Iterator[CompiledCase]:
        session, case, prelude, filename = self.session, self.case, self.prelude, self.filename
        session.holes = self.holes = holes(case)
        try:
            for row in self.rows:
                try:
                    compiled = _one_case(session, case, row, prelude, filename)
                except CompileProblem as exc:
                    session.problem(exc, self.blame)
                    continue
                if compiled is not None:
                    yield compiled
        finally:
            session.holes = None

    def lazy(self, names: list[str]) -> LazyCases:
        """The cases made again from their rows when read; ``names``: theirs, in order, as compiled."""
        quiet = _Rebuild(self.session, self.holes, self.case)
        case, rows, prelude, filename = self.case, self.rows, self.prelude, self.filename

        def build(i: int) -> CompiledCase:
            return _made(_one_case(quiet, case, rows[i], prelude, filename), i, filename)

        def outline(i: int, labels: bool) -> CompiledCase:
            return _made(_one_case(quiet, case, rows[i], prelude, filename, _LABELS if labels else _NONE),
                         i, filename)

        return LazyCases(len(rows), build, _Keys(filename, names), outline, one_case=True)


def _made(compiled: CompiledCase | None, i: int, filename: str) -> CompiledCase:
    if compiled is None:  # cannot happen: every row compiled when the suite was compiled
        raise RuntimeError(f"row {i + 1} of {filename}'s examples no longer compiles; please report this")
    return compiled


class _Keys(ByPosition[tuple[str, str]]):
    """(file, name) of each row's case: one file for all, the names UTF-8 in one buffer with
    where each ends (about 8 bytes a row beside the name, where a list of strings took about 60)."""

    what = "key"

    def __init__(self, file: str, names: list[str]) -> None:
        self.file = file
        self._names = bytearray()
        self._ends = array("q")
        for name in names:
            self._names += name.encode("utf-8", "surrogatepass")  # a name filled from a row may hold one
            self._ends.append(len(self._names))

    def __len__(self) -> int:
        return len(self._ends)

    def _name(self, i: int) -> str:
        ends = self._ends
        return self._names[ends[i - 1] if i else 0:ends[i]].decode("utf-8", "surrogatepass")

    def _at(self, i: int) -> tuple[str, str]:
        return self.file, self._name(i)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        file, names, start = self.file, self._names, 0
        for end in self._ends:
            yield file, names[start:end].decode("utf-8", "surrogatepass")
            start = end


_COMPILED, _LABELS, _NONE = 0, 1, 2
"""What `_one_case` makes of a case's own expectations: compiled ones; for an outline
(`LazyCases.outlined`), their labels with no check; or none."""


def _not_compiled(ctx: Any) -> Any:
    raise RuntimeError("an outline of a case (LazyCases.outlined) has no compiled checks: it cannot be run")


def _outlined_expectation(session: _Session, stmt: a.ExpectStmt, row: dict | None, filename: str
                          ) -> CompiledExpectation:
    """What `_expectation` makes of ``stmt`` for ``row``, without its check: the same label, file and line."""
    node = stmt.expectation if row is None else substitute(stmt.expectation, row, session.holes)
    needs_judge = session.needs_judge.get(id(stmt))
    if needs_judge is None:
        needs_judge = any(isinstance(n, a.Judge) for n in a.walk(node))
    return CompiledExpectation(label=unparse(node), file=filename, line=node.span.line if node.span else 0,
                               check=_not_compiled, needs_judge=needs_judge)


class _Rebuild(_Session):
    """The session a row's case is made again in, after its suite compiled: it reports nothing
    (every row's problems and warnings were reported then) and keeps nothing but shared checks."""

    def __init__(self, session: _Session, holes: set[int] | None, case: a.Case) -> None:
        super().__init__(session.predicates)
        self.checks, self.holes, self.case = session.checks, holes, case
        self._index()

    def _index(self) -> None:
        """Whether each `expect` needs a judge (linted with every row already: the same for each)."""
        for stmt in self.case.body:
            if isinstance(stmt, a.ExpectStmt):
                self.needs_judge[id(stmt)] = any(isinstance(n, a.Judge) for n in a.walk(stmt.expectation))

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled (the suite cache): ``holes`` and ``needs_judge`` are keyed by the ``id()`` of the
        case's nodes, which are new objects now, so both are made again from the case."""
        self.__dict__.update(state)
        self.needs_judge = {}
        self.holes = None if self.holes is None else holes(self.case)
        self._index()

    def problem(self, exc: CompileProblem, fallback: Any = None) -> None:
        pass

    def warn(self, warnings: list[Diagnostic]) -> None:
        pass


def _one_case(session: _Session, case: a.Case, row: dict | None, prelude: _Prelude, filename: str,
              expects_as: int = _COMPILED) -> CompiledCase | None:
    settings, prompt, setup, expects = prelude.defaults, "", None, list(prelude.expects)
    tools = prelude.lint_tools
    scopes, given = Scopes(expects), []
    failed = False
    for stmt in case.body:
        try:
            if isinstance(stmt, SETTING_TYPES):
                filled = _fill(stmt, row, session.holes)
                if isinstance(filled, a.ToolsStmt):
                    check_names(filled, prelude.tools, prelude.names_known)
                settings = apply(settings, filled)
            elif isinstance(stmt, a.PromptStmt):
                prompt = to_text(_fill(stmt, row, session.holes).text)  # the statement: `prompt $p` too
            elif isinstance(stmt, a.SetupStmt):
                setup = to_python(_fill(stmt.value, row, session.holes))
            elif isinstance(stmt, a.ExpectStmt):
                if expects_as == _COMPILED:
                    scopes.add(_expectation(session, stmt, row, tools, filename))
                elif expects_as == _LABELS:
                    scopes.add(_outlined_expectation(session, stmt, row, filename))
            elif isinstance(stmt, a.UserStmt):
                scopes.user(to_text(_fill(stmt, row, session.holes).text), stmt.span.line if stmt.span else 0)
            elif isinstance(stmt, a.SimulatedUserStmt):
                scopes.simulated_user(to_text(_fill(stmt, row, session.holes).text))
            elif isinstance(stmt, a.GivenStmt):
                filled = _fill(stmt, row, session.holes)
                given.append(given_rule(filled, prelude.tools, prelude.names_known, filename))
                session.warn(given_warnings(filled, prelude.lint_tools))
        except CompileProblem as exc:
            session.problem(exc, stmt)
            failed = True
    if row is not None:
        settings = apply_row_columns(settings, row)
    if settings.tools is not None and prelude.names_known:  # v2: an expected call the case cannot offer
        session.warn(unoffered(case.body, settings.tools, prelude.tools))
    name = to_text(_fill(case.name, row, session.holes))
    if failed:
        return None  # its problems are already reported
    line = case.span.line if case.span else 0
    turns = scopes.compiled_turns()
    if turns:
        prompt = turns[0].message  # a conversation's first message (LANGUAGE.md 11)
    return CompiledCase(suite=prelude.name, name=name, file=filename, line=line, prompt=prompt,
                        settings=settings, expectations=tuple(expects), setup=setup,
                        tools=prelude.offered(settings), turns=turns, simulated_user=scopes.simulated,
                        given=tuple(given), world=prelude.world)




def _fill(node: Any, row: dict | None, holes: set[int] | None = None) -> Any:
    return node if row is None else substitute(node, row, holes)


def _warn_templates(session: _Session, case: a.Case) -> None:
    found = [(n.span.line, n.span.column, n) for n in a.walk(case)
             if isinstance(n, a.String) and "{{" in n.value and n.span is not None]
    if found:
        first = min(found, key=lambda item: item[:2])[2]
        session.diagnostics.append(warning(
            "W304", "`{{` in a case without examples is plain text", first.span,
            help="add an `examples` table to fill it, or ignore this if the braces are meant"))


def _gather_tools(session: _Session, head: list[Any], tool_blocks: list[a.Tool], filename: str, base: Path,
                  chain: tuple[Path, ...]) -> dict[str, CompiledTool]:
    tools: dict[str, CompiledTool] = {}
    where: dict[str, str] = {}

    def add(tool: CompiledTool, span: a.Span | None) -> None:
        here = f"{tool.file}:{tool.line}"
        if tool.name in tools and where[tool.name] == here:
            return  # the same declaration, reached through two `use` paths
        if tool.name in tools:
            session.diagnostics.append(error(
                "E208", f"tool `{tool.name}` is declared twice", span,
                label=f"also declared at {where[tool.name]}"))
            return
        tools[tool.name], where[tool.name] = tool, here

    for stmt in head:
        if isinstance(stmt, a.UseStmt):
            for tool in _use(session, stmt, base, chain):
                add(tool, stmt.span)
    for block in tool_blocks:
        try:
            add(compile_tool(block, filename, report=session.problem), block.span)
        except CompileProblem as exc:
            session.problem(exc, block)
    return tools


def _use(session: _Session, stmt: a.UseStmt, base: Path, chain: tuple[Path, ...]) -> list[CompiledTool]:
    """The tools a `use` line brings in (its file's own and, through its `use` lines, theirs)."""
    why = bad_path(stmt.path.value)
    if why is not None:
        session.diagnostics.append(error("E207", f"cannot use {shown_path(stmt.path.value)}: {why}", stmt.path.span))
        return []
    path = (base / stmt.path.value).resolve()
    if path in chain:
        cycle = " -> ".join(p.name for p in chain + (path,))
        session.diagnostics.append(error("E206", f"`use` cycle: {cycle}", stmt.span))
        return []
    if path in session.libraries:
        return session.libraries[path]
    outside = session.outside_root(path, stmt.path, "`use` file")
    if outside is not None:
        session.problem(outside)
        return []
    if path not in session.overlay and path.exists() and not path.is_file():
        session.diagnostics.append(error("E207", f"cannot use {stmt.path.value}: not a regular file", stmt.path.span,
                                         help="name a .evl file (not a FIFO, device or folder)"))
        return []
    if path not in session.overlay and not path.is_file():
        session.diagnostics.append(error("E207", f"cannot find {stmt.path.value}", stmt.span,
                                         help=f"looked for {base / stmt.path.value}"))
        return []
    shown = str(base / stmt.path.value)
    lib = session.parse_file(path, shown)
    result: list[CompiledTool] = []
    if lib is not None:
        tools = _gather_tools(session, lib.head, lib.tools, shown, Path(shown).parent, chain + (path,))
        result = list(tools.values())
        for world in (s for s in lib.head if isinstance(s, a.WorldStmt)):  # said, never dropped in silence
            session.diagnostics.append(error(
                "E244", "`use` brings in tools, not a `world`: this line does not reach the suite that uses "
                "this file", world.span,
                help=f"name the world in the suite that uses it: world \"{world.path.value}\""))
    session.libraries[path] = result
    return result
