"""Properties of the formatter over generated, valid .evl files.

The strategy builds whole files from the grammar: random head statements,
tool blocks and cases holding random predicates, patterns and values, each
statement a list of tokens. A layout step then joins the tokens the way
people write them: uneven spaces and indentation, line breaks inside
brackets and before `then` / `and` / `or` / `else`, comments at line ends,
on their own lines and inside multi-line statements, and blank lines.

For every such file: formatting is idempotent, keeps the meaning (the AST,
spans aside) and keeps every comment, and its output has no trailing white
space and ends in exactly one newline. The same at narrow line widths
(every bracket and chain broken), and with lone `\r` characters dropped in
anywhere: what still parses formats to the same AST and compiles to the
same cases.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaldsl import EvlError
from evaldsl.syntax._format import format_text
from evaldsl.syntax._parser import parse

T = TypeVar("T")
Tokens = list[str]
OPENERS, CLOSERS = set("<[{("), set(">]})")
BREAKABLE = {"then", "and", "or", "else"}

WORDS = ["add", "x", "search", "send_email", "calc.add", "x-y", "_t", "utf-8", "True"]
KEYS = [*WORDS, '"then"', '"content type"', '"any"', "path", "query"]
TOOLS = ["search", "send_email", "read_file", "calc.add", "_t", '"then"', '"gh:issue"', "$tool"]
NUMBERS = ["0", "4", "-2.5", "1e3", "3.14", "10", "-7", "1E-2", "$n", "100"]
REGEXES = [r"/a+/", r"/\d+/i", r"/^x$/ms", r"/a\/b/", r"/[a-z]+\.toml$/x"]
DURATIONS = ["30s", "500ms", "2m", "1h"]
IGNORING = [[], ["ignoring", "case"]]
PLAIN = st.characters(blacklist_categories=("Cs",))
LONG_ATOMS = [*"abc xyz#{}'\t", "\u00a0", "é", "✓", "\\n", '\\"', "\\\\", "\\u0041"]
COMMENT_CHARS = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"))
COMMENT = st.text(COMMENT_CHARS, max_size=15).map(lambda s: "#" + s)
TYPES = [
    ["string"], ["array"], ["array", "of", "integer"], ["array", "of", "array"],
    ["one", "of", "[", "a", ",", "1", "]"], ["one", "of", "[", "]"],
]


def flat(*parts: str | Tokens) -> Tokens:
    out: Tokens = []
    for part in parts:
        out.extend([part] if isinstance(part, str) else part)
    return out


def sep_by(items: Sequence[Tokens], sep: str = ",") -> Tokens:
    return [t for i, item in enumerate(items) for t in ([sep] if i else []) + item]


def pick(draw: st.DrawFn, options: Sequence[T]) -> T:
    return draw(st.sampled_from(options))


def distinct_keys(draw: st.DrawFn, count: int) -> list[str]:
    """`count` keys, no two naming the same key (a key written twice is an error, E105)."""
    count = min(count, len({k.strip('"') for k in KEYS}))
    return draw(st.lists(st.sampled_from(KEYS), min_size=count, max_size=count,
                         unique_by=lambda k: k.strip('"')))


def one_form(draw: st.DrawFn, forms: Sequence[Callable[[], Tokens]]) -> Tokens:
    """Build only the form drawn, so unused alternatives cost nothing."""
    return pick(draw, forms)()


def commas(draw: st.DrawFn, items: Sequence[Tokens]) -> Tokens:
    """Items separated by commas, with a trailing comma now and then."""
    return sep_by(items) + ([","] if items and draw(st.booleans()) else [])


# ------------------------------------------------------------- values --


@st.composite
def long_string(draw: st.DrawFn) -> str:
    base = " " * draw(st.integers(0, 6))
    line = st.tuples(st.integers(0, 3), st.lists(st.sampled_from(LONG_ATOMS), max_size=8))
    body = [
        base + " " * extra + "".join(atoms) if "".join(atoms).strip() else "".join(atoms)
        for extra, atoms in draw(st.lists(line, min_size=1, max_size=4))
    ]
    opening = '"""' if draw(st.booleans()) else '"""\n'
    closing = '"""' if draw(st.booleans()) else "\n" + base + '"""'
    return opening + "\n".join(body) + closing


def string() -> st.SearchStrategy[str]:
    return st.builds(json.dumps, st.text(PLAIN, max_size=12), ensure_ascii=st.booleans())


def text() -> st.SearchStrategy[str]:
    return st.one_of(string(), string(), long_string(), st.sampled_from(["$p", "$q"]))


def literal() -> st.SearchStrategy[str]:
    words = st.sampled_from([*WORDS, *NUMBERS, "true", "false", "null"])
    return st.one_of(string(), words, long_string())


@st.composite
def value(draw: st.DrawFn, depth: int = 2) -> Tokens:
    kind = draw(st.integers(0, 3 if depth else 1))
    if kind == 0:
        return [draw(literal())]
    if kind == 1:
        return [pick(draw, ["$a", "$sum"])]
    items = draw(st.lists(value(depth - 1), max_size=3))
    if kind == 2:
        return flat("[", commas(draw, items), "]")
    open_, close = pick(draw, ["<>", "{}"])
    entries = [flat(k, ":", item) for k, item in zip(distinct_keys(draw, len(items)), items)]
    return flat(open_, commas(draw, entries), close)


# ----------------------------------------------------------- patterns --


@st.composite
def pattern_not(draw: st.DrawFn, depth: int) -> Tokens:
    num = lambda: pick(draw, NUMBERS)
    forms = [
        lambda: flat(draw(st.one_of(literal(), st.just("$v"))), pick(draw, IGNORING)),
        lambda: [num(), "within", num()],
        lambda: [pick(draw, ["any", "absent"])],
        lambda: flat(pick(draw, ["starts", "ends"]), "with", draw(text()), pick(draw, IGNORING)),
        lambda: ["matches", pick(draw, REGEXES)],
        lambda: flat("one", "of", "[", commas(draw, draw(st.lists(value(1), max_size=3))), "]"),
        lambda: flat(pick(draw, [["at", "least"], ["at", "most"], ["above"], ["below"]]), num()),
        lambda: ["between", num(), "and", num()],
        lambda: flat("contains", draw(pattern_not(0))),
    ]
    if depth:
        forms += [
            lambda: draw(object_pattern(depth - 1)),
            lambda: flat("not", draw(pattern_not(depth - 1))),
            lambda: flat("[", commas(draw, draw(st.lists(pattern_or(depth - 1), max_size=3))), "]"),
        ]
    return one_form(draw, forms)


@st.composite
def pattern_or(draw: st.DrawFn, depth: int) -> Tokens:
    conjunction = st.lists(pattern_not(depth), min_size=1, max_size=2).map(
        lambda x: sep_by(x, "and")
    )
    return sep_by(draw(st.lists(conjunction, min_size=1, max_size=2)), "or")


@st.composite
def object_pattern(draw: st.DrawFn, depth: int = 2) -> Tokens:
    patterns = draw(st.lists(pattern_or(depth), max_size=3))
    entries = [flat(k, ":", p) for k, p in zip(distinct_keys(draw, len(patterns)), patterns)]
    open_, close = pick(draw, ["<>", "{}"])
    return flat(open_, commas(draw, entries), close)


def args() -> st.SearchStrategy[Tokens]:
    return st.one_of(object_pattern(), st.just(["$args"]))


def with_args() -> st.SearchStrategy[Tokens]:
    return st.one_of(st.just([]), args().map(lambda a: ["with", *a]))


# --------------------------------------------------------- predicates --


@st.composite
def step(draw: st.DrawFn) -> Tokens:
    if draw(st.integers(0, 4)) == 0:
        return ["any", "tool"]
    return flat(pick(draw, TOOLS), draw(with_args()))


@st.composite
def count(draw: st.DrawFn) -> Tokens:
    n = pick(draw, ["1", "2", "$n"])
    return pick(draw, [
        [], ["once"], ["twice"], [n, "times"], ["at", "least", n, "times"],
        ["at", "most", n, "times"], ["between", n, "and", "3", "times"],
    ])


@st.composite
def call_predicate(draw: st.DrawFn) -> Tokens:
    tool = pick(draw, TOOLS)
    steps = lambda: sep_by(draw(st.lists(step(), min_size=2, max_size=3)), "then")
    names = st.lists(st.sampled_from(TOOLS), min_size=1, max_size=3)
    tools = lambda: sep_by([[t] for t in draw(names)])
    return one_form(draw, [
        lambda: flat("called", draw(step()), draw(count())),
        lambda: flat("called", steps()),
        lambda: flat("calls", "are", steps()),
        lambda: flat("only", "called", tools()),
        lambda: flat(pick(draw, ["first", "last"]), "call", tool, draw(with_args())),
        lambda: flat("every", "call", tool, "with", draw(args())),
        lambda: pick(draw, [["no", "tool", "calls"], ["no", "error"]]),
    ])


@st.composite
def other_predicate(draw: st.DrawFn) -> Tokens:
    num = lambda: pick(draw, NUMBERS)
    text_op = lambda: pick(draw, [["contains"], ["is"], ["starts", "with"], ["ends", "with"]])
    entries = lambda: [flat(k, ":", draw(value(1))) for k in distinct_keys(draw, draw(st.integers(0, 2)))]
    return one_form(draw, [
        lambda: flat("final", "text", text_op(), draw(text()), pick(draw, IGNORING)),
        lambda: ["final", "text", "is", "empty"],
        lambda: ["final", "text", "matches", pick(draw, REGEXES)],
        lambda: flat("final", "number", "is", num(), pick(draw, [[], ["within", "0.5"]])),
        lambda: flat("final", "number", pick(draw, [["at", "least"], ["above"], ["below"]]), num()),
        lambda: ["final", "number", "between", num(), "and", num()],
        lambda: flat("final", "json", draw(pattern_not(2))),
        lambda: ["tokens", "at", "most", num()],
        lambda: ["duration", "at", "most", pick(draw, DURATIONS)],
        lambda: flat("judge", draw(text()), pick(draw, [[], ["at", "least", "0.7"]])),
        lambda: flat(pick(draw, ["check", '"no"', "x.y"]), "(", commas(draw, entries()), ")"),
        lambda: flat("world", draw(pattern_not(2))),  # v2
    ])


@st.composite
def expr(draw: st.DrawFn, depth: int = 2) -> Tokens:
    def operand() -> Tokens:
        roll = draw(st.integers(0, 5 if depth else 3))
        if roll == 4:
            return flat("not", draw(expr(depth - 1) if draw(st.booleans()) else call_predicate()))
        if roll == 5:
            return flat("(", draw(expr(depth - 1)), ")")
        return draw(call_predicate() if roll % 2 else other_predicate())

    def conjunction() -> Tokens:
        return sep_by([operand() for _ in range(draw(st.integers(1, 2)))], "and")

    return sep_by([conjunction() for _ in range(draw(st.integers(1, 2)))], "or")


@st.composite
def expectation(draw: st.DrawFn) -> Tokens:
    fallbacks = [flat("else", f, "for", "0.5") for f in draw(st.lists(expr(1), max_size=2))]
    return flat("expect", draw(expr()), *fallbacks)


# --------------------------------------------------------- statements --


@st.composite
def setting(draw: st.DrawFn) -> Tokens:
    num = lambda: pick(draw, NUMBERS)
    reason = lambda: pick(draw, [[], [draw(text())]])
    tags = lambda: draw(st.lists(st.sampled_from([*WORDS, '"a b"', "$t"]), min_size=1, max_size=3))
    return one_form(draw, [
        lambda: flat("tags", sep_by([[t] for t in tags()])),
        lambda: ["repeat", num()],
        lambda: ["pass", "rate", "at", "least", num()],
        lambda: ["timeout", pick(draw, DURATIONS)],
        lambda: ["system", draw(text())],
        lambda: ["mode", pick(draw, ["agent", "single-turn"])],
        lambda: ["max", "turns", num()],
        lambda: ["user", "turns", num()],  # v2
        lambda: flat("skip", reason()),
        lambda: flat("xfail", reason()),
    ])


@st.composite
def head_stmt(draw: st.DrawFn) -> Tokens:
    return one_form(draw, [
        lambda: ["suite", draw(text())],
        lambda: ["description", draw(text())],
        lambda: ["use", draw(string())],
        lambda: ["world", draw(string())],  # v2
        lambda: draw(setting()),
        lambda: draw(expectation()),
    ])


@st.composite
def table(draw: st.DrawFn) -> list[Tokens]:
    width = draw(st.integers(1, 3))
    row = st.lists(value(1), min_size=width, max_size=width)
    rows = draw(st.lists(row, min_size=1, max_size=3))
    return [["examples"], *[flat("|", *[flat(cell, "|") for cell in row]) for row in rows]]


@st.composite
def case_block(draw: st.DrawFn) -> list[Tokens]:
    body = draw(st.lists(st.one_of(
        setting(), expectation(), expectation(),
        text().map(lambda t: ["prompt", t]), value().map(lambda v: ["setup", *v]),
        text().map(lambda t: ["user", t]), text().map(lambda t: ["simulated", "user", t]), given_stmt(),  # v2
    ), max_size=4))
    ending = pick(draw, [[], draw(table()), [["examples", "from", draw(string())]]])
    return [["case", draw(text())], *body, *ending]


@st.composite
def answers(draw: st.DrawFn) -> Tokens:
    """`returns|fails TEXT`, then (v2) a sequence's later steps, each verb optional."""
    action = lambda: pick(draw, ["returns", "fails"])
    steps = draw(st.lists(st.tuples(st.sampled_from([[], ["returns"], ["fails"]]), text()), max_size=2))
    return flat(action(), draw(text()), *[flat("then", verb, t) for verb, t in steps])


