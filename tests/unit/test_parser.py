"""The parser: every statement form, line joining, keywords, spans, errors and bad input."""

from __future__ import annotations

import pytest

from evaldsl import EvlError, parse
from evaldsl.syntax import _ast as a
from evaldsl.syntax._parser import parse_with_diagnostics


def expect_node(line: str) -> object:
    suite = parse(f'case "c"\n  prompt "p"\n  expect {line}\n')
    stmt = suite.cases[0].body[1]
    assert isinstance(stmt, a.ExpectStmt)
    return stmt.expectation.expr


def errors_of(text: str) -> list:
    with pytest.raises(EvlError) as info:
        parse(text, "t.evl")
    return info.value.errors


# ---------------------------------------------------------------- statements --


def test_suite_head_and_case_statements() -> None:
    suite = parse(
        'suite "Arith"\ndescription "d"\nuse "lib.evl"\ntags math, "smoke test"\nrepeat 3\n'
        "pass rate at least 0.5\ntimeout 500ms\nsystem \"be brief\"\nmode single-turn\nmax turns 4\n"
        'case "x"\n  skip\n  xfail "flaky"\n  prompt "p"\n  setup <grid: [1, 2], ok: true>\n  expect no error\n'
    )
    kinds = [type(x).__name__ for x in suite.head]
    assert kinds == ["SuiteStmt", "DescriptionStmt", "UseStmt", "TagsStmt", "RepeatStmt", "PassRateStmt",
                     "TimeoutStmt", "SystemStmt", "ModeStmt", "MaxTurnsStmt"]
    timeout = suite.head[6]
    assert isinstance(timeout, a.TimeoutStmt) and timeout.duration.seconds == 0.5
    assert suite.head[8].mode == "single-turn"  # type: ignore[attr-defined]
    body = suite.cases[0].body
    assert isinstance(body[0], a.SkipStmt) and body[0].reason is None
    assert isinstance(body[1], a.XfailStmt) and body[1].reason.value == "flaky"  # type: ignore[union-attr]
    setup = body[3]
    assert isinstance(setup, a.SetupStmt) and isinstance(setup.value, a.ObjectValue)


def test_tool_block() -> None:
    suite = parse(
        'tool read_file "Read"\n  param path: string "p"\n  param enc?: one of [utf-8, latin-1]\n'
        '  param xs: array of integer\n  param any_list: array\n'
        '  when <path: matches /a\\.toml$/i> returns "x"\n  when <path: "b"> fails "nope"\n'
        '  otherwise returns "none"\n'
    )
    tool = suite.tools[0]
    assert tool.name.name == "read_file"  # type: ignore[union-attr]
    params = [s for s in tool.body if isinstance(s, a.ParamStmt)]
    assert [p.optional for p in params] == [False, True, False, False]
    assert isinstance(params[2].type, a.ArrayType) and params[2].type.of == a.SimpleType(name="integer")
    assert isinstance(params[3].type, a.ArrayType) and params[3].type.of is None
    when = tool.body[4]
    assert isinstance(when, a.WhenStmt)
    regex = when.args.entries[0].pattern.regex  # type: ignore[union-attr]
    assert (regex.pattern, regex.flags) == ("a\\.toml$", "i")
    assert [getattr(s, "action", None) for s in tool.body[4:]] == ["returns", "fails", "returns"]


