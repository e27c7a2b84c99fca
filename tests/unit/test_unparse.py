"""unparse: the canonical one-line text of every AST node kind.

Most cases are written as canonical source: parse it, unparse the node, and
the text must come back byte for byte (which also proves the text parses to
that node). Hand-built nodes cover what the parser never produces.
"""

from __future__ import annotations

import re

import pytest

from evaldsl.syntax import _ast as a
from evaldsl.syntax._grammar import grammar_path
from evaldsl.syntax._parser import parse
from evaldsl.syntax._unparse import _METHODS, KEYWORDS, expectation_parts, name, quote, unparse


def expectation(src: str) -> a.Expectation:
    stmt = parse(f"expect {src}\n").items[0]
    assert isinstance(stmt, a.ExpectStmt)
    return stmt.expectation


def pattern(src: str) -> a.Pattern:
    expr = expectation(f"called t with <k: {src}>").expr
    assert isinstance(expr, a.Called) and isinstance(expr.args, a.ObjectPattern)
    return expr.args.entries[0].pattern


def case_stmt(src: str) -> a.Node:
    case = parse(f'case "c"\n  {src}\n').cases[0]
    return case.body[0]


def tool_stmt(src: str) -> a.Node:
    return parse(f"tool t\n  {src}\n").tools[0].body[0]


PREDICATES = [
    "called calculator",
    "called calculator with <op: add>",
    "called calculator with <op: add> twice",
    "called t once",
    "called t 3 times",
    "called t at least 2 times",
    "called t at most $n times",
    "called t between 1 and 3 times",
    "called t with $args",
    "called $tool",
    'called "then"',
    'called "github:create_issue" with <"a b": json, content-type: json>',
    "called any tool",
    "called any tool at least 2 times",
    "called search then send_email",
    "called search with <q: 1> then any tool then send_email with <to: bob>",
    "calls are a then b",
    "calls are any tool then a with <x: 1>",
    "only called a, b, $c",
    "first call t",
    "first call t with <a: 1>",
    "last call t",
    "last call t with <a: 1>",
    "every call t with <a: 1>",
    "no tool calls",
    "no error",
    "not called t",
    'final text contains "x"',
    'final text contains "x" ignoring case',
    'final text is "x"',
    'final text is $x ignoring case',
    "final text is empty",
    'final text starts with "x"',
    'final text ends with "x" ignoring case',
    r"final text matches /a\/b+/im",
    "final number is 4",
    "final number is 4 within 0.01",
    "final number at least 1",
    "final number at most -2.5",
    "final number above 1e3",
    "final number below $x",
    "final number between 1 and 2",
    "final json <a: 1, b: [any, absent]>",
    "final json [1, 2]",
    "final json contains 3",
    "tokens at most 100",
    "duration at most 30s",
    "duration at most 500ms",
    'judge "polite"',
    'judge "polite" at least 0.7',
    "name(k: v)",
    "name()",
    '"my:pred"(a: [1, 2], b: <c: null>, no: true)',
]

EXPRESSIONS = [
    "not (called a or called b)",
    "not (called a and called b)",
    "not not called a",
    "called a and not called b",
    "called a or called b and called c",
    "(called a or called b) and called c",
    "(called a and called b) and called c",
    "called a or (called b or called c)",
    "called a and called b or called c and called d",
    "first call read_file else first call list_files for 0.5",
    "called a else called b for 0.5 else called c or no error for $credit",
]

PATTERNS = [
    '"s"', "word", "4", "-2.5", "1e3", "true", "false", "null", "$x",
    '"s" ignoring case', "4 within 0.5", "$x within $e",
    "<a: <b: 1>>", "<>", "[]", "[1, [2, <c: 3>]]", "any", "absent",
    '"contains"', 'contains "s"', 'contains "s" ignoring case', "contains <a: 1>",
    'starts with "s"', 'starts with "s" ignoring case', "ends with $x",
    "matches /x+/", 'one of [a, "b c", 1, <d: 2>]', "at least 1", "at most 2",
    "above 3", "below 4", "between 1 and 2", "not 1", "not not absent",
    "contains news and contains weather", "1 or 2 and 3", "not 1 or 2",
]

CASE_STATEMENTS = [
    "tags a, b, \"c d\", $t", "repeat 3", "pass rate at least 0.8", "timeout 30s",
    'system "be brief"', "mode agent", "mode single-turn", "max turns 5", "skip",
    'skip "flaky"', "xfail", 'xfail "known"', 'prompt "hi"', "prompt $p",
    'setup <a: [1, true, null, "x"], b: <c: 1e3>>', "setup [1, 2]", "setup 4",
    "expect no error", "examples", 'examples from "cases.csv"',
]

