"""Syntax errors: a Lark error -> one diagnostic, and where the parse may go on.

`diagnose` names what went wrong in the user's words (a keyword list, a
did-you-mean, the bracket that is never closed, the long string that never
ends) and returns the position after the failed statement, where the
parser's error recovery (`_recovery._Recovery`) resumes.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from . import _ast as a
from ._diagnostics import Diagnostic, error
from ._grammar import NestingTooDeep, keyword_terminals
from ._joiner import MAX_DEPTH, OPENERS, Continuations, LineJoiner
from ._tokens import Token, is_token
from ._transform import token_span

_PREDICATE_WORDS = (
    "called", "calls", "only", "first", "last", "every", "no", "not", "final",
    "tokens", "duration", "judge",
    "world",  # v2: `expect world PATTERN`
)
_TERMINAL_WORDS = {
    "NAME": "a name", "STRING": "a string", "NUMBER": "a number",
    "PLACEHOLDER": "a `$placeholder`", "DURATION": "a duration such as `30s`",
    "REGEX": "a regex such as `/pattern/i`", "_NL": "the end of the line",
    "$END": "the end of the file", "_LANGLE": "`<`", "_RANGLE": "`>`", "_LSQB": "`[`",
    "_RSQB": "`]`", "_LBRACE": "`{`", "_RBRACE": "`}`", "_LPAR": "`(`", "_RPAR": "`)`",
    "COMMA": "`,`", "COLON": "`:`", "VBAR": "`|`", "OPTIONAL": "`?`",
}
_CLOSER = {"<": ">", "[": "]", "{": "}", "(": ")"}
_FIRST_WORD = re.compile(r"[ \t\f\r]*([A-Za-z]+|\|)(?![A-Za-z0-9_.\-])[ \t\f\r]*([:,>\])}]?)")


def diagnose(
    exc: UnexpectedInput, text: str, filename: str, parser: Lark, joiner: LineJoiner,
) -> tuple[Diagnostic, int]:
    """Turn a Lark error into a diagnostic; also return where the parse may resume."""
    keywords = keyword_terminals(parser)
    if isinstance(exc, NestingTooDeep):
        tok = exc.token
        depth = joiner.depth - (1 if tok.type in OPENERS else 0)
        return error("E104", f"nesting deeper than {MAX_DEPTH} levels", token_span(tok, filename),
                     help="flatten the pattern or expression"), logical_end(text, tok.start_pos or 0, depth)
    if isinstance(exc, UnexpectedCharacters):
        diag, resume = _unexpected_char(exc, text, filename, keywords, joiner)
        if joiner.depth > 0 and resume > (exc.pos_in_stream or 0):  # inside brackets: resume at the next
            # statement at the latest (an unclosed `"` in `<a: "x>` leaves the `<` open to the file's end)
            resume = min(resume, _next_statement(text, exc.pos_in_stream or 0, statement_words(parser)))
        return diag, resume
    assert isinstance(exc, UnexpectedToken)
    tok = exc.token
    at_end = tok.type == "$END" or tok.start_pos is None or tok.end_pos is None
    unclosed = _unclosed_bracket(tok, at_end, text, joiner, statement_words(parser))
    if unclosed is not None:
        opener, resume = unclosed
        return _never_closed(opener, text, resume, filename), resume
    if tok.type == "STRING" and str(tok) == '""' and text.startswith('"', tok.end_pos):
        return _unclosed_long_string(tok.start_pos, text, filename), len(text)
    if at_end:
        resume = len(text)
    elif tok.type == "_NL":  # an unexpected line break ends its own statement
        resume = tok.start_pos
    elif joiner.depth > 0:
        # Inside brackets: the statement ends where they close, or at the next line that starts a
        # statement if that comes first (`<xs: [1, 2>`: the `>` closed the `[`, and `<` stays open
        # to the end of the file). Scanning no further than that line keeps many errors linear.
        stop = _next_statement(text, tok.end_pos, statement_words(parser))
        resume = logical_end(text, tok.end_pos, joiner.depth, stop)
    else:
        resume = logical_end(text, tok.end_pos, joiner.depth)
    expected = set(exc.accepts or exc.expected or ()) - {"COMMENT"}
    prev = exc.token_history[-1] if exc.token_history else _last_shifted(exc)
    if prev is not None and prev.type == "NAME" and expected <= {"_LPAR"}:
        hint = _suggest(str(prev), _PREDICATE_WORDS)
        if hint:
            return error("E101", f"unknown predicate `{prev}`", token_span(prev, filename),
                         label="not a predicate of the language", suggestion=hint), resume
    words, wanted = _expected_words(expected, keywords)
    if at_end:
        line = text.count("\n") + 1
        col = len(text) - (text.rfind("\n") + 1) + 1
        span = a.Span.model_construct(file=filename, line=line, column=col, end_line=line, end_column=col + 1)
    else:
        span = token_span(tok, filename)
        if tok.type == "_NL":
            span = span.model_copy(update={"end_line": span.line, "end_column": span.column + 1})
    suggestion = _suggest(str(tok), words) if tok.type not in ("STRING", "NUMBER") else None
    if suggestion is not None and wanted.count(", ") >= SHORT_LIST:  # the near word first, the long list cut
        shown = wanted.split(", ")
        shown.sort(key=lambda w: w != f"`{suggestion}`")  # the near word first: it is most likely meant
        return error("E100", f"unexpected {_describe_token(tok)}", span, label="not a word that can stand here",
                     suggestion=suggestion, help=f"expected one of {len(shown) + 1} words here, such as "
                                                 f"{', '.join(shown[:SHORT_LIST])}, ..."), resume
    return error("E100", f"unexpected {_describe_token(tok)}", span, label=f"expected {wanted}",
                 suggestion=suggestion), resume


SHORT_LIST = 6
"""Past this many expected words, an error with a did-you-mean shows it first and only the first few."""


def _last_shifted(exc: UnexpectedToken) -> Token | None:
    """The token the parser took last (Lark gives a history only when the lexer failed)."""
    state = getattr(exc, "interactive_parser", None)
    values = state.parser_state.value_stack if state is not None else []
    return values[-1] if values and is_token(values[-1]) else None


@lru_cache(maxsize=4)
def statement_words(parser: Lark) -> frozenset[str]:
    """The words (and `|`) that can start a statement, read from the grammar."""
    keywords = keyword_terminals(parser)
    accepts = parser.parse_interactive("").accepts()
    return frozenset({keywords[t] for t in accepts if t in keywords} | ({"|"} if "VBAR" in accepts else set()))


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _unclosed_bracket(
    tok: Token, at_end: bool, text: str, joiner: LineJoiner, starts: frozenset[str],
) -> tuple[Token, int] | None:
    """The bracket left open and where the next statement starts, when the error shows that a
    bracket's statement ran on into the next one (or to the end of the file).

    That is so at the end of the file; when the error is on a later line than
    the bracket and that line starts with a statement's first word (not
    followed by `:`, a comma or a closing bracket, which would make it a key or
    a value inside the brackets); or when the bracket is closed nowhere after
    the error: the parse then resumes at the next line that starts a statement.
    """
    if not joiner.open:
        return None
    opener, first = joiner.open[-1], joiner.open[0].line
    if at_end or tok.start_pos is None or tok.end_pos is None:
        return opener, len(text)
    if tok.line is None or first is None or first >= tok.line:
        return None
    here = _line_start(text, tok.start_pos)
    if _starts_statement(text, here, starts):
        return opener, here
    if logical_end(text, tok.end_pos, joiner.depth) < len(text):
        return None  # the bracket is closed further on: an error inside it
    return opener, _next_statement(text, tok.end_pos, starts)


def _starts_statement(text: str, pos: int, starts: frozenset[str]) -> bool:
    match = _FIRST_WORD.match(text, pos)
    return match is not None and match.group(1) in starts and not match.group(2)


def _next_statement(text: str, pos: int, starts: frozenset[str]) -> int:
    """The start of the first line after `pos` that starts a statement, or the end of the text."""
    nl = text.find("\n", pos)
    while nl >= 0:
        if _starts_statement(text, nl + 1, starts):
            return nl + 1
        nl = text.find("\n", nl + 1)
    return len(text)


def _never_closed(opener: Token, text: str, resume: int, filename: str) -> Diagnostic:
    closer = _CLOSER.get(str(opener), "?")
    if resume >= len(text):
        where = "before the end of the file"
    else:
        where = f"before line {text.count(chr(10), 0, resume) + 1}, where a new statement starts"
    return error("E106", f"`{opener}` is never closed", token_span(opener, filename),
                 label=f"no `{closer}` {where}",
                 help=f"close it with `{closer}` at the end of its statement")


def _unclosed_long_string(start: int, text: str, filename: str) -> Diagnostic:
    line = text.count("\n", 0, start) + 1
    col = start - _line_start(text, start) + 1
    span = a.Span.model_construct(file=filename, line=line, column=col, end_line=line, end_column=col + 3)
    return error("E102", "unterminated long string", span,
                 label='this `"""` is never closed',
                 help='end the text with `"""`; everything after it to the end of the file was read as its text')


def logical_end(text: str, pos: int, depth: int, stop: int | None = None) -> int:
    """Where the statement holding `pos` ends: a line break outside brackets and
    strings that no continuation line (`and`, `or`, `then`, `else`) follows;
    ``stop`` (default: the end of the text) when none comes before it."""
    continuations = Continuations(text)
    i, n = pos, len(text) if stop is None else stop
    while i < n:
        ch = text[i]
        if ch == '"':
            close = '"""' if text.startswith('"""', i) else '"'
            j = text.find(close, i + len(close))
            if close == '"':
                nl = text.find("\n", i + 1)
                j = j if j >= 0 and (nl < 0 or j < nl) else (nl - 1 if nl >= 0 else n)
            i = (n if j < 0 else j + len(close))
            continue
        if ch == "#":
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
            continue
        if ch in "<[{(":
            depth += 1
        elif ch in ">]})":
            depth = max(0, depth - 1)
        elif ch == "\n" and depth == 0 and not continuations.after(i + 1):
            return i
        i += 1
    return n


def _unexpected_char(
    exc: UnexpectedCharacters, text: str, filename: str, keywords: dict[str, str], joiner: LineJoiner,
) -> tuple[Diagnostic, int]:
    pos = exc.pos_in_stream if exc.pos_in_stream is not None else len(text)
    ch = text[pos] if pos < len(text) else ""
    if ch == '"' and pos >= 2 and text.startswith('"""', pos - 2):
        return _unclosed_long_string(pos - 2, text, filename), len(text)
    resume = logical_end(text, pos, joiner.depth)
    span = a.Span.model_construct(file=filename, line=exc.line, column=exc.column,
                                  end_line=exc.line, end_column=exc.column + 1)
    if ch == '"':
        return error("E102", "unterminated string", span, label="this string has no closing quote",
                     help='close it on the same line, or use """...""" for text over several lines'), resume
    if ch == "/":
        return error("E102", "unterminated regex", span, label="expected a closing `/`"), resume
    shown = repr(ch) if not ch.isprintable() or ch.isspace() else f"`{ch}`"
    allowed = set(exc.allowed or ()) - {"COMMENT"}
    parser_state = getattr(exc, "interactive_parser", None)
    if parser_state is not None:  # what the parser accepts here, not every token the lexer may see
        try:
            allowed = set(parser_state.accepts()) - {"COMMENT"} or allowed
        except Exception:  # noqa: BLE001 (a best effort for a better message)
            pass
    _, wanted = _expected_words(allowed, keywords)
    return error("E101", f"unexpected character {shown}", span, label=f"expected {wanted}"), resume


