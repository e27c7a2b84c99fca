"""The TextMate grammar (editors/vscode/syntaxes/evl.tmLanguage.json), tokenised by VS Code's own engine.

node runs `editors/vscode/test/tokenize.js` (vscode-textmate + vscode-oniguruma,
installed by `.ci/run` with `npm ci` in editors/vscode). Every shipped and test
`.evl` file is tokenised; every keyword of the language that stands outside a
comment, string or regex must carry a scope, and a few files' scopes are
kept as golden snapshots (`pytest tests/e2e/test_textmate.py --update-goldens`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "editors" / "vscode"
GOLDEN = ROOT / "tests" / "golden" / "textmate"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(
    NODE is None or not (EXTENSION / "node_modules" / "vscode-textmate").is_dir(),
    reason="needs node and `npm ci` in editors/vscode (as .ci/run does)",
)

TEXT_SCOPES = ("comment.", "string.quoted", "string.regexp")
FALLBACK = ["string.unquoted.evl"]
"""The scope of a word no rule claims (a bare-word value): a keyword must never end up there."""


def keywords() -> set[str]:
    grammar = (ROOT / "grammar" / "evl.lark").read_text(encoding="utf-8")
    return set(re.findall(r'"([a-z][a-z-]*)"', grammar)) | {"agent", "single-turn"}


def evl_files() -> list[Path]:
    skip = ("node_modules", ".venv", ".wheelhouse")
    return sorted(p for p in ROOT.rglob("*.evl") if not any(part in skip for part in p.parts))


def tokenize(files: list[Path]) -> dict[str, list[list[tuple[str, list[str]]]]]:
    done = subprocess.run([NODE, str(EXTENSION / "test" / "tokenize.js"), *map(str, files)],
                          capture_output=True, text=True, check=True, timeout=120)
    return json.loads(done.stdout)


def test_every_keyword_in_every_evl_file_has_a_scope() -> None:
    files = evl_files()
    assert len(files) > 20, "the shipped and test suites were not found"
    words = keywords()
    assert {"called", "expect", "case", "tool", "judge", "examples", "otherwise"} <= words
    unscoped: list[str] = []
    seen: set[str] = set()
    for file, lines in tokenize(files).items():
        for number, tokens in enumerate(lines, 1):
            for text, scopes in tokens:
                if any(s.startswith(TEXT_SCOPES) for s in scopes):
                    continue
                for word in re.findall(r"[A-Za-z_][A-Za-z0-9_-]*", text):
                    if word in words:
                        seen.add(word)
                        if not scopes or scopes == FALLBACK:
                            unscoped.append(f"{Path(file).relative_to(ROOT)}:{number}: `{word}`")
    assert unscoped == []
    assert len(seen) > 40, f"only {len(seen)} keywords seen: the files did not tokenise as expected"


SAMPLE = '''\
# a comment: called expect
suite "Sample"
use "tools.evl"
tags smoke, "two words"
timeout 30s
expect not called delete_repo

tool read_file "Read a file"
  param path: string "Where"
  param mode?: one of [r, w]
  when <path: matches /Cargo\\.toml$/i> returns """
    [package] {{ not_a_placeholder }}
    """
  otherwise fails "no such file"

case "adds {{a}}"
  prompt "what is {{a}} + 2?"
  repeat 3
  pass rate at least 0.6
  expect called calculator with <op: add, a: $a, b: 2.5e1> once
    then read_file
  expect final number is $sum within 0.01
  expect judge "polite" at least 0.7 or final text matches /^yes/
  expect first call read_file else first call list_files for 0.5
  examples
    | a | sum |
    | 2 | 4   |
'''


def test_scopes_of_a_sample_match_the_snapshot(update_goldens: bool, tmp_path: Path) -> None:
    sample = tmp_path / "sample.evl"
    sample.write_text(SAMPLE, encoding="utf-8")
    files = {"sample": sample, "tool_use": ROOT / "suites" / "baseline" / "tool_use.evl",
             "conversations": ROOT / "tests" / "golden" / "format" / "conversations.evl",  # v2 forms
             "precise": ROOT / "tests" / "golden" / "format" / "precise.evl"}  # v2: precise matching
    tokens = tokenize(list(files.values()))
    for name, path in files.items():
        rendered = render(tokens[str(path)])
        golden = GOLDEN / f"{name}.scopes.txt"
        if update_goldens:
            golden.write_text(rendered, encoding="utf-8")
        assert rendered == golden.read_text(encoding="utf-8"), f"{golden} differs (--update-goldens)"


def render(lines: list[list[tuple[str, list[str]]]]) -> str:
    out = []
    for number, tokens in enumerate(lines, 1):
        for text, scopes in tokens:
            if text.strip():
                out.append(f"{number:>3} {text!r:<28} {' '.join(scopes)}")
    return "\n".join(out) + "\n"
