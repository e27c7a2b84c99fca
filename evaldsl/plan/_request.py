"""What a run is asked to do, as typed values: the request the CLI (or any tool) builds and hands on.

The `evaldsl run` command turns its command line into a `RunRequest`; the
library never reads an `argparse.Namespace` or `sys.argv` (the command line a
record keeps is `RunRequest.argv`, given by the caller). Everything here is a
frozen dataclass, so that a request can be shared, compared and changed only
by `dataclasses.replace` (as `--resume DIR` does, once a model).

`_defaults` holds the constants the CLI's parser reads (this module's dataclasses cost a few
milliseconds to make, which a command that does not run should not pay).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ._defaults import DEFAULT_CONCURRENCY


class PlanUsage(Exception):
    """A problem with what was asked for (a bad option, an agent that cannot be imported, suites that do not
    compile, a record that cannot be resumed or written): its message alone says it. The CLI prints it and
    exits 4."""


class NothingSelected(Exception):
    """No case is left to run once the selection is applied: the message says why. The CLI exits 5."""


@dataclass(frozen=True)
class ModelOptions:
    """The model run's, the judge's and the simulated user's options (`run` and `rescore` share them)."""

    models: tuple[str, ...] = ()
    """``--model`` values, ``provider:model``: one run each."""
    base_url: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    judge: str | None = None
    judge_base_url: str | None = None
    judge_template: str | None = None
    user_model: str | None = None
    user_base_url: str | None = None
    user_template: str | None = None
    cache: bool = True
    """Keep model replies on disk (``--no-cache`` turns it off)."""
    cache_dir: str | None = None


@dataclass(frozen=True)
class Selection:
    """Which of the loaded cases run: ``-k``, ``-m``, ``--tag`` (any of them) and ``--lf``."""

    keyword: str | None = None
    markers: str | None = None
    tags: tuple[str, ...] = ()
    last_failed: bool = False


@dataclass(frozen=True)
class Outputs:
    """Where the run's record and reports go (each None when not asked for)."""

    json: str | None = None
    out: str | None = None
    """A folder: a new ``<model>_<timestamp>.json`` record a run."""
    html: str | None = None
    junit_xml: str | None = None
    markdown: str | None = None
    upload: str | None = None


@dataclass(frozen=True)
class Display:
    """How much the run says on the terminal: ``-q``, ``-v`` (a count) and ``--tb``."""

    quiet: bool = False
    verbose: int = 0
    tb: Literal["long", "short", "line", "no"] = "short"


@dataclass(frozen=True)
class RunRequest:
    """One `evaldsl run`: what it runs, against what, and where its results go."""

    paths: tuple[str, ...]
    """.evl files or folders of them."""
    agent: str | None = None
    """``MODULE:ATTR`` of an agent (exactly one of agent, harness, agent_cmd, agent_url or a model)."""
    harness: str | None = None
    agent_cmd: str | None = None
    agent_url: str | None = None
    upstream: str | None = None
    """Where --agent-cmd's recording model proxy forwards."""
    models: ModelOptions = field(default_factory=ModelOptions)
    selection: Selection = field(default_factory=Selection)
    concurrency: int = DEFAULT_CONCURRENCY
    exitfirst: bool = False
    outputs: Outputs = field(default_factory=Outputs)
    resume: str | None = None
    """A record to finish, or the --out folder of an earlier run (its latest unfinished record of this agent)."""
    shard: Any = None
    """A `run._shard.Shard`, or None for every selected case."""
    executor: str = "local"
    """``local`` or ``ray``."""
    root: str | None = None
    """Refuse `use` and `examples from` paths outside this folder."""
    suite_cache: bool = True
    suite_cache_dir: str | None = None
    model_name: str | None = None
    """The agent's name in the record (default: its own)."""
    display: Display = field(default_factory=Display)
    argv: tuple[str, ...] = ()
    """The command's words after ``evaldsl`` (for the record's ``meta.command`` and the resume hint)."""


def recorded_command(argv: Sequence[str]) -> str:
    """``evaldsl ARGS...`` for a record's ``meta.command``, every URL without user, password, query or fragment.

    A record is shared and uploaded; a token written into an `--upload` or `--base-url` URL must not
    travel with it (the same rule as every message that shows a URL).
    """
    import shlex

    from ..report._upload import shown_url

    def clean(arg: str) -> str:
        if "://" not in arg:
            return arg
        option, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        return f"{option}{eq}{shown_url(value)}"

    return shlex.join(["evaldsl", *map(clean, argv)])
