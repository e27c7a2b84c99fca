"""Shared pytest configuration for the evaldsl test suite."""

from __future__ import annotations

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


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    """True when the run was started with --update-goldens."""
    return bool(request.config.getoption("--update-goldens"))


# The formatter's golden files are fixtures, not suites to run: keep any
# plugin that collects .evl files away from them.
collect_ignore_glob = ["golden/*/*.evl", "golden/*/*/*.evl"]
