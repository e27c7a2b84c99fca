"""The seams between evaldsl and user code: `Agent` and `Harness`.

Both are runtime-checkable Protocols, so a user's class needs no base class
and no import of ours: anything with the right methods is accepted, sync or
`async def` alike (the scheduler runs sync ones on worker threads). The
resolvers turn what a user hands us (an object, a class, a plain function)
into one of these, or raise a `TypeError` that says what was expected, so
`evaldsl run --agent mod:thing` can print one clear line.

`Subject` is the runner's own normalized view of either: the functions to
call, whether each is async, the custom predicates and a display name.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, Protocol, runtime_checkable

from ..artifacts import RunArtifacts
from ..compile._model import PredicateFn
from ._safe import exception_text, safe_text


@runtime_checkable
class Agent(Protocol):
    """Anything that runs one instruction and reports what it did.

    ``run`` may be a plain method or ``async def``. It returns a
    `RunArtifacts` (a dict of its fields is accepted too). Raising, or
    returning artifacts with ``error`` set, makes that run an error.
    """

    def run(self, instruction: str) -> RunArtifacts | Awaitable[RunArtifacts]: ...


@runtime_checkable
class Harness(Protocol):
    """The advanced path: an agent acting on a world (docs/running.md section 3).

    ``setup(value)`` builds a fresh world for each run from the case's
    ``setup`` value (None when the case has none); ``run(instruction,
    world)`` runs the agent against it. Either may be ``async def``. Custom
    predicates (docs/language.md section 11) are read from a ``predicates``
    mapping attribute (name -> ``fn(artifacts, world, **kwargs)``), for
    instance a `Predicates`.
    """

    def setup(self, setup: Any) -> Any: ...

    def run(self, instruction: str, world: Any) -> RunArtifacts | Awaitable[RunArtifacts]: ...


class Predicates(dict):  # type: ignore[type-arg]
    """A registry of custom predicates, usable as a decorator.

    ::

        class Shop:
            predicates = Predicates()

            @predicates.register
            def stock_is(artifacts, world, *, item, count):
                return world.stock[item] == count

    ``@predicates.register("other_name")`` registers under another name. A
    predicate returns a bool, a credit in [0, 1], or a ``(bool, detail)`` pair.
    """

    def register(self, name_or_fn: str | PredicateFn | None = None) -> Any:
        if callable(name_or_fn):
            self[name_or_fn.__name__] = name_or_fn
            return name_or_fn

        def decorate(fn: PredicateFn) -> PredicateFn:
            self[name_or_fn or fn.__name__] = fn
            return fn

        return decorate


class FunctionAgent:
    """A plain function ``(instruction) -> RunArtifacts`` (or ``async def``) as an Agent."""

    def __init__(self, fn: Callable[[str], Any]) -> None:
        self.run = fn
        self.name = getattr(fn, "__name__", None) or type(fn).__name__

    def __repr__(self) -> str:
        return f"FunctionAgent({self.run!r})"


@dataclass(frozen=True)
class Subject:
    """What the scheduler runs: an agent or a harness, normalized."""

    kind: Literal["agent", "harness"]
    name: str
    run: Callable[..., Any]
    setup: Callable[..., Any] | None = None
    predicates: Mapping[str, PredicateFn] = field(default_factory=dict)
    context: bool = False
    """True when ``run`` takes a `CaseContext` after its other arguments
    (decided once, from its signature, when the subject is built)."""

    @cached_property
    def run_is_async(self) -> bool:
        return _is_async(self.run)

    @cached_property
    def setup_is_async(self) -> bool:
        return self.setup is not None and _is_async(self.setup)


_AGENT_SHAPE = (
    "an agent is an object with a run(instruction) method, a class whose instances have "
    "one (made with no arguments), or a function (instruction) -> RunArtifacts"
)


def resolve_agent(obj: Any) -> Agent:
    """Turn an agent object, an agent class or a function into an `Agent`.

    Raises:
        TypeError: when ``obj`` is none of these; the message says what is expected.
    """
    obj = _instantiate(obj, "agent")
    if obj is None or isinstance(obj, (str, bytes, int, float, bool, Mapping, list, tuple)):
        raise TypeError(f"{_describe(obj)} is not an agent: {_AGENT_SHAPE}")
    if type(obj).__module__.split(".")[0] not in ("builtins", "evaldsl"):
        from ..agents.adapters import recognise  # a framework's object (docs/agents.md section 2)

        if (framework := recognise(obj)) is not None:
            return framework  # type: ignore[no-any-return]
    run = getattr(obj, "run", None)
    if callable(run):
        # run(instruction, ctx) is an agent taking the case context, unless it has a setup:
        # then it is a harness's run(instruction, world), passed as an agent by mistake.
        if callable(getattr(obj, "setup", None)) or not takes_context(run, ("instruction",)):
            _check_arity(run, ("instruction",), f"{_describe(obj)}.run", harness_hint=True)
        return obj  # type: ignore[no-any-return]
    if callable(obj):
        if not takes_context(obj, ("instruction",)):
            _check_arity(obj, ("instruction",), _describe(obj), harness_hint=False)
        return FunctionAgent(obj)
    raise TypeError(f"{_describe(obj)} is not an agent: {_AGENT_SHAPE}")


def resolve_harness(obj: Any) -> Harness:
    """Turn a harness object or class into a `Harness`.

    Raises:
        TypeError: when it has no ``setup(value)`` and ``run(instruction, world)``.
    """
    obj = _instantiate(obj, "harness")
    setup, run = getattr(obj, "setup", None), getattr(obj, "run", None)
    if not (callable(setup) and callable(run)):
        raise TypeError(
            f"{_describe(obj)} is not a harness: a harness has setup(value) -> world and "
            "run(instruction, world) -> RunArtifacts"
        )
    _check_arity(setup, ("value",), f"{_describe(obj)}.setup", harness_hint=False)
    if not takes_context(run, ("instruction", "world")):
        _check_arity(run, ("instruction", "world"), f"{_describe(obj)}.run", harness_hint=False)
    preds = getattr(obj, "predicates", None)
    if preds is not None and not isinstance(preds, Mapping):
        raise TypeError(f"{_describe(obj)}.predicates must be a mapping of name -> function")
    return obj  # type: ignore[no-any-return]


def agent_subject(agent: Any, predicates: Mapping[str, PredicateFn] | None = None) -> Subject:
    """The scheduler's view of an agent (resolved first)."""
    if isinstance(agent, Subject):
        return agent
    agent = resolve_agent(agent)
    context = takes_context(agent.run, ("instruction",))
    return Subject("agent", display_name(agent), agent.run, None, dict(predicates or {}), context)


