"""The run plan: what `evaldsl run` (or any tool) asks for, planned and carried out by the library.

A caller builds a `RunRequest` (typed, frozen: paths, agent, models, selection, outputs, resume,
shard, executor...), then either `run_request(request)` (plan and run it, once or once per model,
and end it: record, ``.evaldsl/last.json``, ``lastfailed.json``, JUnit, Markdown, upload, dashboard)
or `build_plan(request)` for one `RunPlan` to look at or hand to `run_plan`. What cannot run raises
`PlanUsage` (or `NothingSelected`) with one message; the run's end is an `Outcome`. The CLI's `run`
command is the request made from its arguments and the outcome made an exit code, nothing more.

Modules, by meaning: `_request` (the request; `_defaults`, its constants, for the parser), `_paths` (the
.evl files paths name), `_models` (model, judge, simulated user, cache), `_inputs` (agent, suites,
selection, --lf, the record resumed), `_resume` (finishing an interrupted run), `_plan` (`RunPlan`),
`_build` (`build_plan`), `_end` (the run's end and its outputs), `_drive` (`run_plan`, `run_request`).
Nothing is imported with this package; each name when first used (`evaldsl check` stays lean).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._build import build_plan
    from ._defaults import LAST_FAILED, LAST_RECORD
    from ._drive import Outcome, PlanDone, run_plan, run_request
    from ._models import ModelSetup, model_setup
    from ._plan import RunPlan
    from ._request import (
        Display,
        ModelOptions,
        NothingSelected,
        Outputs,
        PlanUsage,
        RunRequest,
        Selection,
        recorded_command,
    )

_LAZY = {
    "LAST_FAILED": "._defaults", "LAST_RECORD": "._defaults",
    **dict.fromkeys(("Display", "ModelOptions", "NothingSelected", "Outputs",
                     "PlanUsage", "RunRequest", "Selection", "recorded_command"), "._request"),
    "build_plan": "._build", "Outcome": "._drive", "PlanDone": "._drive", "run_plan": "._drive",
    "run_request": "._drive", "ModelSetup": "._models", "model_setup": "._models", "RunPlan": "._plan",
}

__all__ = [
    "LAST_FAILED", "LAST_RECORD", "Display", "ModelOptions", "ModelSetup", "NothingSelected", "Outcome", "Outputs",
    "PlanDone", "PlanUsage", "RunPlan", "RunRequest", "Selection", "build_plan", "model_setup", "recorded_command",
    "run_plan", "run_request",
]


def __getattr__(name: str) -> Any:
    """Every name imported on first use: `evaldsl check` reads `_paths` alone and pays for nothing else
    (making the request's dataclasses costs a few milliseconds)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module, __name__), name)
