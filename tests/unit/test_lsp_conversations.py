"""The language server on the v2 forms: diagnostics, completion, hover, the outline's turns.

Driven through the server's plain functions (`_features`, `_outline`,
`check_diagnostics`); tests/e2e/test_lsp.py drives the real server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pygls")

from evaldsl.lsp import _features, _words  # noqa: E402
from evaldsl.lsp._outline import build_outline  # noqa: E402
from evaldsl.lsp._server import check_diagnostics  # noqa: E402

SUITE = '''\
suite "Shop"
user turns 4

tool lookup_order "Look an order up"
  param id: integer "The order's number"
  otherwise returns "delivered"

case "refund in two turns"
  expect called lookup_order once
  user "I want a refund for order 42"
    expect called lookup_order with <id: 42>
  user "Yes, the blue one"
    expect final text contains "refunded"
  given lookup_order returns "delivered" then "refunded"

case "simulated"
  simulated user """
    You are Mia.
    """
  expect no error
'''


def labels_at(text: str, line_text: str, path: str = "s.evl") -> set[str]:
    full = SUITE + line_text + "\n"
    outline = build_outline(full, path)
    line = full.split("\n").index(line_text)
    return {c.label for c in _features.completions(full, outline, line, len(line_text))}


def test_diagnostics_come_from_compile() -> None:
    text = SUITE.replace('  user "Yes, the blue one"', '  prompt "Yes"').replace(
        'given lookup_order', 'given lookup_ordr')
    found = {(d.code, d.span.line) for d in check_diagnostics(text, "s.evl")}
    assert ("E240", 12) in found and ("E242", 14) in found
    near = next(d for d in check_diagnostics(text, "s.evl") if d.code == "E242")
    assert near.suggestion == "lookup_order"
    assert check_diagnostics(SUITE, "s.evl") == []


def test_a_case_line_offers_the_conversation_statements() -> None:
    offered = labels_at(SUITE, "  ")
    assert {"user", "simulated user", "user turns", "given", "prompt", "expect"} <= offered
    assert "world" not in offered  # a suite statement: not offered inside a case


def test_a_tool_block_offers_none_of_them() -> None:
    text = "tool t\n  param a: string\n  "
    outline = build_outline(text, "s.evl")
    offered = {c.label for c in _features.completions(text, outline, 2, 2)}
    assert {"param", "when"} <= offered
    assert not {"user", "simulated user", "user turns", "given", "world"} & offered


def test_the_head_offers_world_and_user_turns_but_no_case_statement() -> None:
    outline = build_outline(SUITE, "s.evl")
    offered = {c.label for c in _features.completions(SUITE, outline, 1, 0)}
    assert {"world", "user turns"} <= offered
    assert not {"user", "given", "simulated user", "prompt"} & offered


def test_after_expect_world_is_a_predicate() -> None:
    assert "world" in labels_at(SUITE, "  expect ")
    assert "world" in labels_at(SUITE, "    expect not ")


def test_given_offers_the_tools_then_its_words() -> None:
    assert "lookup_order" in labels_at(SUITE, "  given ")
    assert labels_at(SUITE, "  given lookup_order ") == {"with", "returns", "fails"}
    assert labels_at(SUITE, '  given lookup_order returns "a" then ') == {"returns", "fails"}
    assert labels_at(SUITE, '  given lookup_order with <') == {"id"}  # the tool's params


def test_an_answer_sequence_in_a_tool_block_offers_the_verbs_after_then() -> None:
    text = 'tool t\n  when <a: 1> returns "x" then '
    outline = build_outline(text, "s.evl")
    got = {c.label for c in _features.completions(text, outline, 1, len(text.split("\n")[1]))}
    assert got == {"returns", "fails"}


def test_simulated_completes_to_user() -> None:
    assert labels_at(SUITE, "  simulated ") == {"user"}


@pytest.mark.parametrize("word", ["user", "simulated", "turns", "given", "world", "then", "fails", "returns"])
def test_each_v2_keyword_has_hover_text(word: str) -> None:
    lines = SUITE.split("\n") + ['  world "w.py:W"', "  expect world <a: 1>", '  given x fails "down"']
    text = "\n".join(lines)
    line = next(i for i, t in enumerate(lines) if f"{word} " in t or t.strip().startswith(word))
    hover = _features.hover(text, build_outline(text, "s.evl"), line, lines[line].index(word) + 1)
    assert hover and hover == _words.MEANINGS[word]


def test_hover_on_the_tool_of_a_given_line_shows_its_declaration() -> None:
    lines = SUITE.split("\n")
    line = next(i for i, t in enumerate(lines) if t.strip().startswith("given"))
    hover = _features.hover(SUITE, build_outline(SUITE, "s.evl"), line, lines[line].index("lookup_order") + 2)
    assert hover is not None and 'tool lookup_order "Look an order up"' in hover
    found = _features.definition(SUITE, build_outline(SUITE, "s.evl"), line, lines[line].index("lookup_order"))
    assert found is not None and found.span.line == 4


def test_the_outline_knows_each_cases_turns_and_extent() -> None:
    outline = build_outline(SUITE, "s.evl")
    refund, simulated = outline.cases
    assert [(m, s.line) for m, s in refund.turns] == [("I want a refund for order 42", 10), ("Yes, the blue one", 12)]
    assert refund.end_line == 14
    assert simulated.turns == () and simulated.end_line == 20
    assert simulated.simulated is not None and simulated.simulated[0] == "You are Mia." and refund.simulated is None


def test_the_outline_of_a_half_typed_conversation_keeps_its_turns(tmp_path: Path) -> None:
    text = SUITE.replace('    expect final text contains "refunded"', "    expect final text contains")
    outline = build_outline(text, str(tmp_path / "s.evl"))
    assert [m for m, _ in outline.cases[0].turns] == ["I want a refund for order 42", "Yes, the blue one"]


def test_a_then_line_continuing_an_answer_sequence_offers_the_verbs() -> None:
    text = SUITE + '  given lookup_order returns "a"\n    then "b"\n    then '
    outline = build_outline(text, "s.evl")
    last = text.split("\n")
    got = {c.label for c in _features.completions(text, outline, len(last) - 1, len(last[-1]))}
    assert got == {"returns", "fails"}
    chain = SUITE + "  expect called lookup_order\n    then "
    lines = chain.split("\n")
    offered = {c.label for c in _features.completions(chain, build_outline(chain, "s.evl"), len(lines) - 1,
                                                        len(lines[-1]))}
    assert "lookup_order" in offered and "returns" not in offered  # a call chain's `then`: tools