def harness_subject(harness: Any, predicates: Mapping[str, PredicateFn] | None = None) -> Subject:
    """The scheduler's view of a harness (resolved first); extra predicates win."""
    if isinstance(harness, Subject):
        return harness
    harness = resolve_harness(harness)
    merged = {**dict(predicates_of(harness)), **dict(predicates or {})}
    context = takes_context(harness.run, ("instruction", "world"))
    return Subject("harness", display_name(harness), harness.run, harness.setup, merged, context)


def takes_context(run: Callable[..., Any], params: tuple[str, ...]) -> bool:
    """Whether ``run`` accepts one more positional argument, the `CaseContext`,
    after ``params`` (``run(prompt, ctx)``; a harness's ``run(prompt, world, ctx)``)."""
    try:
        sig = inspect.signature(run)
    except (TypeError, ValueError):  # builtins and some C callables: never given one
        return False
    return _binds(sig, (*params, "ctx"))


def subject_for(obj: Any, predicates: Mapping[str, PredicateFn] | None = None) -> Subject:
    """An agent or a harness, told apart by shape: a harness has ``setup`` and a
    ``run`` that takes a world as well as the instruction."""
    if isinstance(obj, Subject):
        return obj
    obj = _instantiate(obj, "agent")
    setup, run = getattr(obj, "setup", None), getattr(obj, "run", None)
    if callable(setup) and callable(run):
        try:
            sig = inspect.signature(run)
        except (TypeError, ValueError):
            sig = None
        if sig is not None and _binds(sig, ("instruction", "world")) and not _binds(sig, ("instruction",)):
            return harness_subject(obj, predicates)
    return agent_subject(obj, predicates)


