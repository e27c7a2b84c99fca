"""Properties of the formatter over generated, valid .evl files.

The strategy builds whole files from the grammar: random head statements,
tool blocks and cases holding random predicates, patterns and values, each
statement a list of tokens. A layout step then joins the tokens the way
people write them: uneven spaces and indentation, line breaks inside
brackets and before `then` / `and` / `or` / `else`, comments at line ends,
on their own lines and inside multi-line statements, and blank lines.

For every such file: formatting is idempotent, keeps the meaning (the AST,
spans aside) and keeps every comment, and its output has no trailing white
space and ends in exactly one newline.
"""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaldsl.syntax._format import format_text
from evaldsl.syntax._parser import parse

Tokens = list[str]
OPENERS, CLOSERS = set("<[{("), set(">]})")
BREAKABLE = {"then", "and", "or", "else"}

WORDS = ["add", "x", "search", "send_email", "read_file", "calc.add", "x-y", "_t", "utf-8", "True"]
KEYS = WORDS + ['"then"', '"content type"', '"any"', "path", "query"]
TOOLS = ["search", "send_email", "read_file", "calc.add", "_t", '"then"', '"github:create_issue"', "$tool"]
NUMBERS = ["0", "4", "-2.5", "1e3", "3.14", "10", "-7", "1E-2", "$n", "100"]
REGEXES = [r"/a+/", r"/\d+/i", r"/^x$/ms", r"/a\/b/", r"/[a-z]+\.toml$/x"]
DURATIONS = ["30s", "500ms", "2m", "1h"]
PLAIN = st.characters(blacklist_categories=("Cs",))
LONG_CHARS = st.sampled_from(list("abc xyz#{}'\t") + ["\u00a0", "é", "✓", "\\n", '\\"', "\\\\", "\\u0041"])
COMMENT = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=15).map(
    lambda s: "#" + s
)


def flat(*parts: object) -> Tokens:
    out: Tokens = []
    for part in parts:
        out.extend(part if isinstance(part, list) else [part])  # type: ignore[arg-type]
    return out


# ------------------------------------------------------------- values --


@st.composite
def long_string(draw: st.DrawFn) -> str:
    base = " " * draw(st.integers(0, 6))
    lines = draw(st.lists(
        st.tuples(st.integers(0, 3), st.lists(LONG_CHARS, max_size=8).map("".join)), min_size=1, max_size=4
    ))
    body = [(base + " " * extra + text) if text.strip() else text for extra, text in lines]
    open_inline, close_inline = draw(st.booleans()), draw(st.booleans())
    text = '"""' + ("" if open_inline else "\n") + "\n".join(body)
    return text + ('"""' if close_inline else "\n" + base + '"""')


def string() -> st.SearchStrategy[str]:
    return st.builds(json.dumps, st.text(PLAIN, max_size=12), ensure_ascii=st.booleans())


def text() -> st.SearchStrategy[str]:
    return st.one_of(string(), string(), long_string(), st.sampled_from(["$p", "$q"]))


def literal() -> st.SearchStrategy[str]:
    return st.one_of(string(), st.sampled_from(WORDS + NUMBERS + ["true", "false", "null"]), long_string())


def sep_by(items: list[Tokens], sep: str = ",") -> Tokens:
    return [t for i, item in enumerate(items) for t in ([sep] if i else []) + item]


def commas(draw: st.DrawFn, items: list[Tokens]) -> Tokens:
    """Items separated by commas, with a trailing comma now and then."""
    return sep_by(items) + ([","] if items and draw(st.booleans()) else [])


@st.composite
def value(draw: st.DrawFn, depth: int = 2) -> Tokens:
    kind = draw(st.integers(0, 3 if depth else 1))
    if kind == 0:
        return [draw(literal())]
    if kind == 1:
        return [draw(st.sampled_from(["$a", "$sum"]))]
    items = draw(st.lists(value(depth - 1), max_size=3))
    if kind == 2:
        return flat("[", commas(draw, items), "]")
    open_, close = draw(st.sampled_from(["<>", "{}"]))
    entries = [flat(draw(st.sampled_from(KEYS)), ":", item) for item in items]
    return flat(open_, commas(draw, entries), close)


# ----------------------------------------------------------- patterns --


