"""The cases of an `examples from` file: one per row, compiled once to report, made again when read.

The compiler iterates `FileCases` once, to report every row's problems and
to know the cases' names (kept compactly, `_Keys`); what the suite keeps is
`FileCases.lazy`, a `LazyCases` that makes each row's case again when the
runner reads it, in a `_Rebuild` session that reports nothing (every row was
checked when the suite compiled) and shares the compile's checks. Memory
grows with the file's rows (their text), not with compiled cases.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

from ..syntax import _ast as a
from ..syntax._diagnostics import Diagnostic
from ._case import LABELS, NONE, one_case
from ._errors import CompileProblem
from ._example_files import FileRows
from ._examples import holes
from ._model import CompiledCase, LazyCases
from ._positions import ByPosition
from ._session import Prelude, Session


class FileCases:
    """The cases of an `examples from` file: one per row, each compiled (and checked) when iterated.

    The compiler iterates them once, to report every row's problems and to
    know their names; `lazy` is what the suite keeps: the same cases, made
    again from their rows when the runner reads them.
    """

    def __init__(self, session: Session, case: a.Case, rows: FileRows, blame: a.ExamplesStmt,
                 prelude: Prelude, filename: str) -> None:
        self.session, self.case, self.rows, self.blame = session, case, rows, blame
        self.prelude, self.filename = prelude, filename

    def __iter__(self) -> Iterator[CompiledCase]:
        session, case, prelude, filename = self.session, self.case, self.prelude, self.filename
        session.holes = self.holes = holes(case)
        try:
            for row in self.rows:
                try:
                    compiled = one_case(session, case, row, prelude, filename)
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
            return _made(one_case(quiet, case, rows[i], prelude, filename), i, filename)

        def outline(i: int, labels: bool) -> CompiledCase:
            return _made(one_case(quiet, case, rows[i], prelude, filename, LABELS if labels else NONE),
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


class _Rebuild(Session):
    """The session a row's case is made again in, after its suite compiled: it reports nothing
    (every row's problems and warnings were reported then) and keeps nothing but shared checks."""

    def __init__(self, session: Session, holes: set[int] | None, case: a.Case) -> None:
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
