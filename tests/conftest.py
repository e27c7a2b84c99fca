"""Shared pytest configuration for the evaldsl test suite."""

from __future__ import annotations

import os

import pytest

# The scripted model servers (tests/servers/) as fixtures for every test.
pytest_plugins = ["servers.fixtures"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="rewrite golden files from the current output instead of comparing (review the diff)",
    )
    parser.addoption(
        "--run-ray",
        action="store_true",
        default=False,
        help="also run the tests marked ray (they start a local Ray instance; or set EVALDSL_RUN_RAY=1)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ray are skipped unless asked for: they need the ray extra and start a cluster."""
    if config.getoption("--run-ray") or os.environ.get("EVALDSL_RUN_RAY") == "1":
        return
    skip = pytest.mark.skip(reason="a Ray test: run with --run-ray or EVALDSL_RUN_RAY=1 (pip install '.[ray]')")
    for item in items:
        if item.get_closest_marker("ray") is not None:
            item.add_marker(skip)


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    """True when the run was started with --update-goldens."""
    return bool(request.config.getoption("--update-goldens"))


# The formatter's golden files are fixtures, not suites to run: keep any
# plugin that collects .evl files away from them.
collect_ignore_glob = ["golden/*/*.evl", "golden/*/*/*.evl"]
