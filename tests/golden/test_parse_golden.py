"""Golden files: `x.evl` -> `x.ast.json` (the AST) and `errors/x.evl` -> `x.err` (rendered errors).

Run `pytest tests/golden --update-goldens` after an intended change and
review the diff: a wording change in an error is then a reviewed change.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaldsl import EvlError, compile, parse

HERE = Path(__file__).parent
AST_CASES = sorted((HERE / "ast").glob("*.evl"))
ERROR_CASES = sorted((HERE / "errors").glob("*.evl"))


def _compare(path: Path, actual: str, update: bool) -> None:
    if update or not path.exists():
        path.write_text(actual, encoding="utf-8")
        if not update:
            pytest.fail(f"{path.name} did not exist; written now, review it and run again")
        return
    assert actual == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("source", AST_CASES, ids=lambda p: p.name)
def test_ast_golden(source: Path, update_goldens: bool) -> None:
    suite = parse(source.read_text(encoding="utf-8"), source.name)
    actual = json.dumps(suite.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"
    _compare(source.with_suffix(".ast.json"), actual, update_goldens)


@pytest.mark.parametrize("source", ERROR_CASES, ids=lambda p: p.name)
def test_error_golden(source: Path, update_goldens: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(HERE)  # relative paths in messages, as a user running from here sees them
    with pytest.raises(EvlError) as info:
        compile(source.read_text(encoding="utf-8"), f"errors/{source.name}")
    actual = info.value.render() + "\n\n--- short ---\n" + info.value.render(style="short") + "\n"
    _compare(source.with_suffix(".err"), actual, update_goldens)


def test_golden_sets_are_not_empty() -> None:
    assert len(AST_CASES) >= 3 and len(ERROR_CASES) >= 8