TOOL_STATEMENTS = [
    'param path: string "Path relative to the project root"',
    'param encoding?: one of [utf-8, latin-1] "desc"',
    "param xs: array of string",
    "param a: array",
    "param m: array of array of number",
    'param "x y"?: integer',
    r'when <path: matches /\.toml$/> returns "x"',
    'when $a fails "err"',
    'otherwise returns "x"',
    'otherwise fails "y"',
]


@pytest.mark.parametrize("src", PREDICATES + EXPRESSIONS)
def test_expectations_come_back_as_written(src: str) -> None:
    assert unparse(expectation(src)) == src


@pytest.mark.parametrize("src", PATTERNS)
def test_patterns_come_back_as_written(src: str) -> None:
    assert unparse(pattern(src)) == src


@pytest.mark.parametrize("src", CASE_STATEMENTS)
def test_case_statements_come_back_as_written(src: str) -> None:
    assert unparse(case_stmt(src)) == src


@pytest.mark.parametrize("src", TOOL_STATEMENTS)
def test_tool_statements_come_back_as_written(src: str) -> None:
    assert unparse(tool_stmt(src)) == src


@pytest.mark.parametrize(
    "src", ['suite "Arithmetic"', 'description "d"', 'use "lib.evl"', "tags math, smoke"]
)
def test_head_statements_come_back_as_written(src: str) -> None:
    assert unparse(parse(src + "\n").items[0]) == src


def test_blocks_give_their_header_line() -> None:
    suite = parse('tool read_file "Read"\n  param p: string\ncase "c"\n  prompt "p"\n')
    assert unparse(suite.tools[0]) == 'tool read_file "Read"'
    assert unparse(suite.cases[0]) == 'case "c"'
    assert unparse(a.ToolStmt(name=a.Placeholder(name="t"))) == "tool $t"


def test_table_row_and_examples_line() -> None:
    examples = case_stmt("examples\n    | a | b |\n    | 1 | \"x y\" |")
    assert isinstance(examples, a.ExamplesStmt)
    assert unparse(examples) == "examples"
    assert [unparse(row) for row in examples.rows] == ["| a | b |", '| 1 | "x y" |']


def test_object_syntax_becomes_angle_brackets() -> None:
    assert unparse(expectation('called t with {"op": "add", "n": {"x": [1]}}')) == (
        'called t with <op: "add", n: <x: [1]>>'
    )
    assert unparse(case_stmt('setup {"a": {"b": 1},}')) == "setup <a: <b: 1>>"


def test_label_of_an_expectation_statement() -> None:
    stmt = parse("expect called calculator with {op: add}\n").items[0]
    assert unparse(stmt) == "expect called calculator with <op: add>"
    assert unparse(stmt.expectation) == "called calculator with <op: add>"


def test_expectation_parts_split_a_chain_and_its_fallbacks() -> None:
    node = expectation("called a with <x: 1> then b then c else no error for 0.5")
    assert expectation_parts(node) == [
        "called a with <x: 1>", "then b", "then c", "else no error for 0.5",
    ]
    assert expectation_parts(expectation("calls are a then b")) == ["calls are a", "then b"]
    assert expectation_parts(expectation("called a and called b")) == ["called a and called b"]


def test_a_count_after_a_chain_stays_on_its_last_step() -> None:
    node = expectation("called a then b twice")
    assert expectation_parts(node) == ["called a", "then b twice"]
    assert unparse(node) == "called a then b twice"


# ------------------------------------------------------------- names --


def test_keywords_are_every_quoted_word_of_the_grammar() -> None:
    grammar = grammar_path().read_text(encoding="utf-8")
    quoted = set(re.findall(r'"([a-z]+)"', grammar))
    assert quoted == set(KEYWORDS)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("calculator", "calculator"),
        ("a.b-c_1", "a.b-c_1"),
        ("_x", "_x"),
        ("then", '"then"'),
        ("any", '"any"'),
        ("true", '"true"'),
        ("github:create_issue", '"github:create_issue"'),
        ("1abc", '"1abc"'),
        ("", '""'),
        ("$x", '"$x"'),
        ("a b", '"a b"'),
    ],
)
def test_names_are_bare_only_when_they_can_be(value: str, text: str) -> None:
    assert name(value) == text
    assert unparse(a.ToolName(name=value)) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [("then", "then"), ("any", "any"), ("true", "true"), ("a.b-c", "a.b-c"),
     ("github:create_issue", '"github:create_issue"'), ("a b", '"a b"'), ("", '""')],
)
def test_keys_are_quoted_only_when_not_names(value: str, text: str) -> None:
    assert unparse(a.KeyPattern(key=value, pattern=a.AnyPattern())) == f"{text}: any"


def test_every_keyword_as_a_tool_name_round_trips() -> None:
    for word in sorted(KEYWORDS):
        node = a.Called(tool=a.ToolName(name=word))
        assert expectation(unparse(node)).expr == node, word


