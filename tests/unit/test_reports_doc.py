"""docs/reports.md stays true: every command it shows parses, and the numbers it quotes are the code's."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from _docblocks import fenced_blocks

from evaldsl.cli import build_parser
from evaldsl.report import _compare, _junit, _markdown, _upload

DOC = Path(__file__).resolve().parents[2] / "docs" / "reports.md"
TEXT = DOC.read_text(encoding="utf-8")
COMMANDS = [
    (f"reports.md:{block.line}", line)
    for block in fenced_blocks(DOC) if block.kind in ("sh", "console")
    for line in block.text.splitlines() if line.startswith("evaldsl ")
]


@pytest.mark.parametrize(("where", "line"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_every_command_shown_parses(where: str, line: str) -> None:
    args = build_parser().parse_args(shlex.split(line)[1:])
    assert args.func is not None


def test_the_quoted_constants_are_the_codes() -> None:
    assert f"{_compare.RESAMPLES:,} resamples" in TEXT and f"seeded with {_compare.SEED}" in TEXT
    assert f"{_upload.ATTEMPTS}\nattempts" in TEXT or f"{_upload.ATTEMPTS} attempts" in TEXT
    assert f"Each attempt has {_upload.TIMEOUT_S:g} s" in TEXT
    assert f"more\nthan {_upload.MAX_DELAY:g} s" in TEXT
    assert f"at most {_markdown.MAX_CASES}\ncases and {_markdown.MAX_EXPECTATIONS} expectations" in TEXT
    assert f"cut to {_markdown.MAX_DETAIL} characters" in TEXT
    assert f"longer than {_junit.MAX_TEXT:,} characters" in TEXT


def test_the_quoted_p_values_are_right() -> None:
    assert re.search(r"8 fixed against 1 regressed gives\s+p = 2 · \(1 \+ 9\) / 512 = 0\.039", TEXT)
    assert round(_compare.mcnemar_p(1, 8), 3) == 0.039 and _compare.mcnemar_p(0, 5) == 0.0625


def test_the_cli_repeats_the_library_defaults() -> None:
    from evaldsl.cli import _compare as cli_compare
    from evaldsl.cli import _upload as cli_upload

    assert (cli_compare.RESAMPLES, cli_compare.SEED) == (_compare.RESAMPLES, _compare.SEED)
    assert (cli_upload.ATTEMPTS, cli_upload.TIMEOUT_S, cli_upload.TOKEN_ENV) == (
        _upload.ATTEMPTS, _upload.TIMEOUT_S, _upload.TOKEN_ENV)


def test_building_the_parser_imports_none_of_these_reports() -> None:
    import subprocess
    import sys

    code = ("import sys; from evaldsl.cli import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.startswith(('evaldsl.report._compare', 'evaldsl.report._upload', "
            "'evaldsl.report._junit', 'evaldsl.report._markdown', 'evaldsl.run._rescore', 'httpx'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