def import_object(spec: str) -> Any:
    """Import ``module:attr`` (``attr`` may be dotted; ``path/to/file.py:attr`` works too, and so does a
    path without ``.py``, ``./my_agent:agent`` or ``agents/my_agent:agent``, when that file exists).

    The current directory is importable, as with ``python -m``.

    Raises:
        ImportError: with one line saying what could not be found and why.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ImportError(f"{spec!r} is not of the form module:attr (e.g. my_agent:agent)")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    if not module_name.endswith(".py") and ("/" in module_name or os.sep in module_name or module_name.startswith(".")):
        as_file = module_name + ".py"
        if os.path.isfile(as_file):
            module_name = as_file  # `./my_agent` names the file my_agent.py, not a relative import
        elif "/" in module_name or os.sep in module_name:
            dotted = module_name.strip("./").replace("/", ".")
            raise ImportError(f"no such file: {as_file} (a path before the colon names a .py file; "
                              f"a module is written with dots, e.g. {dotted}:{attr})")
    try:
        if module_name.endswith(".py"):
            module = _import_file(module_name)
        else:
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(f"cannot import {module_name!r}: {exception_text(exc, limit=2_000)}") from None
    except Exception as exc:  # the module itself failed while importing
        text = exception_text(exc, limit=2_000)
        raise ImportError(f"importing {module_name!r} raised {type(exc).__name__}: {text}") from None
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            public = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, public, n=1)
            hint = f"; did you mean {module_name}:{attr.replace(part, close[0], 1)}?" if close else ""
            raise ImportError(f"module {module_name!r} has no attribute {attr!r}{hint}") from None
    return obj


def _import_file(path: str) -> Any:
    if not os.path.isfile(path):
        raise ImportError(f"no such file: {path}")
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def predicates_of(obj: Any) -> Mapping[str, PredicateFn]:
    """The custom predicates a harness (object or class) registers; empty when none.

    A class attribute is read without making an instance, so `evaldsl check
    --harness` does not run the harness's constructor when it need not.
    """
    preds = getattr(obj, "predicates", None)
    if isinstance(obj, type) and not isinstance(preds, Mapping):
        preds = getattr(_instantiate(obj, "harness"), "predicates", None)
    if preds is None:
        return {}
    if not isinstance(preds, Mapping) or not all(callable(f) for f in preds.values()):
        raise TypeError(f"{_describe(obj)}.predicates must be a mapping of name -> function")
    return preds


def display_name(obj: Any) -> str:
    """A name for records: a ``name`` or ``model`` string attribute, else the type's name."""
    for attr in ("name", "model"):
        value = getattr(obj, attr, None)
        if isinstance(value, str) and value:
            return safe_text(str.__str__(value))  # a lone surrogate would stop the record
    return type(obj).__name__


def _instantiate(obj: Any, what: str) -> Any:
    if not isinstance(obj, type):
        return obj
    try:
        return obj()
    except Exception as exc:
        raise TypeError(
            f"cannot make {'an' if what[0] in 'aeiou' else 'a'} {what} from class {obj.__qualname__}: "
            f"calling it with no arguments raised {type(exc).__name__}: {exception_text(exc, limit=2_000)}"
        ) from exc


def _check_arity(fn: Callable[..., Any], params: tuple[str, ...], shown: str, *, harness_hint: bool) -> None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins and some C callables: trust them
        return
    try:
        sig.bind(*params)
    except TypeError:
        wanted = ", ".join(params)
        hint = ""
        if harness_hint and _binds(sig, ("instruction", "world")):
            hint = " (it takes a world: pass it as a harness, with --harness or run_eval)"
        raise TypeError(f"{shown}{sig} must accept ({wanted}){hint}") from None


def _binds(sig: inspect.Signature, params: tuple[str, ...]) -> bool:
    try:
        sig.bind(*params)
    except TypeError:
        return False
    return True


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 (an object whose __call__ is async)
    )


def _describe(obj: Any) -> str:
    if obj is None:
        return "None"
    name = getattr(obj, "__qualname__", None)
    if isinstance(name, str):
        return name
    return f"{type(obj).__qualname__} object"


def receives_context(obj: Any, *, harness: bool = False) -> bool:
    """Whether an agent (or harness) as given (object, class or function) takes a
    `CaseContext`, decided from its signature without making an instance."""
    params: tuple[str, ...] = ("instruction", "world") if harness else ("instruction",)
    run = getattr(obj, "run", None)
    if isinstance(obj, type):
        if not callable(run):
            return False
        if not isinstance(inspect.getattr_static(obj, "run", None), (staticmethod, classmethod)):
            params = ("self", *params)
        return takes_context(run, params)
    return takes_context(run if callable(run) else obj, params)
