"""A suite's `world` line, compiled: its class loaded (or, for `check`, only named) and its tools declared.

Kept apart from the compiler so that its rules read in one place: one
`world` per suite; the file obeys the root rule of `examples from` files
(E230); loading problems are E244 at the line (`_world.load_world`); a
`tool` block (or a tool brought in by `use`) named like a world method is
E243, naming both. A world that fails to load is still known by name, so
calls of its tools are not reported as undeclared on top of the real error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..syntax import _ast as a
from ._errors import CompileProblem
from ._model import CompiledTool
from ._world import WorldClass, load_world, split_spec, world_ref


def suite_world(session: Any, found: list[a.WorldStmt], tools: dict[str, CompiledTool],
                tool_blocks: list[a.Tool], base: Path) -> WorldClass | None:
    """The suite's world (see the module docstring); every problem goes to ``session.problem``."""
    for extra in found[1:]:
        session.problem(CompileProblem("a suite has at most one `world`", extra, code="E244",
                                       help=f"the first is at line {found[0].span.line if found[0].span else 0}"))
    stmt = found[0]
    spec = stmt.path.value
    try:
        path, _ = split_spec(spec)
    except ValueError as exc:
        session.problem(CompileProblem(str(exc), stmt.path, code="E244"))
        return None
    outside = session.outside_root(base / path, stmt.path, "world file")
    if outside is not None:
        session.problem(outside)
        return world_ref(spec, base)
    if not session.import_worlds:
        return world_ref(spec, base)
    try:
        world = load_world(spec, base, stmt.path)
    except CompileProblem as exc:
        session.problem(exc)
        return world_ref(spec, base)
    for tool in world.tools:
        if tool.name in tools:
            _clash(session, tools[tool.name], tool, world, stmt, tool_blocks)
        else:
            tools[tool.name] = tool
    return world


def _clash(session: Any, declared: CompiledTool, method: CompiledTool, world: WorldClass, stmt: a.WorldStmt,
           tool_blocks: list[a.Tool]) -> None:
    where = f"{Path(world.file).name}:{method.line}" if method.line else Path(world.file).name
    block = next((b for b in tool_blocks if isinstance(b.name, a.ToolName) and b.name.name == declared.name
                  and b.span is not None and b.span.line == declared.line), None)
    node = block.name if block is not None else stmt
    also = "" if block is not None else f" (declared at {declared.file}:{declared.line})"
    session.problem(CompileProblem(
        f"tool `{declared.name}`{also} has the name of a method of the world {world.name} ({where})", node,
        code="E243", help="rename the tool block, or drop it: the world's method is the tool"))
