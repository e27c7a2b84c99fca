"""docs/models-backends.md is true: its Python runs against a loopback server, its tables match the code."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from _docblocks import fenced_blocks
from servers import ScriptedServer, text

from evaldsl.models._anthropic import API_VERSION, DEFAULT_MAX_TOKENS
from evaldsl.models._backends import PROVIDERS
from evaldsl.models._retry import RETRY_STATUSES, RetryPolicy

DOC = Path(__file__).resolve().parents[2] / "docs" / "models-backends.md"
PAGE = DOC.read_text(encoding="utf-8")


def test_python_example_runs(
    openai_server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (block,) = [b for b in fenced_blocks(DOC) if b.kind == "python"]
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.reply = lambda request, index: text("Sunny.")
    for cached in ("False", "True"):
        exec(compile(block.text, block.id, "exec"), {"__name__": "__doc_example__"})
        assert capsys.readouterr().out.split() == ["Sunny.", "[]", "15", cached]
    assert len(openai_server.requests) == 1 and openai_server.requests[0].json["temperature"] == 0


def test_retry_defaults_table_matches_the_policy() -> None:
    rows = dict(re.findall(r"^\| `(\w+)` \| ([\d.]+) \|", PAGE, flags=re.M))
    defaults = {f.name: f.default for f in dataclasses.fields(RetryPolicy)}
    assert {name: float(value) for name, value in rows.items()} == {k: float(v) for k, v in defaults.items()}


def test_retried_statuses_match() -> None:
    row = next(line for line in PAGE.splitlines() if line.startswith("| HTTP `429`"))
    assert {int(code) for code in re.findall(r"`(\d{3})`", row)} == set(RETRY_STATUSES)


def test_providers_and_constants_are_the_codes() -> None:
    assert re.findall(r"^\| `(\w+)` \| `POST", PAGE, flags=re.M) == list(PROVIDERS)
    assert f"anthropic-version: {API_VERSION}" in PAGE and f"{DEFAULT_MAX_TOKENS} unless" in PAGE
