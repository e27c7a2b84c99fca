"""The run's fixed places and defaults, apart from the request's dataclasses so that the CLI's parser
(built by every command) reads them without paying for those."""

from __future__ import annotations

from pathlib import Path

LAST_RECORD = Path(".evaldsl") / "last.json"
"""Where every run leaves its record, relative to the current directory."""
LAST_FAILED = Path(".evaldsl") / "lastfailed.json"
"""The ids of the cases that failed when they last ran, for `--lf` (see `report._lastfailed`)."""

DEFAULT_CONCURRENCY = 8
"""The runner's default (`run._scheduler.DEFAULT_CONCURRENCY`, kept equal by a test); repeated here so that
the CLI's parser does not import the runner."""
