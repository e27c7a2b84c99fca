"""The run record's models, built at the start of `evaldsl run` without pydantic's search for plugins.

pydantic looks for its plugins (the ``pydantic`` entry points of every installed distribution, read
through `importlib.metadata`) when it builds the first model's validator. In `evaldsl run` that is the
record's models, before the first case, and the search costs about 12 ms in a venv of 80 distributions
(more in a larger one): a twentieth of what a model run does before its first request beyond a bare
HTTP loop (bench/README.md, issue 28). A plugin instruments the validation of a program's own models;
evaldsl's record models need none, so the command line builds them with ``PYDANTIC_DISABLE_PLUGINS``
set (pydantic's own switch) and then puts the variable back as it was. pydantic keeps no answer from a
search it did not make: the first model that the agent's code builds later searches as usual and gets
its plugins. The command line's alone, and only while it has a single thread (the environment is the
process's); a library caller's models are left as they are.
"""

from __future__ import annotations

import os
import sys

_SWITCH = "PYDANTIC_DISABLE_PLUGINS"


def record_models_built() -> None:
    """Import the record's models (building their validators) without pydantic's search for plugins,
    unless they are imported already or the caller chose plugins itself (the variable set)."""
    if "evaldsl.run._record" in sys.modules or _SWITCH in os.environ:
        return
    os.environ[_SWITCH] = "1"
    try:
        from ..artifacts import RunArtifacts, ToolCall
        from ..run import _record  # noqa: F401 - built here, used by the run

        for model in (ToolCall, RunArtifacts):  # (built when first used otherwise: at an agent's first answer)
            model.model_rebuild()
    finally:
        del os.environ[_SWITCH]