def test_examples_table_rows_attach_to_examples() -> None:
    suite = parse('case "x {{a}}"\n  prompt "p"\n  expect no error\n  examples\n    | a | b |\n    | 1 | "two" |\n')
    ex = suite.cases[0].body[-1]
    assert isinstance(ex, a.ExamplesStmt) and len(ex.rows) == 2
    assert ex.rows[1].cells == (a.Number(value=1, raw="1"), a.String(value="two"))


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        ("called calculator", a.Called),
        ("called calculator with <op: add> twice", a.Called),
        ("called any tool", a.CalledAny),
        ("called any tool between 1 and 3 times", a.CalledAny),
        ("called search then send_email then any tool", a.CalledSequence),
        ("calls are search then send_email", a.CallsAre),
        ("only called search, calculator", a.OnlyCalled),
        ("first call read_file with <path: any>", a.FirstCall),
        ("last call send_email", a.LastCall),
        ("every call search with <query: starts with \"w\">", a.EveryCall),
        ("no tool calls", a.NoToolCalls),
        ("no error", a.NoError),
        ('final text contains "x" ignoring case', a.TextContains),
        ('final text is "OK"', a.TextIs),
        ("final text is empty", a.TextEmpty),
        ('final text starts with "A"', a.TextStartsWith),
        ('final text ends with "."', a.TextEndsWith),
        ("final text matches /^yes|no$/i", a.TextMatches),
        ("final number is 4 within 0.01", a.NumberIs),
        ("final number at least -2.5", a.NumberCompare),
        ("final number between 1e3 and 2000", a.NumberBetween),
        ("final json <status: ok>", a.FinalJson),
        ("tokens at most 500", a.TokensAtMost),
        ("duration at most 2m", a.DurationAtMost),
        ('judge "polite" at least 0.7', a.Judge),
        ("voxels_placed(min: 3, kind: [stone])", a.CustomPredicate),
        ("not called delete_repo", a.Negation),
        ("no error and (called a or called b)", a.AndExpr),
        ("called a or called b and called c", a.OrExpr),
    ],
)
def test_every_predicate_form_parses(line: str, cls: type) -> None:
    assert isinstance(expect_node(line), cls)


def test_precedence_not_and_or() -> None:
    node = expect_node("not called a and called b or called c")
    assert isinstance(node, a.OrExpr)
    left = node.items[0]
    assert isinstance(left, a.AndExpr) and isinstance(left.items[0], a.Negation)


def test_fallbacks_bind_loosest() -> None:
    suite = parse('case "c"\n prompt "p"\n expect first call a or called b else first call c for 0.5 else no error for 0.1\n')
    exp = suite.cases[0].body[1].expectation  # type: ignore[union-attr]
    assert isinstance(exp.expr, a.OrExpr)
    assert [f.credit.value for f in exp.fallbacks] == [0.5, 0.1]


def test_patterns() -> None:
    node = expect_node(
        'called t with <a: 2 within 0.1, b: contains news and contains weather, c: one of [x, <y: 1>],'
        ' d: absent, e: not null, f: [1, any], "content-type": "json" ignoring case, g: between 1 and 2,'
        ' h: above 3 or below 1, i: starts with "s", j: ends with "e" ignoring case, k: {"n": true},>'
    )
    assert isinstance(node, a.Called)
    pats = {e.key: e.pattern for e in node.args.entries}  # type: ignore[union-attr]
    assert isinstance(pats["a"], a.WithinPattern)
    assert isinstance(pats["b"], a.PatternAnd) and len(pats["b"].patterns) == 2
    assert isinstance(pats["c"], a.OneOfPattern) and isinstance(pats["c"].values[1], a.ObjectValue)
    assert isinstance(pats["d"], a.AbsentPattern)
    assert isinstance(pats["e"], a.PatternNegation)
    assert isinstance(pats["f"], a.ArrayPattern) and isinstance(pats["f"].items[1], a.AnyPattern)
    assert pats["content-type"] == a.EqualsPattern(value=a.String(value="json"), ignore_case=True)
    assert isinstance(pats["h"], a.PatternOr)
    assert isinstance(pats["k"], a.ObjectPattern)  # {...} is the same as <...>


# ---------------------------------------------------------------- lexing --


def test_keywords_are_contextual() -> None:
    once = expect_node("called once once")
    assert isinstance(once, a.Called) and once.tool.name == "once"  # type: ignore[union-attr]
    assert once.count == a.Count(form="once")
    quoted = expect_node('called "then"')
    assert isinstance(quoted, a.Called) and quoted.tool.name == "then"  # type: ignore[union-attr]
    github = expect_node('called "github:create_issue"')
    assert github.tool.name == "github:create_issue"  # type: ignore[union-attr]
    # where both could stand, the keyword wins: `any` is the any-pattern
    node = expect_node("called t with <mode: any, other: \"any\">")
    entries = node.args.entries  # type: ignore[union-attr]
    assert isinstance(entries[0].pattern, a.AnyPattern)
    assert entries[1].pattern == a.EqualsPattern(value=a.String(value="any"))


