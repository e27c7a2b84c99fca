"""Compiled suites to bytes and back, for the suite cache.

A compiled check is a small object or a closure made by a factory of
`evaldsl.compile`. The standard pickler stores functions by name, which a
closure has none of; `SuitePickler` stores evaldsl's own closures by value:
their code (marshalled once per code object, shared by every closure made
from it), the module whose globals they use, and what their cells hold.
That is safe only because the cache's key names the exact evaldsl code
(`_suite_cache.code_fingerprint`) and every entry is authenticated.

Anything else keeps the standard rules: a user's function by its importable
name, or no entry at all (`pickle.PicklingError`: that suite is compiled
every time). A loaded world is stored as the spec to load it again with,
so its class is the one imported in this process.
"""

from __future__ import annotations

import importlib
import io
import marshal
import pickle
import types
from dataclasses import replace
from pathlib import Path
from typing import Any

from ._model import CompiledTool
from ._world import WorldClass, load_world

PROTOCOL = 5


class StoreRefused(Exception):
    """The suite holds something the cache cannot store (a user's local function, an open file...)."""


def dumps(obj: Any) -> bytes:
    """``obj`` as bytes `loads` reads back.

    Raises:
        StoreRefused: naming what could not be stored.
    """
    buffer = io.BytesIO()
    try:
        SuitePickler(buffer, protocol=PROTOCOL, worlds=_worlds_in(obj)).dump(obj)
    except (pickle.PicklingError, TypeError, AttributeError, ValueError, RecursionError) as exc:
        raise StoreRefused(f"{type(exc).__name__}: {exc}") from None
    return buffer.getvalue()


def loads(data: bytes) -> Any:
    """What `dumps` stored (the caller has checked that the bytes are the cache's own)."""
    return pickle.loads(data)


class SuitePickler(pickle.Pickler):
    """`pickle.Pickler` that stores evaldsl's own closures by value and a loaded world by its spec
    (its tools by their name in it: their argument models are classes made when it was loaded)."""

    def __init__(self, file: Any, protocol: int, worlds: dict[str, WorldClass]) -> None:
        super().__init__(file, protocol=protocol)
        self.worlds = worlds

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is types.FunctionType and _ours(obj) and not _by_name(obj):
            return _function_reduce(obj)
        if kind is types.CodeType:
            return marshal.loads, (marshal.dumps(obj),)
        if kind is WorldClass and obj.cls is not None:
            return _world_again, (obj.spec, obj.file, obj.name)
        if kind is CompiledTool and obj.method is not None and obj.file in self.worlds:
            return _world_tool, (self.worlds[obj.file], obj.name)
        return NotImplemented


def _worlds_in(obj: Any) -> dict[str, WorldClass]:
    """The loaded world of a compiled suite (its own, and every case of a file has the same), by its file."""
    world = getattr(obj, "world", None)
    if world is None:
        cases = getattr(obj, "cases", None)
        world = getattr(cases[0], "world", None) if cases else None
    return {world.file: world} if isinstance(world, WorldClass) and world.cls is not None else {}


def _ours(fn: types.FunctionType) -> bool:
    module = fn.__module__ or ""
    return module == "evaldsl" or module.startswith("evaldsl.")


def _by_name(fn: types.FunctionType) -> bool:
    """Whether the standard pickler can store ``fn`` by its module and qualified name."""
    if "<" in fn.__qualname__:  # <locals>, <lambda>
        return False
    import sys

    found: Any = sys.modules.get(fn.__module__)
    for part in fn.__qualname__.split("."):
        found = getattr(found, part, None)
    return found is fn


def _function_reduce(fn: types.FunctionType) -> tuple:
    cells = fn.__closure__ or ()
    state = (tuple(cell.cell_contents for cell in cells), fn.__defaults__, fn.__kwdefaults__,
             fn.__qualname__, fn.__dict__ or None)
    return _function, (fn.__code__, fn.__module__, fn.__name__, len(cells)), state, None, None, _function_state


def _function(code: types.CodeType, module: str, name: str, cells: int) -> types.FunctionType:
    """A function of ``code`` over ``module``'s globals, its cells empty until `_function_state`
    (a closure may hold itself, as a recursive matcher does)."""
    scope = importlib.import_module(module).__dict__
    closure = tuple(types.CellType() for _ in range(cells)) or None
    return types.FunctionType(code, scope, name, None, closure)


def _function_state(fn: types.FunctionType, state: tuple) -> None:
    values, defaults, kwdefaults, qualname, attributes = state
    for cell, value in zip(fn.__closure__ or (), values):
        cell.cell_contents = value
    fn.__defaults__, fn.__kwdefaults__, fn.__qualname__ = defaults, kwdefaults, qualname
    if attributes:
        fn.__dict__.update(attributes)


def _world_again(spec: str, file: str, name: str) -> WorldClass:
    """The world loaded again from its file (imported once per process, as a compile does).

    A `CompileProblem` here (the file no longer imports) goes up to the cache, which compiles
    the suite again so the problem is reported at its line."""
    path = Path(file)
    return replace(load_world(f"{path.name}:{name}", path.parent), spec=spec)


def _world_tool(world: WorldClass, name: str) -> CompiledTool:
    """The tool ``name`` of ``world`` (loaded again by `_world_again`)."""
    for tool in world.tools:
        if tool.name == name:
            return tool
    raise pickle.UnpicklingError(f"the world {world.spec} has no tool {name} now")