@st.composite
def pattern_atom(draw: st.DrawFn, depth: int) -> Tokens:
    case = lambda: draw(st.sampled_from([[], ["ignoring", "case"]]))  # noqa: E731
    kind = draw(st.integers(0, 12 if depth else 9))
    if kind == 0:
        return flat(draw(st.one_of(literal(), st.just("$v"))), case())
    if kind == 1:
        return flat(draw(st.sampled_from(NUMBERS)), "within", draw(st.sampled_from(NUMBERS)))
    if kind in (2, 3):
        return [draw(st.sampled_from(["any", "absent"]))]
    if kind == 4:
        return flat(draw(st.sampled_from(["starts", "ends"])), "with", draw(text()), case())
    if kind == 5:
        return ["matches", draw(st.sampled_from(REGEXES))]
    if kind == 6:
        values = draw(st.lists(value(1), max_size=3))
        return flat("one", "of", "[", commas(draw, values), "]")
    if kind == 7:
        op = draw(st.sampled_from([["at", "least"], ["at", "most"], ["above"], ["below"]]))
        return flat(op, draw(st.sampled_from(NUMBERS)))
    if kind == 8:
        return ["between", draw(st.sampled_from(NUMBERS)), "and", draw(st.sampled_from(NUMBERS))]
    if kind == 9:
        return flat("contains", draw(pattern_not(0)))
    if kind == 10:
        return draw(object_pattern(depth - 1))
    if kind == 11:
        return flat("not", draw(pattern_not(depth - 1)))
    items = draw(st.lists(pattern_or(depth - 1), max_size=3))
    return flat("[", commas(draw, items), "]")


def pattern_not(depth: int) -> st.SearchStrategy[Tokens]:
    return pattern_atom(depth)


@st.composite
def pattern_or(draw: st.DrawFn, depth: int) -> Tokens:
    alternatives = draw(st.lists(st.lists(pattern_not(depth), min_size=1, max_size=2), min_size=1, max_size=2))
    return flat(*[t for i, alt in enumerate(alternatives) for t in (["or"] if i else []) + [
        x for j, p in enumerate(alt) for x in (["and"] if j else []) + p
    ]])


@st.composite
def object_pattern(draw: st.DrawFn, depth: int = 2) -> Tokens:
    entries = [flat(draw(st.sampled_from(KEYS)), ":", p) for p in draw(st.lists(pattern_or(depth), max_size=3))]
    open_, close = draw(st.sampled_from(["<>", "{}"]))
    return flat(open_, commas(draw, entries), close)


def args() -> st.SearchStrategy[Tokens]:
    return st.one_of(object_pattern(), st.just(["$args"]))


# --------------------------------------------------------- predicates --


@st.composite
def step(draw: st.DrawFn) -> Tokens:
    if draw(st.integers(0, 4)) == 0:
        return ["any", "tool"]
    return flat(draw(st.sampled_from(TOOLS)), draw(st.one_of(st.just([]), args().map(lambda a: ["with", *a]))))


@st.composite
def count(draw: st.DrawFn) -> Tokens:
    n = draw(st.sampled_from(["1", "2", "$n"]))
    return draw(st.sampled_from([
        [], ["once"], ["twice"], [n, "times"], ["at", "least", n, "times"],
        ["at", "most", n, "times"], ["between", n, "and", "3", "times"],
    ]))


