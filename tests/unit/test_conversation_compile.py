"""Conversations compiled (LANGUAGE.md 11-12): scope by position, the prompt, templates in user strings.

An `expect` under a `user` line lands in that `CompiledTurn`; one above the
first `user` line, after a `simulated user` line, or in the suite's head in
`CompiledCase.expectations` (the whole conversation). Settings, `setup` and
`given` mean the same wherever they stand in the case.
"""

from __future__ import annotations

import evaldsl
from evaldsl.artifacts import RunArtifacts, ToolCall
from evaldsl.compile._model import CompiledCase, EvalContext

TOOLS = """\
tool lookup_order
  param id: integer
tool refund_order
  param id: integer
"""


def one(text: str) -> CompiledCase:
    cases = evaldsl.compile(TOOLS + text, "t.evl").cases
    assert len(cases) == 1
    return cases[0]


def labels(exps: tuple) -> list[str]:
    return [e.label for e in exps]


def test_expectations_land_in_the_turn_of_the_user_line_above_them() -> None:
    case = one('''
expect not called delete_everything

case "refund"
  expect called refund_order once
  user "I want a refund for order 42"
    expect called lookup_order with <id: 42>
    expect final text contains "blue"
  user "Yes, the blue one"
    expect called refund_order with <id: 42>
''')
    assert case.is_conversation and case.simulated_user is None
    assert [t.message for t in case.turns] == ["I want a refund for order 42", "Yes, the blue one"]
    assert [labels(t.expectations) for t in case.turns] == [
        ['called lookup_order with <id: 42>', 'final text contains "blue"'],
        ["called refund_order with <id: 42>"],
    ]
    assert labels(case.expectations) == ["not called delete_everything", "called refund_order once"]
    assert [e.from_suite for e in case.expectations] == [True, False]
    assert [t.line for t in case.turns] == [10, 13]


def test_indentation_carries_no_meaning_only_position() -> None:
    flat = one('case "c"\nuser "a"\nexpect called lookup_order\nuser "b"\nexpect called refund_order\n')
    assert [labels(t.expectations) for t in flat.turns] == [["called lookup_order"], ["called refund_order"]]
    assert flat.expectations == ()


def test_after_a_simulated_user_expectations_judge_the_whole() -> None:
    case = one('''
case "scripted then simulated"
  user "Hi, order 42 please"
    expect called lookup_order
  simulated user "You want order 42 refunded."
  expect called refund_order
''')
    assert case.simulated_user == "You want order 42 refunded."
    assert [labels(t.expectations) for t in case.turns] == [["called lookup_order"]]
    assert labels(case.expectations) == ["called refund_order"]
    assert case.prompt == "Hi, order 42 please"


def test_a_simulated_user_alone_opens_the_conversation() -> None:
    case = one('case "sim"\n  simulated user """\n    You are Mia.\n    You want a refund.\n    """\n'
               '  user turns 8\n  expect called refund_order\n')
    assert case.turns == () and case.is_conversation
    assert case.simulated_user == "You are Mia.\nYou want a refund."
    assert case.prompt == ""
    assert case.settings.user_turns == 8
    assert labels(case.expectations) == ["called refund_order"]


def test_user_turns_is_a_setting_of_suite_and_case() -> None:
    suite = evaldsl.compile(TOOLS + 'user turns 3\ncase "a"\n  simulated user "x"\n  expect no error\n'
                            'case "b"\n  simulated user "y"\n  user turns 100\n  expect no error\n', "t.evl")
    assert [c.settings.user_turns for c in suite.cases] == [3, 100]
    plain = evaldsl.compile('case "c"\n  prompt "p"\n  expect no error\n', "t.evl")
    assert plain.cases[0].settings.user_turns == 10  # the default


def test_settings_setup_and_given_mean_the_same_anywhere_in_the_case() -> None:
    early = one('''
case "c"
  repeat 3
  timeout 5s
  setup <orders: [42]>
  given lookup_order returns "shipped"
  user "a"
    expect called lookup_order
  user "b"
''')
    late = one('''
case "c"
  user "a"
  repeat 3
    expect called lookup_order
  user "b"
  setup <orders: [42]>
  timeout 5s
  given lookup_order returns "shipped"
''')
    assert early.settings == late.settings
    assert early.setup == late.setup == {"orders": [42]}
    assert [g.steps for g in early.given] == [g.steps for g in late.given]
    assert [labels(t.expectations) for t in early.turns] == [labels(t.expectations) for t in late.turns]


