"""Worlds (LANGUAGE.md 14): tools backed by a Python class, one fresh instance per run.

`world "shop_world.py:Shop"` names a class in a Python file beside the
suite. Loading it (`load_world`) imports the file once per process and
turns each public method with type hints into a tool: the method's name,
the first paragraph of its docstring as the description, and a JSON Schema
that pydantic builds from the signature (and the docstring's ``Args:``
lines, as parameter descriptions). A call is validated by the same pydantic
model (strict, as JSON: ``"42"`` is not an ``int``), runs the method (awaited
when it is ``async``), and answers with a `str` result as it is, anything
else as JSON; an exception becomes an error answer carrying its message, as
a real tool that failed would give.

Which methods are tools: the public ones (no leading ``_``) of the class and
of its bases, leaving out ``state`` and ``close`` (they have their own
meaning), properties, and what classes of the standard library or pydantic
bring (a world that is a pydantic model does not offer ``model_dump``). A
public method with a parameter that has no type hint is an error at the
`world` line: the schema cannot be built, and a silent skip would hide a
tool the user meant.

Per run: `WorldClass.new(setup)` builds the instance (``Shop(setup)`` when
the case has a `setup`, ``Shop()`` otherwise), `state_of` reads its state as
JSON (``state()`` when it has one, else its public fields), `close_world`
calls its ``close()`` when it has one. Checking a file never imports it
unless asked (`evaldsl check --import-worlds`): `world_ref` is then a
`WorldClass` that knows its file and class name but no tools.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import inspect
import re
import sys
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ._errors import CompileProblem
from ._model import CompiledTool, ToolAnswer
from ._reads import note_read

_MODULES: dict[Path, ModuleType] = {}
"""World files imported in this process, by resolved path: each is imported once."""
_RESERVED = ("state", "close")
_FOREIGN = ("pydantic", "pydantic_core", "typing_extensions")
NO_SETUP: Any = object()
"""`WorldClass.new`'s default: the case has no `setup`, so the class is called with no argument."""


def split_spec(spec: str) -> tuple[str, str]:
    """``"dir/shop.py:Shop"`` -> (``"dir/shop.py"``, ``"Shop"``); a malformed spec raises ValueError."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name.isidentifier():
        raise ValueError(f'write the world as "FILE.py:ClassName", not {spec!r}')
    if not path.endswith(".py"):
        raise ValueError(f"a world's file is a Python file (.py), not {path!r}")
    return path, name


@dataclass(frozen=True)
class WorldMethod:
    """One method of a world class offered as a tool."""

    name: str
    args: Any
    """The pydantic model of its arguments (a class), built from the signature."""
    positional: tuple[str, ...]
    """Its positional-only parameters, passed by position."""
    is_async: bool


@dataclass(frozen=True)
class WorldClass:
    """A suite's `world`: the class, and the tools its methods make (none when not imported)."""

    spec: str
    """As written in the suite: ``"shop_world.py:Shop"``."""
    file: str
    """The world file's resolved path."""
    name: str
    """The class's name."""
    cls: Any = field(default=None, repr=False)
    """The class; None when the file was not imported (`evaldsl check` without --import-worlds)."""
    methods: Mapping[str, WorldMethod] = field(default_factory=dict, repr=False)
    tools: tuple[CompiledTool, ...] = field(default=(), repr=False)
    """Its tools, one per method, in the order the class defines them."""

    @property
    def loaded(self) -> bool:
        return self.cls is not None

    @property
    def has_state(self) -> bool:
        """Whether its instances have a ``state()`` method (else their public fields are the state)."""
        return callable(getattr(self.cls, "state", None))

    def new(self, setup: Any = NO_SETUP) -> Any:
        """A fresh instance for one run: ``cls(setup)``, or ``cls()`` when there is no setup."""
        if self.cls is None:
            raise RuntimeError(f"the world {self.spec} was not imported (checked without --import-worlds)")
        return self.cls() if setup is NO_SETUP else self.cls(setup)


