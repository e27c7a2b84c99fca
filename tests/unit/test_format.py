"""The formatter: canonical layout, long strings, line breaking and comments."""

from __future__ import annotations

import textwrap

import pytest

from evaldsl.syntax import _ast as a
from evaldsl.syntax._diagnostics import EvlError
from evaldsl.syntax._format import LINE_WIDTH, format_suite, format_text
from evaldsl.syntax._parser import parse


def fmt(src: str) -> str:
    """Format dedented source; also check the result is stable and means the same."""
    src = textwrap.dedent(src).lstrip("\n")
    out = format_text(src)
    assert format_text(out) == out, "not idempotent"
    assert parse(out) == parse(src), "changed the meaning"
    return out


def block(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# ------------------------------------------------------------ layout --


def test_head_blocks_and_indentation() -> None:
    out = fmt('''
        suite   "S"
          timeout 30s
        tool t   "d"
        param p : string
        case "a"
        prompt "p"
        repeat 2
        expect called t
    ''')
    assert out == block('''
        suite "S"
        timeout 30s

        tool t "d"
          param p: string

        case "a"
          prompt "p"
          repeat 2
          expect called t
    ''')


def test_blank_lines_collapse_to_one_and_are_not_invented() -> None:
    out = fmt('''


        suite "S"



        timeout 30s
        repeat 2

        case "a"


          prompt "p"
          expect no error



    ''')
    assert out == (
        'suite "S"\n\ntimeout 30s\nrepeat 2\n\ncase "a"\n\n  prompt "p"\n  expect no error\n'
    )


def test_a_head_statement_after_a_tool_block_keeps_column_zero() -> None:
    out = fmt('''
        tool t
          param p: string
        expect not called t
        case "a"
          prompt "p"
    ''')
    assert out == 'tool t\n  param p: string\nexpect not called t\n\ncase "a"\n  prompt "p"\n'


def test_empty_and_comment_only_files() -> None:
    assert format_text("") == ""
    assert format_text("\n\n  \n") == ""
    assert format_text("   # only a comment   \n\n\n") == "# only a comment\n"


def test_one_newline_at_end_and_no_trailing_white_space() -> None:
    out = format_text('suite "S"   \t\ncase "a"  \n  expect no error  # note   ')
    assert out == 'suite "S"\n\ncase "a"\n  expect no error  # note\n'


def test_crlf_source() -> None:
    src = 'suite "S"\r\n\r\n\r\ntimeout 30s  # t\r\ncase "a"\r\n  expect no error\r\n'
    assert format_text(src) == 'suite "S"\n\ntimeout 30s  # t\n\ncase "a"\n  expect no error\n'


def test_object_syntax_and_spacing_become_canonical() -> None:
    out = fmt('''
        case "a"
          expect called t with {"op":"add" ,"n":{"x":[1,2,],},}
          setup {"k" : [ true,null ]}
    ''')
    assert out == block('''
        case "a"
          expect called t with <op: "add", n: <x: [1, 2]>>
          setup <k: [true, null]>
    ''')


def test_a_broken_bracket_without_a_trailing_comma_joins_into_one_line() -> None:
    out = fmt('''
        case "a"
          expect called t with <
              a: 1,
              b: 2
          >
    ''')
    assert out == 'case "a"\n  expect called t with <a: 1, b: 2>\n'


def test_a_broken_bracket_with_a_trailing_comma_stays_broken() -> None:
    out = fmt('''
        case "a"
          expect called t with <a: 1,
                                b: [1, 2,
                                ],>
          setup <x: 1,>
    ''')
    assert out == block('''
        case "a"
          expect called t with <
            a: 1,
            b: [
              1,
              2,
            ],
          >
          setup <x: 1>
    ''')


def test_examples_table_is_padded() -> None:
    out = fmt('''
        case "adds {{a}} and {{b}}"
          expect final number is $sum
          examples
          |a|b|sum|
            | 2 | 2 | 4 |
                | 10 | "x y" | 42 |
    ''')
    assert out == block('''
        case "adds {{a}} and {{b}}"
          expect final number is $sum
          examples
            | a  | b     | sum |
            | 2  | 2     | 4   |
            | 10 | "x y" | 42  |
    ''')


def test_examples_from_a_file() -> None:
    assert fmt('case "a"\nexamples   from "x.csv"\n') == 'case "a"\n  examples from "x.csv"\n'


# ------------------------------------------------------ long strings --


def test_long_string_layout_follows_its_statement() -> None:
    out = fmt('''
        tool read_file
        when <path: matches /Cargo\\.toml$/> returns """
                [package]
                  name = "x"
                    """
        case """
        a case
        """
          prompt """
        hello"""
    ''')
    assert out == block('''
        tool read_file
          when <path: matches /Cargo\\.toml$/> returns """
            [package]
              name = "x"
            """

        case """
          a case
          """
          prompt """
            hello
            """
    ''')


@pytest.mark.parametrize(
    "value",
    [
        "",
        "\n",
        "plain",
        "  every line\n  starts indented",
        "\ttabbed\n\tlines",
        "trailing   \nspace\t",
        "blank\n   \nlines\n\n",
        'quotes """ and "" and "',
        '""""',
        "back\\slash \\n not a break",
        "\u00a0nbsp\nunicode ✓ \u2028 sep",
        "control \x00\x1b\r chars",
    ],
)
def test_long_strings_keep_their_value(value: str) -> None:
    suite = a.Suite(items=(a.Case(name=a.String(value="c"), body=(
        a.PromptStmt(text=a.String(value=value, long=True)),
    )),))
    out = format_suite(suite, "")
    assert all(line == line.rstrip() for line in out.split("\n"))
    assert out.startswith('case "c"\n  prompt """\n') and out.endswith('\n    """\n')
    assert parse(out) == suite
    assert format_text(out) == out


def test_long_string_inside_a_pattern_and_after_it() -> None:
    out = fmt('''
        case "a"
          expect judge """
            be kind
            """ at least 0.5 and called t with <x: """
            y
            """>
    ''')
    assert out == block('''
        case "a"
          expect judge """
            be kind
            """ at least 0.5 and called t with <x: """
              y
              """>
    ''')


# ------------------------------------------------------ line breaking --


def test_long_then_chain_breaks_before_each_then() -> None:
    out = fmt('''
        case "a"
          expect called search with <query: contains "weather"> then send_email with <to: "bob@example.com", cc: absent>
    ''')
    assert out == block('''
        case "a"
          expect called search with <query: contains "weather">
            then send_email with <to: "bob@example.com", cc: absent>
    ''')


def test_continuation_lines_of_the_source_are_kept() -> None:
    src = '''
        case "a"
          expect called a
            then b

            then c
          expect final text contains "x"
                and final text contains "y" or no error
          expect first call a
            else no error for 0.5
    '''
    assert fmt(src) == block('''
        case "a"
          expect called a
            then b
            then c
          expect final text contains "x"
            and final text contains "y" or no error
          expect first call a
            else no error for 0.5
    ''')


def test_a_short_chain_on_one_line_stays_on_one_line() -> None:
    assert fmt('case "a"\n  expect  called a then b   then c\n') == 'case "a"\n  expect called a then b then c\n'


def test_fallbacks_break_before_else() -> None:
    out = fmt('''
        expect first call calculator with <op: mul, a: 23, b: 19, c: 1, d: 2, e: 3, f: 4> else first call search for 0.5
        expect calls are read_file with <path: "src/main.rs", lines: 10> then list_files then read_file
            else no error for 0.2
    ''')
    assert out == block('''
        expect first call calculator with <op: mul, a: 23, b: 19, c: 1, d: 2, e: 3, f: 4>
          else first call search for 0.5
        expect calls are read_file with <path: "src/main.rs", lines: 10>
          then list_files
          then read_file
          else no error for 0.2
    ''')


def test_the_width_limit_is_inclusive() -> None:
    head = "expect called a then b"
    fits = head + " then " + "c" * (LINE_WIDTH - len(head) - 6)
    assert len(fits) == LINE_WIDTH
    assert format_text(fits) == fits + "\n"
    broken = "expect called a\n  then b\n  then " + "c" * (LINE_WIDTH - len(head) - 5) + "\n"
    assert format_text(fits + "c") == broken


def test_a_long_expression_breaks_before_or_then_before_and() -> None:
    words = [f'final text contains "{w * 12}"' for w in "abcd"]
    line = "expect " + " and ".join(words)
    assert len(line) > LINE_WIDTH
    assert format_text(line) == "expect " + "\n  and ".join(words) + "\n"
    mixed = f"expect {words[0]} and {words[1]} or {words[2]} and {words[3]}"
    assert format_text(mixed) == f"expect {words[0]} and {words[1]}\n  or {words[2]} and {words[3]}\n"


def test_a_too_wide_bracket_breaks_outermost_first() -> None:
    inner = ", ".join(f'k{i}: "{"v" * 10}"' for i in range(3))
    out = fmt(f'''
        case "a"
          expect called t with <a: 1, nested: <{inner}>, others: [1, 2, 3], last: contains "x">
          setup <rows: [<{inner}>, <{inner}>, <{inner}>]>
    ''')
    assert out == block(f'''
        case "a"
          expect called t with <
            a: 1,
            nested: <{inner}>,
            others: [1, 2, 3],
            last: contains "x",
          >
          setup <
            rows: [
              <{inner}>,
              <{inner}>,
              <{inner}>,
            ],
          >
    ''')


def test_the_line_width_is_an_option() -> None:
    src = 'expect called t with <a: 1, b: 2>\n'
    assert format_text(src, line_width=30) == "expect called t with <\n  a: 1,\n  b: 2,\n>\n"
    assert format_text(src) == src


# ----------------------------------------------------------- comments --


def test_comments_on_their_own_lines_take_the_next_statement_indent() -> None:
    out = fmt('''
        # file header

        suite "S"
            # about timeout
        timeout 30s
        case "a"
        # about the prompt
          prompt "p"
              # about the expectation

          expect no error
    ''')
    assert out == block('''
        # file header

        suite "S"
        # about timeout
        timeout 30s

        case "a"
          # about the prompt
          prompt "p"
          # about the expectation

          expect no error
    ''')


def test_comment_before_a_case_gets_the_blank_line_above_it() -> None:
    out = fmt('''
        case "a"
          expect no error
          # next: b
        case "b"
          expect no error

        # c, detached

        case "c"
          expect no error
    ''')
    assert out == block('''
        case "a"
          expect no error

        # next: b
        case "b"
          expect no error

        # c, detached

        case "c"
          expect no error
    ''')


def test_end_of_line_comments_stay_at_the_end_of_their_line() -> None:
    out = fmt('''
        suite "S"          # name
        case "a"   # header
          examples # table
          | a | b |   # names
          | 10 | 2 |# values
        tool t  # tool
          param p: string   # param
    ''')
    assert out == block('''
        suite "S"  # name

        case "a"  # header
          examples  # table
            | a  | b |  # names
            | 10 | 2 |  # values

        tool t  # tool
          param p: string  # param
    ''')


def test_comments_inside_a_multi_line_statement_stay_on_their_lines() -> None:
    out = fmt('''
        case "a"
          expect called a with <x: 1,  # the x
            # the y
            y: 2>  # the end
            # before then
            then b  # after b
    ''')
    assert out == block('''
        case "a"
          expect called a with <
            x: 1,  # the x
            # the y
            y: 2,
          >  # the end
            # before then
            then b  # after b
    ''')


def test_comments_inside_brackets_keep_their_place() -> None:
    out = fmt('''
        case "c"
          setup <  # head
            a: <b: 1,  # in b
               c: 2>,
            # last
          >
          expect called t with <d: one of [x,   # in one of
              y]>
          expect check(n: 1,  # in a call
              m: 2)
          expect (called a  # at a line end
              or called b)
          expect no error and (called a  # in parentheses
              or called b)
    ''')
    assert out == block('''
        case "c"
          setup <  # head
            a: <
              b: 1,  # in b
              c: 2,
            >,
            # last
          >
          expect called t with <
            d: one of [
              x,  # in one of
              y,
            ],
          >
          expect check(
            n: 1,  # in a call
            m: 2,
          )
          expect called a  # at a line end
            or called b
          # in parentheses
          expect no error and (called a or called b)
    ''')


def test_comment_after_a_long_string_and_after_a_broken_chain() -> None:
    long_tail = "then send_email with <to: " + '"' + "x" * 60 + '">'
    out = fmt(f'''
        case "a"
          prompt """
            text
            """  # after the string
          expect called search {long_tail}  # chain
    ''')
    assert out == block(f'''
        case "a"
          prompt """
            text
            """  # after the string
          expect called search
            {long_tail}  # chain
    ''')


def test_comments_at_the_end_of_the_file_stay_there() -> None:
    out = fmt('''
        case "a"
          expect no error
          # indented tail

        # last words
    ''')
    assert out == 'case "a"\n  expect no error\n  # indented tail\n\n# last words\n'


def test_every_comment_is_kept_once() -> None:
    src = block('''
        # 1
        suite "S"  # 2
        case "a"  # 3
          # 4
          expect called a with <  # 5
            x: 1>  # 6
        # 7
    ''')
    out = format_text(src)
    assert sorted(c.text for c in parse(out).comments) == [f"# {n}" for n in range(1, 8)]


# -------------------------------------------------------------- misc --


def test_a_suite_built_by_hand_formats_without_spans() -> None:
    suite = a.Suite(items=(
        a.SuiteStmt(name=a.String(value="S")),
        a.Tool(name=a.ToolName(name="t"), body=(
            a.ParamStmt(name="p", type=a.SimpleType(name="string")),
        )),
        a.Case(name=a.String(value="c"), body=(
            a.ExpectStmt(expectation=a.Expectation(expr=a.NoError())),
        )),
    ))
    out = format_suite(suite, "")
    assert out == 'suite "S"\n\ntool t\n  param p: string\n\ncase "c"\n  expect no error\n'
    assert parse(out) == suite


def test_text_that_does_not_parse_raises() -> None:
    with pytest.raises(EvlError) as info:
        format_text('case "a"\n  expect caled t\n', "bad.evl")
    assert info.value.errors[0].span.file == "bad.evl"


def test_the_public_format_takes_a_line_width() -> None:
    import evaldsl

    src = 'expect called t with <a: 1, b: 2>\n'
    assert evaldsl.format(src, line_width=30) == format_text(src, line_width=30) != src
    assert evaldsl.format(src) == src


def test_continuation_lines_under_not_and_in_fallbacks_are_kept() -> None:
    src = block('''
        case "a"
          expect not called a
            then b
          expect first call a else called a
            then b for 0.5
            else not called x then y for 0.1
    ''')
    assert fmt(src) == src
