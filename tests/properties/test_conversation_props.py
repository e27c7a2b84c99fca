"""Properties of the v2 language side: answer sequences and the scope of a conversation's expectations.

- A line with an answer sequence answers the n-th call it answers with its
  n-th step and every later call with its last; each line counts only its
  own calls; a fresh answerer (a new run, a repeat) starts again.
- An `expect` line lands in the turn of the nearest `user` line above it,
  whatever the other lines (settings, `given`, `setup`, comments) between.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import evaldsl
from evaldsl.compile._answerer import ToolAnswerer
from evaldsl.compile._model import ToolAnswer

TOOLS = "tool a\n  param x: integer\ntool b\n"
STEP = st.tuples(st.booleans(), st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=8))
STEPS = st.lists(STEP, min_size=1, max_size=4)


def sequence(steps: list[tuple[bool, str]]) -> str:
    words = [("returns" if ok else "fails") + " " + json.dumps(text) for ok, text in steps]
    return " then ".join(words)


def answerer_for(case_lines: str) -> tuple[ToolAnswerer, object]:
    case = evaldsl.compile(TOOLS + 'case "c"\n  prompt "p"\n' + case_lines + "  expect no error\n", "t.evl").cases[0]
    return ToolAnswerer.for_case(case), case


@settings(max_examples=60, deadline=None)
@given(STEPS, st.integers(0, 8))
def test_the_nth_call_gets_the_nth_step_and_later_calls_the_last(steps: list[tuple[bool, str]], calls: int) -> None:
    answerer, case = answerer_for(f"  given b {sequence(steps)}\n")
    got = [answerer.answer("b", {}) for _ in range(calls)]
    want = [ToolAnswer(*steps[min(i, len(steps) - 1)]) for i in range(calls)]
    assert got == want
    fresh = ToolAnswerer.for_case(case)  # the next repeat
    assert fresh.answer("b", {}) == ToolAnswer(*steps[0])


@settings(max_examples=60, deadline=None)
@given(STEPS, STEPS, st.lists(st.sampled_from([1, 2, 3]), max_size=12))
def test_each_line_counts_only_the_calls_it_answers(first: list[tuple[bool, str]], second: list[tuple[bool, str]],
                                                    order: list[int]) -> None:
    answerer, _ = answerer_for(f"  given a with <x: 1> {sequence(first)}\n  given a {sequence(second)}\n")
    seen = {1: 0, 2: 0}
    for which in order:
        if which == 3:  # a call with bad arguments is answered by no line, and counts for none
            assert not answerer.answer("a", {"x": "one"}).ok
            continue
        steps = first if which == 1 else second
        got = answerer.answer("a", {"x": 1 if which == 1 else 2})
        assert got == ToolAnswer(*steps[min(seen[which], len(steps) - 1)])
        seen[which] += 1


@settings(max_examples=40, deadline=None)
@given(STEPS, st.integers(1, 5))
def test_sequences_on_when_and_otherwise_count_the_same_way(steps: list[tuple[bool, str]], calls: int) -> None:
    tools = f"tool c\n  param x: integer\n  when <x: 1> {sequence(steps)}\n  otherwise {sequence(steps[::-1])}\n"
    case = evaldsl.compile(tools + 'case "k"\n  prompt "p"\n  expect no error\n', "t.evl").cases[0]
    answerer = ToolAnswerer.for_case(case)
    rev = steps[::-1]
    for i in range(calls):
        assert answerer.answer("c", {"x": 1}) == ToolAnswer(*steps[min(i, len(steps) - 1)])
        assert answerer.answer("c", {"x": 2}) == ToolAnswer(*rev[min(i, len(rev) - 1)])


OTHER = ["  repeat 2", "  timeout 5s", '  given b returns "x"', "  setup <k: 1>", "  # a comment", "  user turns 3"]
LINE = st.one_of(st.just("user"), st.just("expect"), st.sampled_from(OTHER))


@settings(max_examples=80, deadline=None)
@given(st.lists(LINE, max_size=14), st.sampled_from(["", "  ", "    "]))
def test_an_expectation_lands_in_the_turn_of_the_user_line_above_it(lines: list[str], indent: str) -> None:
    text, want_whole, want_turns, users, n = 'case "c"\n  prompt "p"\n', [], [], 0, 0
    if any(line == "user" for line in lines):
        text = 'case "c"\n'
    body = []
    for line in lines:
        if line == "user":
            users += 1
            body.append(f'  user "message {users}"')
            want_turns.append([])
        elif line == "expect":
            n += 1
            body.append(f"{indent}expect tokens at most {n}")
            (want_turns[-1] if want_turns else want_whole).append(f"tokens at most {n}")
        else:
            body.append(line)
    if n == 0:
        body.append("  expect no error")
        (want_turns[-1] if want_turns else want_whole).append("no error")
    case = evaldsl.compile(TOOLS + text + "\n".join(body) + "\n", "t.evl").cases[0]
    assert [e.label for e in case.expectations] == want_whole
    assert [[e.label for e in t.expectations] for t in case.turns] == want_turns
    assert [t.message for t in case.turns] == [f"message {i + 1}" for i in range(users)]
    assert case.prompt == ("message 1" if users else "p")