@st.composite
def given_stmt(draw: st.DrawFn) -> Tokens:
    """`given TOOL [with ARGS] returns/fails ...` (v2)."""
    return flat("given", pick(draw, TOOLS), draw(with_args()), draw(answers()))


@st.composite
def tool_stmt(draw: st.DrawFn) -> Tokens:
    desc = lambda: pick(draw, [[], [draw(text())]])
    optional = lambda: pick(draw, [[], ["?"]])
    return one_form(draw, [
        lambda: flat("param", pick(draw, KEYS), optional(), ":", pick(draw, TYPES), desc()),
        lambda: flat("when", draw(args()), draw(answers())),
        lambda: flat("otherwise", draw(answers())),
    ])


@st.composite
def tool_block(draw: st.DrawFn) -> list[Tokens]:
    header = flat("tool", pick(draw, TOOLS), pick(draw, [[], [draw(text())]]))
    return [header, *draw(st.lists(tool_stmt(), max_size=3))]


@st.composite
def statements(draw: st.DrawFn) -> list[Tokens]:
    """A valid file's statements: a head (with tools), then cases with tools between."""
    out: list[Tokens] = []
    for _ in range(draw(st.integers(0, 3))):
        out += draw(tool_block()) if draw(st.integers(0, 3)) == 0 else [draw(head_stmt())]
    for _ in range(draw(st.integers(0, 3))):
        out += (draw(tool_block()) if draw(st.integers(0, 3)) == 0 else []) + draw(case_block())
    return out + (draw(tool_block()) if draw(st.integers(0, 4)) == 0 else [])