def world_ref(spec: str, base: Path) -> WorldClass:
    """A world known by name only: nothing is imported (what `check` does without --import-worlds)."""
    path, name = split_spec(spec)
    return WorldClass(spec=spec, file=str((base / path).resolve()), name=name)


def load_world(spec: str, base: Path, node: Any = None) -> WorldClass:
    """Import a world file (once per process) and build its class's tools.

    Raises:
        CompileProblem: E244 for a malformed spec, a missing file, a file that fails to import,
            a name that is not a class in it, or a public method without type hints.
    """
    try:
        path_text, name = split_spec(spec)
    except ValueError as exc:
        raise CompileProblem(str(exc), node, code="E244") from None
    path = (base / path_text).resolve()
    if not path.is_file():
        raise CompileProblem(f"cannot find the world file {path_text}", node, code="E244",
                             suggestion=_near_file(path, path_text),
                             help=f"looked for {base / path_text} (relative to the suite's file)")
    note_read(path)
    module = _import(path, path_text, node)
    cls = getattr(module, name, None)
    if not inspect.isclass(cls):
        found = sorted(k for k, v in vars(module).items() if inspect.isclass(v) and v.__module__ == module.__name__)
        if cls is None:
            close = difflib.get_close_matches(name, found, n=1)
            raise CompileProblem(f"{path_text} defines no class `{name}`", node, code="E244",
                                 suggestion=f"{path_text}:{close[0]}" if close else None,
                                 help=f"classes defined there: {', '.join(found) or '(none)'}")
        kind = type(cls).__name__
        article = "an" if kind[:1].lower() in "aeiou" else "a"
        raise CompileProblem(f"`{name}` in {path_text} is {article} {kind}, not a class", node, code="E244",
                             help=f"classes defined there: {', '.join(found) or '(none)'}")
    methods, tools = _tools_of(cls, path, node)
    return WorldClass(spec=spec, file=str(path), name=name, cls=cls, methods=methods, tools=tools)


def _near_file(path: Path, written: str) -> str | None:
    """A did-you-mean for a missing world file: a close ``.py`` name in its folder, as written."""
    try:
        names = [p.name for p in path.parent.iterdir() if p.suffix == ".py"]
    except OSError:
        return None
    close = difflib.get_close_matches(path.name, names, n=1)
    if not close:
        return None
    head = written[: len(written) - len(Path(written).name)]
    return head + close[0]


def _raised_at(exc: BaseException, path: Path) -> str:
    """`` (line N)``: the world file's last line in the traceback, so the user sees where it raised."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename) == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f" (line {line})" if line else ""


def _import(path: Path, written: str, node: Any) -> ModuleType:
    if path in _MODULES:
        return _MODULES[path]
    digest = hashlib.sha1(str(path).encode("utf-8", "surrogatepass")).hexdigest()[:10]
    module_name = f"evaldsl_world_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise CompileProblem(f"cannot import the world file {path.name}", node, code="E244")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pydantic look their module up by name
    folder = str(path.parent)
    sys.path.insert(0, folder)  # so that it may import the modules beside it, as a script would
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # its own error, whatever it is, is the suite's problem, positioned
        sys.modules.pop(module_name, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise CompileProblem(f"importing the world file {written} raised {type(exc).__name__}: {exc}"
                             f"{_raised_at(exc, path)}", node, code="E244",
                             help="a world's file is imported when its suite is compiled (by `run`, or "
                                  f"`check --import-worlds`); `python {written}` (from the suite's folder) shows the "
                                  "whole traceback") from None
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:
            pass
    _MODULES[path] = module
    return module


def _tools_of(cls: type, path: Path, node: Any) -> tuple[dict[str, WorldMethod], tuple[CompiledTool, ...]]:
    from ._world_tools import method_tool

    methods: dict[str, WorldMethod] = {}
    tools: list[CompiledTool] = []
    for name, fn in _public_methods(cls):
        method, tool = method_tool(cls, name, fn, str(path), node)
        methods[name] = method
        tools.append(tool)
    if not tools:
        raise CompileProblem(f"the world class {cls.__name__} has no public method to offer as a tool",
                             node, code="E244",
                             help="define methods with type hints, e.g. def refund_order(self, id: int) -> str")
    return methods, tuple(tools)


def _public_methods(cls: type) -> list[tuple[str, Any]]:
    """(name, function) of each tool method, in definition order (bases' after the class's own)."""
    seen: set[str] = set()
    out = []
    for klass in cls.__mro__:
        if klass is object or _foreign(klass):
            continue
        for name, raw in vars(klass).items():
            if name in seen or name.startswith("_") or name in _RESERVED:
                continue
            seen.add(name)
            if isinstance(raw, (staticmethod, classmethod)):
                raw = raw.__func__
            if inspect.isfunction(raw):
                out.append((name, raw))
    return out


def _foreign(klass: type) -> bool:
    top = klass.__module__.split(".")[0]
    return top in _FOREIGN or top in sys.stdlib_module_names or top == "builtins"


def hints_of(fn: Any) -> dict[str, Any]:
    """The function's resolved type hints (string annotations evaluated in its module)."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # an annotation that does not resolve: the raw ones, so the missing hint is named
        return dict(getattr(fn, "__annotations__", {}))


