"""Hints for newcomers' mistakes: a percentage where a fraction goes, a case name without quotes."""

from __future__ import annotations

import pytest

from evaldsl import EvlError, parse
from evaldsl.syntax._diagnostics import Diagnostic


def first_error(text: str) -> Diagnostic:
    with pytest.raises(EvlError) as info:
        parse(text, "t.evl")
    return info.value.errors[0]


@pytest.mark.parametrize(("line", "fraction", "written"), [
    ("  pass rate at least 60%", "0.6", "60%"),
    ("  pass rate at least 75 %", "0.75", "75%"),
    ('  expect judge "polite" at least 80%', "0.8", "80%"),
    ("  pass rate at least 12.5%", "0.125", "12.5%"),
    ("  expect called a else called b for 50%", "0.5", "50%"),
])
def test_a_percentage_hints_the_fraction(line: str, fraction: str, written: str) -> None:
    diag = first_error(f'case "a"\n  repeat 4\n  prompt "p"\n{line}\n  expect no error\n')
    assert (diag.code, diag.span and diag.span.line) == ("E101", 4)
    assert diag.help == f"a rate is a fraction from 0 to 1: write `{fraction}`, not `{written}`"


CASE_BODY = '\n  prompt "p"\n  expect no error\n'


@pytest.mark.parametrize(("text", "hint"), [
    ("case adds numbers" + CASE_BODY, 'a case name is a string, in quotes: case "adds numbers"'),
    ("case adds  # the first" + CASE_BODY, 'a case name is a string, in quotes: case "adds"'),
    ('case it\'s "fine"' + CASE_BODY, 'a case name is a string, in quotes: case "it\'s \\"fine\\""'),
    ('suite Weather report\ncase "x"' + CASE_BODY, 'a suite name is a string, in quotes: suite "Weather report"'),
])
def test_an_unquoted_name_hints_the_quotes(text: str, hint: str) -> None:
    diag = first_error(text)
    assert (diag.code, diag.span and diag.span.line) == ("E100", 1)
    assert diag.help == hint
    assert f"= help: {hint}" in EvlError([diag], {"t.evl": text}).render()


def test_a_count_before_with_hints_the_order() -> None:
    text = 'case "a"\n  prompt "p"\n  expect called calculator twice with <op: add>\n'
    diag = first_error(text)
    assert diag.help == "the count comes after the arguments: expect called calculator with <op: add> twice"


def test_a_misspelt_statement_word_puts_the_did_you_mean_first_and_cuts_the_list() -> None:
    diag = first_error('case "a"\n  prompt "p"\n  expct no error\n')
    assert diag.suggestion == "expect" and diag.label == "not a word that can stand here"
    assert diag.help is not None and diag.help.endswith(", ...") and diag.help.count("`") == 12


@pytest.mark.parametrize("text", [
    'case "a"\n  prompt "p"\n  expect final number is 60%\n',  # a % that is not a rate
    'case "a"\n  prompt "p"\n  expect final number is 60 within 5%\n',
    'case "a"\n  prompt "p"\n  expect called t with <a: 60%>\n',
    'case "a"\n  prompt "p"\n  expect final text matches x\n',  # an E100 that is not a name
    'case\n  prompt "p"\n',  # no name at all: nothing to quote
])
def test_no_hint_where_it_would_mislead(text: str) -> None:
    diag = first_error(text)
    assert diag.help is None or "fraction" not in diag.help and "in quotes" not in diag.help