# ------------------------------------------------------------- layout --


@st.composite
def separator(draw: st.DrawFn, depth: int, nxt: str) -> str:
    """White space between two tokens; a line break where the language allows one."""
    gap = pick(draw, [" ", " ", " ", "  ", "\t"])
    if depth <= 0 and nxt not in BREAKABLE:
        return gap
    indent = pick(draw, ["", "  ", "      "])
    return pick(draw, [
        gap, gap, "\n" + indent, "  " + draw(COMMENT) + "\n" + indent,
        "\n" + indent + draw(COMMENT) + "\n" + indent,
    ])


@st.composite
def evl_file(draw: st.DrawFn) -> str:
    pad = lambda: pick(draw, ["", " ", "  ", "    ", "\t"])
    lines: list[str] = []
    for tokens in draw(statements()):
        for _ in range(draw(st.integers(0, 2))):
            lines.append(pick(draw, ["", pad() + draw(COMMENT)]))
        line, depth = pad() + tokens[0], 0
        for prev, tok in pairwise(tokens):
            depth += (prev in OPENERS) - (prev in CLOSERS)
            line += draw(separator(depth, tok)) + tok
        lines.append(line + pick(draw, ["", "  " + draw(COMMENT)]))
    lines += draw(st.lists(st.sampled_from(["", draw(COMMENT)]), max_size=2))
    return "\n".join(lines) + pick(draw, ["", "\n", "\n\n"])