@st.composite
def predicate(draw: st.DrawFn) -> Tokens:
    tool = draw(st.sampled_from(TOOLS))
    num = lambda: draw(st.sampled_from(NUMBERS))  # noqa: E731
    case = lambda: draw(st.sampled_from([[], ["ignoring", "case"]]))  # noqa: E731
    with_args = lambda: draw(st.one_of(st.just([]), args().map(lambda a: ["with", *a])))  # noqa: E731
    steps = lambda: [t for i, s in enumerate(draw(st.lists(step(), min_size=2, max_size=3)))  # noqa: E731
                     for t in (["then"] if i else []) + s]
    forms = [
        lambda: flat("called", draw(step()), draw(count())),
        lambda: flat("called", steps()),
        lambda: flat("calls", "are", steps()),
        lambda: flat("only", "called", sep_by([[t] for t in draw(st.lists(st.sampled_from(TOOLS), min_size=1, max_size=3))])),
        lambda: flat(draw(st.sampled_from(["first", "last"])), "call", tool, with_args()),
        lambda: flat("every", "call", tool, "with", draw(args())),
        lambda: draw(st.sampled_from([["no", "tool", "calls"], ["no", "error"], ["final", "text", "is", "empty"]])),
        lambda: flat("final", "text", draw(st.sampled_from([["contains"], ["is"], ["starts", "with"], ["ends", "with"]])), draw(text()), case()),
        lambda: ["final", "text", "matches", draw(st.sampled_from(REGEXES))],
        lambda: flat("final", "number", "is", num(), draw(st.sampled_from([[], ["within", "0.5"]]))),
        lambda: flat("final", "number", draw(st.sampled_from([["at", "least"], ["above"], ["below"]])), num()),
        lambda: ["final", "number", "between", num(), "and", num()],
        lambda: flat("final", "json", draw(pattern_not(2))),
        lambda: ["tokens", "at", "most", num()],
        lambda: ["duration", "at", "most", draw(st.sampled_from(DURATIONS))],
        lambda: flat("judge", draw(text()), draw(st.sampled_from([[], ["at", "least", "0.7"]]))),
        lambda: flat(draw(st.sampled_from(["check", '"no"', "x.y"])), "(",
                     commas(draw, [flat(k, ":", draw(value(1))) for k in draw(st.lists(st.sampled_from(KEYS), max_size=2))]), ")"),
    ]
    return draw(st.sampled_from(forms))()


@st.composite
def expr(draw: st.DrawFn, depth: int = 2) -> Tokens:
    def operand() -> Tokens:
        roll = draw(st.integers(0, 5 if depth else 3))
        if roll == 4:
            return flat("not", draw(expr(depth - 1)) if draw(st.booleans()) else draw(predicate()))
        if roll == 5:
            return flat("(", draw(expr(depth - 1)), ")")
        return draw(predicate())

    groups = [[operand() for _ in range(draw(st.integers(1, 2)))] for _ in range(draw(st.integers(1, 2)))]
    return flat(*[x for i, g in enumerate(groups) for x in (["or"] if i else []) + [
        t for j, p in enumerate(g) for t in (["and"] if j else []) + p
    ]])


@st.composite
def expectation(draw: st.DrawFn) -> Tokens:
    fallbacks = draw(st.lists(expr(1), max_size=2))
    return flat("expect", draw(expr()), *[flat("else", f, "for", "0.5") for f in fallbacks])


# --------------------------------------------------------- statements --


@st.composite
def setting(draw: st.DrawFn) -> Tokens:
    num = lambda: draw(st.sampled_from(NUMBERS))  # noqa: E731
    reason = lambda: draw(st.sampled_from([[], [draw(text())]]))  # noqa: E731
    tags = lambda: draw(st.lists(st.sampled_from(WORDS + ['"a b"', "$t"]), min_size=1, max_size=3))  # noqa: E731
    forms = [
        lambda: flat("tags", sep_by([[t] for t in tags()])),
        lambda: ["repeat", num()], lambda: ["pass", "rate", "at", "least", num()],
        lambda: ["timeout", draw(st.sampled_from(DURATIONS))], lambda: ["system", draw(text())],
        lambda: ["mode", draw(st.sampled_from(["agent", "single-turn"]))], lambda: ["max", "turns", num()],
        lambda: flat("skip", reason()), lambda: flat("xfail", reason()),
    ]
    return draw(st.sampled_from(forms))()


@st.composite
def head_stmt(draw: st.DrawFn) -> Tokens:
    return draw(st.one_of(
        st.builds(lambda t: ["suite", t], text()), st.builds(lambda t: ["description", t], text()),
        st.builds(lambda s: ["use", s], string()), setting(), expectation(),
    ))


@st.composite
def table(draw: st.DrawFn) -> list[Tokens]:
    width = draw(st.integers(1, 3))
    rows = draw(st.lists(st.lists(value(1), min_size=width, max_size=width), min_size=1, max_size=3))
    return [["examples"]] + [flat("|", *[flat(cell, "|") for cell in row]) for row in rows]


