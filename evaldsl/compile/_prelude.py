"""The head of a file (above its first case) -> its `Prelude`: settings, tools, world, suite-wide `expect`.

Tools come from the file's own `tool` blocks and, through `use` lines, from
other files (each read once per compile, `use` cycles and paths outside
`--root` reported); a name declared twice is an error (E208) unless both
paths reach the same declaration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..syntax import _ast as a
from ..syntax._diagnostics import error
from ._case import expectation
from ._errors import CompileProblem
from ._example_files import bad_path, shown_path
from ._model import CaseSettings, CompiledExpectation, CompiledTool
from ._offered import check_names
from ._session import Prelude, Session
from ._settings import SETTING_TYPES, apply
from ._tools import compile_tool
from ._values import to_text


def make_prelude(session: Session, head: list[Any], tool_blocks: list[a.Tool], filename: str, base: Path,
                 chain: tuple[Path, ...]) -> Prelude:
    """What every case of the file is compiled with, from its ``head`` statements and ``tool_blocks``."""
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
                suite_expects.append(expectation(session, stmt, None, lint_tools, filename, from_suite=True))
        except CompileProblem as exc:
            session.problem(exc, stmt)
    return Prelude(tools, defaults, name, description, suite_expects, world)


def _world(session: Session, head: list[Any], tools: dict[str, CompiledTool], tool_blocks: list[a.Tool],
           base: Path) -> Any:
    """The suite's `world` (loaded when the session imports worlds), its tools added to ``tools``."""
    found = [stmt for stmt in head if isinstance(stmt, a.WorldStmt)]
    session.has_world = bool(found)
    if not found:
        return None
    from ._worlds_compile import suite_world  # here: a suite without a world does not import its machinery

    return suite_world(session, found, tools, tool_blocks, base)


def _gather_tools(session: Session, head: list[Any], tool_blocks: list[a.Tool], filename: str, base: Path,
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


def _use(session: Session, stmt: a.UseStmt, base: Path, chain: tuple[Path, ...]) -> list[CompiledTool]:
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
