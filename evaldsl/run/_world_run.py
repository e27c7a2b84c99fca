"""One run's world instance (LANGUAGE.md 14): made, read, closed once.

Each run gets a fresh instance of the world class (``Shop(setup)`` when the
case has a `setup`, ``Shop()`` otherwise), made on the thread that runs
the agent (`run._conversation` plays every run of a case with a world).
The run's `CaseContext` answers through a `ToolAnswerer` holding that
instance, so the model loop and a Python agent's ``ctx.call`` reach the
same methods. After each turn the world's state (``state()`` or its public
fields, as JSON) is read for `expect world`; ``close()`` is called once,
whatever happened.

Every failure stays in the run: a constructor that raises makes that run an
error whose message names the class, the exception and the setup value; a
``state()`` or ``close()`` that raises likewise (kind ``world_error``).
"""

from __future__ import annotations

import threading
from typing import Any

from ..compile._model import CompiledCase
from ..compile._world import NO_SETUP, aclose_world, astate_of, close_world, state_of


class WorldError(Exception):
    """The world itself failed (its constructor, ``state()`` or ``close()``): the run is an error."""

    error_kind = "world_error"


class RunWorld:
    """One run's world instance: made, read, closed once (from whichever thread gets there first)."""

    def __init__(self, case: CompiledCase) -> None:
        self.case = case
        self.world = case.world
        self.instance: Any = None
        self._closed = False
        self._lock = threading.Lock()
        self.close_error: WorldError | None = None

    def open(self) -> Any:
        """The run's instance (`WorldError` when the constructor raises)."""
        setup = NO_SETUP if self.case.setup is None else self.case.setup
        try:
            self.instance = self.world.new(setup)
        except Exception as exc:
            shown = "" if setup is NO_SETUP else f" (setup: {_shown(setup)})"
            called = f"{self.world.name}()" if setup is NO_SETUP else f"{self.world.name}(setup)"
            raise WorldError(f"the world {called} raised {type(exc).__name__}: {exc}{shown}") from exc
        return self.instance

    def state(self) -> Any:
        try:
            return state_of(self.instance)
        except Exception as exc:
            raise WorldError(f"reading the world's state raised {type(exc).__name__}: {exc}") from exc

    async def astate(self) -> Any:
        try:
            return await astate_of(self.instance)
        except Exception as exc:
            raise WorldError(f"reading the world's state raised {type(exc).__name__}: {exc}") from exc

    def _claim(self) -> bool:
        with self._lock:
            if self._closed or self.instance is None:
                return False
            self._closed = True
            return True

    def close(self) -> None:
        """Call ``close()`` once; what it raises is kept in `close_error`."""
        if self._claim():
            try:
                close_world(self.instance)
            except Exception as exc:
                self.close_error = WorldError(f"the world's close() raised {type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        if self._claim():
            try:
                await aclose_world(self.instance)
            except Exception as exc:
                self.close_error = WorldError(f"the world's close() raised {type(exc).__name__}: {exc}")


def _shown(value: Any) -> str:
    import json

    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 500 else text[:500] + "..."