# --------------------------------------------------------- properties --

SETTINGS = settings(
    max_examples=80, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


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


@settings(SETTINGS, max_examples=60)
@given(evl_file(), st.sampled_from([20, 40, 60]))
def test_narrow_widths_keep_meaning_and_are_idempotent(src: str, width: int) -> None:
    out = format_text(src, line_width=width)
    assert parse(out) == parse(src)
    assert comment_texts(out) == comment_texts(src)
    assert format_text(out, line_width=width) == out


def compiled(text: str) -> object:
    """What a text compiles to, lines aside, or the codes of its errors."""
    from _mutate import _meaning

    return _meaning(text, "/nonexistent-evaldsl-base")


@settings(SETTINGS, max_examples=40)
@given(evl_file(), st.lists(st.integers(0, 10_000), min_size=1, max_size=4))
def test_lone_carriage_returns_keep_their_meaning(src: str, cuts: list[int]) -> None:
    """A lone `\\r` (white space to the lexer, text in a comment or string) survives fmt."""
    for cut in sorted(cuts, reverse=True):
        i = cut % (len(src) + 1)
        src = src[:i] + "\r" + src[i:]
    try:
        before = parse(src)
    except EvlError:
        return  # a `\r` in the middle of a word, say: nothing to keep
    out = format_text(src)
    assert parse(out) == before
    assert compiled(out) == compiled(src)
    assert format_text(out) == out