def test_bare_words_and_literals() -> None:
    node = expect_node("called t with <a: add, b: true, c: null, d: -1.5, e: utf-8>")
    values = [e.pattern.value for e in node.args.entries]  # type: ignore[union-attr]
    assert values == [a.Word(value="add"), a.Constant(value=True), a.Constant(value=None),
                      a.Number(value=-1.5, raw="-1.5"), a.Word(value="utf-8")]


def test_line_breaks_inside_brackets_and_before_then() -> None:
    suite = parse(
        'case "c"\n  prompt "p"\n  expect called search with <query: contains "weather",\n'
        "      limit: 5>\n    # a comment between\n    then send_email with <to: \"bob@example.com\">\n"
        "    and no error\n  expect final number is 4\n"
    )
    body = suite.cases[0].body
    assert len(body) == 3
    assert isinstance(body[1].expectation.expr, a.AndExpr)  # type: ignore[union-attr]
    assert [c.text for c in suite.comments] == ["# a comment between"]


def test_long_string_dedents_and_drops_outer_breaks() -> None:
    suite = parse('case "c"\n  prompt """\n    line one\n      indented "quoted"\n    tab\\tescape\n    """\n  expect no error\n')
    prompt = suite.cases[0].body[0].text  # type: ignore[union-attr]
    assert prompt.long and prompt.value == 'line one\n  indented "quoted"\ntab\tescape'


def test_string_escapes_are_json() -> None:
    node = expect_node(r'final text is "a\"b\\c\u00e9\n"')
    assert node.text.value == 'a"b\\c\u00e9\n'  # type: ignore[union-attr]


def test_comments_are_collected_with_positions() -> None:
    suite = parse('# head\nsuite "s"  # trailing\ncase "c"\n  prompt "p # not a comment"\n  expect no error\n')
    assert [(c.text, c.span.line, c.span.column) for c in suite.comments] == [  # type: ignore[union-attr]
        ("# head", 1, 1), ("# trailing", 2, 12)]


def test_spans_are_positions_but_not_content() -> None:
    one = parse('case "c"\n  prompt "p"\n  expect called t\n', "a.evl")
    two = parse('case   "c"\nprompt "p"\n\n\nexpect   called   t', "b.evl")
    assert one == two
    called = one.cases[0].body[1].expectation.expr  # type: ignore[union-attr]
    assert called.span.model_dump() == {"file": "a.evl", "line": 3, "column": 10, "end_line": 3, "end_column": 18}


def test_crlf_bom_tabs_and_empty_input() -> None:
    assert parse("") == a.Suite()
    text = '\ufeffcase "c"\r\n\tprompt "p"\r\n\texpect no error\r\n'
    suite = parse(text)
    assert suite.cases[0].body[0] == a.PromptStmt(text=a.String(value="p"))


# ---------------------------------------------------------------- errors --


def test_error_is_positioned_with_expected_words_and_suggestion() -> None:
    (err,) = errors_of('case "c"\n  prompt "p"\n  expect called x thn y\n')
    assert (err.code, err.span.line, err.span.column, err.span.end_column) == ("E100", 3, 19, 22)
    assert err.message == "unexpected `thn`"
    assert err.suggestion == "then" and ("`then`" in err.label or "`then`" in (err.help or ""))


def test_misspelled_statement_keyword() -> None:
    (err,) = errors_of('expct no error\n')
    assert err.suggestion == "expect" and err.span.column == 1


def test_misspelled_predicate_points_at_the_word() -> None:
    (err,) = errors_of('case "c"\n  prompt "p"\n  expect caled search\n')
    assert err.message == "unknown predicate `caled`" and err.suggestion == "called"
    assert (err.span.line, err.span.column) == (3, 10)


