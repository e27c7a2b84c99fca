"""The language server's word lists: every keyword of the grammar is explained and offered."""

from __future__ import annotations

import re
from pathlib import Path

from evaldsl.lsp import _words

GRAMMAR = Path(__file__).resolve().parents[2] / "grammar" / "evl.lark"


def test_every_keyword_has_a_meaning() -> None:
    keywords = set(re.findall(r'"([a-z][a-z-]*)"', GRAMMAR.read_text(encoding="utf-8")))
    assert len(keywords) > 60
    assert sorted(keywords - set(_words.MEANINGS)) == []


def test_offered_statements_and_predicates_are_explained() -> None:
    offered = (_words.HEAD_STATEMENTS + _words.CASE_STATEMENTS + _words.TOOL_STATEMENTS + _words.PREDICATES
               + _words.AFTER_FINAL + _words.AFTER_FINAL_TEXT + _words.AFTER_FINAL_NUMBER + _words.MODES)
    assert sorted({w.split()[0] for w in offered} - set(_words.MEANINGS)) == []
