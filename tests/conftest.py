"""Shared pytest configuration for the evaldsl test suite."""

from __future__ import annotations

import os
from typing import Any

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
    parser.addoption(
        "--run-frameworks",
        action="store_true",
        default=False,
        help="also run the tests marked frameworks (they need LangGraph etc.; or set EVALDSL_RUN_FRAMEWORKS=1)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ray are skipped unless asked for: they need the ray extra and start a cluster.
    Tests marked frameworks likewise: they need agent frameworks installed (.ci/run's own step)."""
    if not (config.getoption("--run-frameworks") or os.environ.get("EVALDSL_RUN_FRAMEWORKS") == "1"):
        skip_fw = pytest.mark.skip(reason="a framework test: run with --run-frameworks (pip install '.[frameworks]')")
        for item in items:
            if item.get_closest_marker("frameworks") is not None:
                item.add_marker(skip_fw)
    if config.getoption("--run-ray") or os.environ.get("EVALDSL_RUN_RAY") == "1":
        return
    skip = pytest.mark.skip(reason="a Ray test: run with --run-ray or EVALDSL_RUN_RAY=1 (pip install '.[ray]')")
    for item in items:
        if item.get_closest_marker("ray") is not None:
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """With EVALDSL_NO_SKIP=1 (as .ci/run sets it), a skipped test fails instead.

    The browser, TextMate, pre-commit and language-server tests skip when their
    tools are missing (chromium, `npm ci`, a wheelhouse, pygls), which is kind on
    a laptop and a silent gap in CI: there, where .ci/run provides every tool, a
    skip means a tool went missing, and it must fail. Only the Ray tests, which
    CI runs in a step of their own, may skip.
    """
    outcome = yield
    report = outcome.get_result()
    if (report.skipped and os.environ.get("EVALDSL_NO_SKIP") == "1" and not hasattr(report, "wasxfail")
            and item.get_closest_marker("ray") is None and item.get_closest_marker("frameworks") is None):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped, but EVALDSL_NO_SKIP=1 says every test must run here: {reason}"


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    """True when the run was started with --update-goldens."""
    return bool(request.config.getoption("--update-goldens"))


# The formatter's golden files are fixtures, not suites to run: keep any
# plugin that collects .evl files away from them.
collect_ignore_glob = ["golden/*/*.evl", "golden/*/*/*.evl"]