# ----------------------------------------------------------- strings --


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("plain", '"plain"'),
        ('say "hi"\\', r'"say \"hi\"\\"'),
        ("line\nbreak\ttab", r'"line\nbreak\ttab"'),
        ("héllo ✓", '"héllo ✓"'),
        ("a\u2028b\x85c", r'"a\u2028b\u0085c"'),
        ("\ud800", r'"\ud800"'),
    ],
)
def test_strings_are_one_line_json(value: str, text: str) -> None:
    assert quote(value) == text
    assert unparse(a.String(value=value)) == text
    assert parse(f"suite {text}\n").items[0].name.value == value


def test_a_long_string_is_one_line_here() -> None:
    assert unparse(a.String(value="a\nb", long=True)) == r'"a\nb"'


def test_words_numbers_constants_placeholders() -> None:
    assert unparse(a.Word(value="add")) == "add"
    assert unparse(a.Word(value="not a name")) == '"not a name"'
    assert unparse(a.Number(value=1000.0, raw="1e3")) == "1e3"
    assert [unparse(a.Constant(value=v)) for v in (True, False, None)] == ["true", "false", "null"]
    assert unparse(a.Placeholder(name="golden")) == "$golden"
    assert unparse(a.ArrayValue(items=(a.Word(value="x"), a.ArrayValue()))) == "[x, []]"
    assert unparse(a.ObjectValue()) == "<>"


def test_regex_escapes_a_bare_slash() -> None:
    assert unparse(a.Regex(pattern="a/b", flags="i")) == r"/a\/b/i"
    assert unparse(a.Regex(pattern=r"a\/b")) == r"/a\/b/"
    assert unparse(a.Regex(pattern=r"a\\/b")) == r"/a\\\/b/"


def test_durations_and_types() -> None:
    assert unparse(a.Duration(amount=2, unit="m")) == "2m"
    one_of = a.OneOfType(values=(a.Word(value="x"), a.Number(value=1, raw="1")))
    assert unparse(a.ArrayType(of=one_of)) == "array of one of [x, 1]"


# ------------------------------------------------------------- trees --


def test_nested_same_operator_keeps_its_parentheses() -> None:
    inner = a.AndExpr(items=(a.NoError(), a.NoToolCalls()))
    node = a.AndExpr(items=(inner, a.NoError()))
    text = unparse(node)
    assert text == "(no error and no tool calls) and no error"
    assert expectation(text).expr == node


def test_pattern_trees_render_with_the_parentheses_they_need() -> None:
    # v2: patterns have parentheses, so `or` under `and` (and under `not`) round-trips
    one, two, three = (a.EqualsPattern(value=a.Number(value=n, raw=str(n))) for n in (1, 2, 3))
    node = a.PatternAnd(patterns=(a.PatternOr(patterns=(one, two)), three))
    assert unparse(node) == "(1 or 2) and 3"
    assert pattern(unparse(node)) == node
    negated = a.PatternNegation(pattern=a.PatternOr(patterns=(one, two)))
    assert unparse(negated) == "not (1 or 2)"
    assert pattern(unparse(negated)) == negated


def test_custom_predicate_named_like_a_keyword_is_quoted() -> None:
    node = a.CustomPredicate(name="no", args=(a.Entry(key="k", value=a.Word(value="v")),))
    assert unparse(node) == '"no"(k: v)'
    assert expectation(unparse(node)).expr == node


def test_comment_and_suite() -> None:
    assert unparse(a.Comment(text="# note")) == "# note"
    suite = parse('suite "s"  # kept by the formatter\ncase "c"\n  expect no error\n')
    with pytest.raises(TypeError, match="formatter"):  # a file is the formatter's job
        unparse(suite)


def test_anything_else_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="Span"):
        unparse(a.Span())
    with pytest.raises(TypeError):
        unparse("called a")


def test_every_node_class_can_be_unparsed() -> None:
    def subclasses(cls: type) -> set[type]:
        found = set(cls.__subclasses__())
        for sub in list(found):
            found |= subclasses(sub)
        return found

    missing = {cls.__name__ for cls in subclasses(a.Node)} - {cls.__name__ for cls in _METHODS}
    assert missing == set()


def test_keys_named_like_keywords_stay_bare_and_read_back() -> None:
    from evaldsl import parse
    from evaldsl.syntax._unparse import unparse

    text = 'case "c"\n  prompt "p"\n  expect called t with <not: 1, with: 2, text: "hi", "a b": 3>\n'
    expr = parse(text).cases[0].body[1].expectation  # type: ignore[union-attr]
    assert unparse(expr) == 'called t with <not: 1, with: 2, text: "hi", "a b": 3>'


def test_unparse_stands_alone_below_the_formatter() -> None:
    import subprocess
    import sys

    code = ("import sys, evaldsl.syntax._unparse; "
            "sys.exit('evaldsl.syntax._format' in sys.modules or 'evaldsl.syntax._layout' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