def test_every_error_in_a_file_is_reported() -> None:
    errs = errors_of(
        'suite "x"\nexpct foo\ncase "a"\n  prompt "hi\n  expect called search with <a: 1,\n'
        '     b: ?? >\n  expect final text contains "x"\n  expect final number is\n'
    )
    assert [(e.code, e.span.line) for e in errs] == [("E100", 2), ("E102", 4), ("E100", 6), ("E100", 8)]


@pytest.mark.parametrize("bad", ['<a: "x>', "<a: /x>", '[1, "two]', "<a: ~>"])
def test_a_lexing_error_inside_brackets_hides_no_later_error(bad: str) -> None:
    errs = errors_of(f'case "a"\n  prompt "p"\n  expect called t with {bad}\n\ncase "b"\n  prompt "q"\n'
                     '  expect caled x\n')
    assert [e.span.line for e in errs] == [3, 7] and errs[1].message == "unknown predicate `caled`"


def test_unterminated_string_and_regex() -> None:
    (err,) = errors_of('case "c"\n  prompt "oops\n')
    assert err.code == "E102" and "no closing quote" in err.label
    (err,) = errors_of('case "c"\n  prompt "p"\n  expect final text matches /abc\n')
    assert err.code == "E102" and "regex" in err.message


def test_bad_escape_is_an_error() -> None:
    (err,) = errors_of('case "c"\n  prompt "bad \\q escape"\n')
    assert err.code == "E103" and err.span.line == 2


def test_nesting_too_deep_is_a_clean_error() -> None:
    deep = 'case "c"\n prompt "p"\n expect called t with ' + "<a: " * 1000 + "1" + ">" * 1000 + "\n"
    (err,) = errors_of(deep)
    assert err.code == "E104"
    nots = 'case "c"\n prompt "p"\n expect ' + "not " * 1000 + "no error\n"
    assert errors_of(nots)[0].code == "E104"


def test_moderate_nesting_parses() -> None:
    text = 'case "c"\n prompt "p"\n expect called t with ' + "<a: " * 60 + "1" + ">" * 60 + "\n"
    assert parse(text).cases


def test_large_file_parses() -> None:
    text = "".join(f'case "c{i}"\n  prompt "p"\n  expect final number is {i}\n' for i in range(5000))
    assert len(parse(text).cases) == 5000


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('prompt "p"\n', "E110"),
        ('case "c"\n  prompt "p"\n  use "x.evl"\n', "E113"),
        ('param x: string\n', "E111"),
        ('case "a"\n  prompt "p"\n  expect no error\ntool t\n  param x: string\nexpect no error\n', "E112"),
        ('case "a"\n  prompt "p"\n  | 1 | 2 |\n', "E114"),
    ],
)
def test_misplaced_statements(text: str, code: str) -> None:
    assert [e.code for e in errors_of(text)] == [code]


def test_setting_at_column_zero_in_a_case_warns() -> None:
    suite, diags = parse_with_diagnostics('case "a"\n  prompt "p"\nrepeat 3\n  expect no error\n')
    assert [d.code for d in diags] == ["W303"]
    assert isinstance(suite.cases[0].body[1], a.RepeatStmt)


def test_suspicious_bare_words_warn() -> None:
    _, diags = parse_with_diagnostics('case "a"\n  prompt "p"\n  expect called t with <x: True, y: None>\n')
    assert [d.code for d in diags] == ["W301", "W301"]
    assert "`true`" in (diags[0].help or "")


def test_only_evldsl_errors_escape_on_garbage() -> None:
    for text in ["\x00\x01", "case", "<<<<", '"""', "expect (((", "| |", "case \"a\"\n  setup <a: $>"]:
        with pytest.raises(EvlError):
            parse(text)


def test_unexpected_character_lists_only_what_the_parser_accepts() -> None:
    (err,) = errors_of('case "c"\n  timeout 1d\n  prompt "p"\n  expect no error\n')
    assert (err.code, err.span.line, err.span.column) == ("E101", 2, 11)
    assert err.label == "expected a duration such as `30s`"
