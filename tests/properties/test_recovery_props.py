"""Hypothesis: broken lines among valid ones give one error each, at their line, and lose no valid statement."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.syntax._parser import parse_with_diagnostics
from evaldsl.syntax._recovery import MAX_ERRORS

GOOD = [
    '  prompt "p"',
    "  expect no error",
    "  expect called a with <x: 1, y: [1, 2]>",
    "  expect called a with <\n    x: 1,\n    # a comment inside\n    y: 2>",
    "  expect called a\n\n    # between\n    and called b",
    '  expect final text contains """\n    two\n    lines\n    """',
    "  repeat 2",
    "  expect called a then b or no tool calls\n    else called c for 0.5",
]
BAD = [  # each breaks its own line only
    "  expect caled x",
    "  expect final number is",
    "  prompt ]",
    "  expect called x with <a: 1 2>",
    "  bogus words here",
    '  expect final text is "no closing quote',
    "  expect called x with <a: 1>>",
]

lines = st.lists(st.tuples(st.sampled_from(GOOD), st.booleans(), st.sampled_from(BAD)), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(lines)
def test_each_broken_line_is_one_error_at_its_line_and_the_rest_is_kept(picks: list) -> None:
    valid, broken, bad_lines = ['case "c"'], ['case "c"'], []
    for good, insert, bad in picks:
        valid.append(good)
        if insert:
            bad_lines.append(sum(part.count("\n") + 1 for part in broken) + 1)
            broken.append(bad)
        broken.append(good)
    clean, clean_diags = parse_with_diagnostics("\n".join(valid) + "\n")
    assert not [d for d in clean_diags if d.severity == "error"]
    suite, diags = parse_with_diagnostics("\n".join(broken) + "\n")
    errors = [d for d in diags if d.severity == "error"]
    assert sorted(d.span.line for d in errors if d.span) == bad_lines[:MAX_ERRORS]
    if len(bad_lines) < MAX_ERRORS:
        kept = [type(s).__name__ for s in suite.cases[0].body]
        assert kept == [type(s).__name__ for s in clean.cases[0].body]