def test_prompt_sets_the_prompt_and_has_no_turns() -> None:
    case = one('case "c"\n  prompt "what is 2+2?"\n  expect called lookup_order\n')
    assert case.prompt == "what is 2+2?"
    assert case.turns == () and not case.is_conversation
    assert labels(case.expectations) == ["called lookup_order"]


def test_a_conversations_prompt_is_its_first_user_message() -> None:
    case = one('case "c"\n  user "first"\n  user "second"\n  expect no error\n')
    assert case.prompt == "first"


def test_templates_and_placeholders_fill_user_and_simulated_user_strings() -> None:
    suite = evaldsl.compile(TOOLS + '''
case "refund {{ id }}"
  user "Refund order {{ id }}"
    expect called refund_order with <id: $id>
  user "The {{ color }} one"
  simulated user "You are {{ name }}; your order is {{ id }}."
  expect no error
  examples
    | id | color | name |
    | 42 | blue  | Mia  |
    | 7  | red   | Bob  |
''', "t.evl")
    first, second = suite.cases
    assert [t.message for t in first.turns] == ["Refund order 42", "The blue one"]
    assert [t.message for t in second.turns] == ["Refund order 7", "The red one"]
    assert second.simulated_user == "You are Bob; your order is 7."
    assert second.prompt == "Refund order 7"
    exp = second.turns[0].expectations[0]
    call = ToolCall(name="refund_order", args={"id": 7})
    assert exp(EvalContext(RunArtifacts(tool_calls=[call]))).passed
    assert not exp(EvalContext(RunArtifacts(tool_calls=[ToolCall(name="refund_order", args={"id": 42})]))).passed


def test_a_turns_judge_makes_the_case_need_a_judge() -> None:
    case = one('case "c"\n  user "a"\n    expect judge "polite"\n  user "b"\n')
    assert case.expectations == () and case.needs_judge


def test_a_conversation_with_only_turn_expectations_has_expectations() -> None:
    case = one('case "c"\n  user "a"\n    expect no error\n')
    assert labels(case.turns[0].expectations) == ["no error"]


def test_a_placeholder_as_the_whole_text_of_prompt_user_and_simulated_user() -> None:
    suite = evaldsl.compile('''
case "asks {{ q }}"
  prompt $q
  expect no error
  examples
    | q  |
    | hi |

case "talks {{ q }}"
  user $q
  simulated user $who
  expect no error
  examples
    | q       | who         |
    | "hello" | "You, Mia." |
''', "t.evl")
    asks, talks = suite.cases
    assert asks.prompt == "hi"
    assert [t.message for t in talks.turns] == ["hello"] and talks.simulated_user == "You, Mia."
    number = evaldsl.compile('case "c"\n  user $n\n  expect no error\n  examples\n    | n |\n    | 3 |\n', "t.evl")
    assert number.cases[0].turns[0].message == "3"  # a cell in a text position is its text, as in `prompt`


def test_cases_made_from_an_examples_file_keep_their_turns_and_given_lines(tmp_path) -> None:
    from evaldsl.compile._model import outlined

    (tmp_path / "rows.csv").write_text("id,color\n42,blue\n7,red\n", encoding="utf-8")
    text = TOOLS + '''case "refund {{ id }}"
  user "Refund order {{ id }}"
    expect called refund_order with <id: $id>
  user "the {{ color }} one"
  given refund_order with <id: $id> returns "ok {{ color }}"
  examples from "rows.csv"
'''
    suite = evaldsl.compile(text, str(tmp_path / "t.evl"))
    made = [(c.name, [t.message for t in c.turns], [labels(t.expectations) for t in c.turns],
             [g.steps[0].text for g in c.given]) for c in suite.cases]
    assert made == [
        ("refund 42", ["Refund order 42", "the blue one"], [["called refund_order with <id: 42>"], []], ["ok blue"]),
        ("refund 7", ["Refund order 7", "the red one"], [["called refund_order with <id: 7>"], []], ["ok red"]),
    ]
    assert [[labels(t.expectations) for t in c.turns] for c in outlined(suite.cases)] == [m[2] for m in made]