@st.composite
def case_block(draw: st.DrawFn) -> list[Tokens]:
    body = draw(st.lists(st.one_of(
        setting(), expectation(), expectation(), st.builds(lambda t: ["prompt", t], text()),
        st.builds(lambda v: ["setup", *v], value()),
    ), max_size=4))
    ending = draw(st.sampled_from([[], draw(table()), [["examples", "from", draw(string())]]]))
    return [["case", draw(text())], *body, *ending]


TYPES = [["string"], ["array"], ["array", "of", "integer"], ["array", "of", "array"],
         ["one", "of", "[", "a", ",", "1", "]"], ["one", "of", "[", "]"]]
ACTIONS = st.sampled_from(["returns", "fails"])


@st.composite
def tool_stmt(draw: st.DrawFn) -> Tokens:
    desc = draw(st.sampled_from([[], [draw(text())]]))
    forms = [
        lambda: flat("param", draw(st.sampled_from(KEYS)), draw(st.sampled_from([[], ["?"]])), ":",
                     draw(st.sampled_from(TYPES)), desc),
        lambda: flat("when", draw(args()), draw(ACTIONS), draw(text())),
        lambda: flat("otherwise", draw(ACTIONS), draw(text())),
    ]
    return draw(st.sampled_from(forms))()


@st.composite
def tool_block(draw: st.DrawFn) -> list[Tokens]:
    desc = draw(st.sampled_from([[], [draw(text())]]))
    return [flat("tool", draw(st.sampled_from(TOOLS)), desc), *draw(st.lists(tool_stmt(), max_size=3))]


@st.composite
def statements(draw: st.DrawFn) -> list[Tokens]:
    out: list[Tokens] = []
    for _ in range(draw(st.integers(0, 3))):
        out += draw(tool_block()) if draw(st.integers(0, 3)) == 0 else [draw(head_stmt())]
    for _ in range(draw(st.integers(0, 3))):
        out += (draw(tool_block()) if draw(st.integers(0, 3)) == 0 else []) + draw(case_block())
    return out + (draw(tool_block()) if draw(st.integers(0, 4)) == 0 else [])


# ------------------------------------------------------------- layout --


@st.composite
def evl_file(draw: st.DrawFn) -> str:
    pad = lambda: draw(st.sampled_from(["", " ", "  ", "    ", "\t"]))  # noqa: E731
    lines: list[str] = []
    for tokens in draw(statements()):
        for _ in range(draw(st.integers(0, 2))):
            lines.append(draw(st.sampled_from(["", pad() + draw(COMMENT)])))
        line, depth = pad() + tokens[0], 0
        for prev, tok in zip(tokens, tokens[1:]):
            depth += (prev in OPENERS) - (prev in CLOSERS)
            line += draw(separator(depth, tok)) + tok
        line += draw(st.sampled_from(["", "  " + draw(COMMENT)]))
        lines.append(line)
    lines += draw(st.lists(st.sampled_from(["", draw(COMMENT)]), max_size=2))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))


@st.composite
def separator(draw: st.DrawFn, depth: int, nxt: str) -> str:
    gap = draw(st.sampled_from([" ", " ", " ", "  ", "\t"]))
    if depth <= 0 and nxt not in BREAKABLE:
        return gap
    indent = draw(st.sampled_from(["", "  ", "      "]))
    return draw(st.sampled_from([
        gap, gap, "\n" + indent, "  " + draw(COMMENT) + "\n" + indent,
        "\n" + indent + draw(COMMENT) + "\n" + indent,
    ]))


# --------------------------------------------------------- properties --

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def comment_texts(src: str) -> Counter[str]:
    return Counter(c.text.rstrip() for c in parse(src).comments)


@SETTINGS
@given(evl_file())
def test_format_keeps_meaning_and_comments(src: str) -> None:
    out = format_text(src)
    assert parse(out) == parse(src)
    assert comment_texts(out) == comment_texts(src)


@SETTINGS
@given(evl_file())
def test_format_is_idempotent(src: str) -> None:
    out = format_text(src)
    assert format_text(out) == out


@SETTINGS
@given(evl_file())
def test_output_is_tidy(src: str) -> None:
    out = format_text(src)
    lines = out.split("\n")
    assert all(line == line.rstrip() for line in lines)
    assert out == "" or (out.endswith("\n") and not out.endswith("\n\n") and lines[0] != "")
    if '"""' not in out:  # a long string may hold blank lines of its own
        assert "\n\n\n" not in out