def _describe_token(tok: Token) -> str:
    if tok.type == "$END":
        return "end of file"
    if tok.type == "_NL":
        return "end of line"
    if tok.type in ("STRING", "LONG_STRING"):
        return f"string {_clip(str(tok))}"
    if tok.type == "NUMBER":
        return f"number `{tok}`"
    return f"`{_clip(str(tok))}`"


def _clip(s: str, limit: int = 40) -> str:
    s = s.replace("\n", "\\n")
    return s if len(s) <= limit else s[: limit - 3] + "..."


_PATTERN_WORDS = {"_POR": "or", "_PAND": "and"}
"""The postlexer's `or` / `and` of object patterns (v2), as the words a user writes."""


def _expected_words(expected: set[str], keywords: dict[str, str]) -> tuple[list[str], str]:
    words = sorted({keywords[t] for t in expected if t in keywords} | {_PATTERN_WORDS[t] for t in expected
                                                                        if t in _PATTERN_WORDS})
    others = [_TERMINAL_WORDS[t] for t in sorted(expected) if t in _TERMINAL_WORDS and t != "_NL"]
    if "_NL" in expected:
        others.append(_TERMINAL_WORDS["_NL"])
    shown = [f"`{w}`" for w in words] + others
    if not shown:
        return words, "something else"
    if len(shown) == 1:
        return words, shown[0]
    return words, ", ".join(shown[:-1]) + " or " + shown[-1]


def _suggest(word: str, candidates: list[str] | tuple[str, ...]) -> str | None:
    if not word or not word[0].isalpha():
        return None
    close = difflib.get_close_matches(word.lower(), candidates, n=1, cutoff=0.6)
    return close[0] if close else None


