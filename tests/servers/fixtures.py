"""pytest fixtures for the scripted servers (registered by tests/conftest.py).

Each fixture starts a fresh server for the test and stops it afterwards;
set ``server.reply`` in the test to script it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ._server import ScriptedServer


@pytest.fixture
def openai_server() -> Iterator[ScriptedServer]:
    """A scripted OpenAI-compatible server; its base URL ends in ``/v1``."""
    with ScriptedServer("openai") as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[ScriptedServer]:
    """A scripted Anthropic-compatible server (``/v1/messages``)."""
    with ScriptedServer("anthropic") as server:
        yield server