# ------------------------------------------------------------ per run --


def state_of(instance: Any) -> Any:
    """The instance's state as JSON: its ``state()`` when it has one, else its public fields.

    An ``async def state`` is run to its end here (on a fresh event loop): call `astate_of` on a loop.
    """
    from pydantic_core import to_jsonable_python

    state = getattr(instance, "state", None)
    if callable(state):
        value = state()
        if inspect.isawaitable(value):
            value = _run_coroutine(value)
    else:
        value = public_fields(instance)
    return to_jsonable_python(value, fallback=str)


async def astate_of(instance: Any) -> Any:
    """`state_of`, awaiting an ``async def state``."""
    from pydantic_core import to_jsonable_python

    state = getattr(instance, "state", None)
    if callable(state):
        value = state()
        if inspect.isawaitable(value):
            value = await value
    else:
        value = public_fields(instance)
    return to_jsonable_python(value, fallback=str)


def public_fields(instance: Any) -> dict[str, Any]:
    """The instance's attributes not starting with ``_`` (``__dict__``, else ``__slots__``)."""
    values = getattr(instance, "__dict__", None)
    if values is None:
        names = [n for k in type(instance).__mro__ for n in getattr(k, "__slots__", ())]
        values = {n: getattr(instance, n) for n in names if hasattr(instance, n)}
    return {k: v for k, v in values.items() if not k.startswith("_")}


def close_world(instance: Any) -> None:
    """Call the instance's ``close()`` when it has one (an ``async def close`` run to its end)."""
    close = getattr(instance, "close", None)
    if callable(close):
        value = close()
        if inspect.isawaitable(value):
            _run_coroutine(value)


async def aclose_world(instance: Any) -> None:
    """`close_world`, awaiting an ``async def close``."""
    close = getattr(instance, "close", None)
    if callable(close):
        value = close()
        if inspect.isawaitable(value):
            await value


def _run_coroutine(value: Any) -> Any:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(value))  # a sync agent's thread: a loop of its own
    if hasattr(value, "close"):
        value.close()
    raise RuntimeError("an async world method was called from code running on the event loop without await: "
                       "use `await ctx.acall(...)` (or the async answerer) there")


async def _awaited(value: Any) -> Any:
    return await value


def error_answer(name: str, exc: BaseException) -> ToolAnswer:
    """The error answer of a world method that raised: its type and message."""
    message = str(exc)
    return ToolAnswer(False, f"Error: {name}: {type(exc).__name__}" + (f": {message}" if message else ""))
