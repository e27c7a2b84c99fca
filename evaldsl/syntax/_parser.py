"""`parse(text)`: .evl text -> `Suite`, or an `EvlError` listing every problem.

This module is the one boundary where Lark's exceptions become evaldsl's
diagnostics (DESIGN rule 4). To report every syntax error in a file, not
only the first, a failed statement is blanked out (newlines kept, so every
position stays true) and the text parsed again, up to `MAX_ERRORS` times.
"""

from __future__ import annotations

import difflib
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from . import _ast as a
from ._diagnostics import Diagnostic, EvlError, error
from ._grammar import LOCK, MAX_DEPTH, NestingTooDeep, get_parser, keyword_terminals
from ._group import group
from ._hints import with_hint
from ._transform import ToAst

MAX_ERRORS = 20
_PREDICATE_WORDS = (
    "called", "calls", "only", "first", "last", "every", "no", "not", "final",
    "tokens", "duration", "judge",
)
_TERMINAL_WORDS = {
    "NAME": "a name", "STRING": "a string", "NUMBER": "a number",
    "PLACEHOLDER": "a `$placeholder`", "DURATION": "a duration such as `30s`",
    "REGEX": "a regex such as `/pattern/i`", "_NL": "the end of the line",
    "$END": "the end of the file", "_LANGLE": "`<`", "_RANGLE": "`>`", "_LSQB": "`[`",
    "_RSQB": "`]`", "_LBRACE": "`{`", "_RBRACE": "`}`", "_LPAR": "`(`", "_RPAR": "`)`",
    "COMMA": "`,`", "COLON": "`:`", "VBAR": "`|`", "OPTIONAL": "`?`",
}


def parse(text: str, filename: str = "<string>") -> a.Suite:
    """Parse .evl source into a `Suite`.

    Args:
        text: the file's contents.
        filename: shown in diagnostics and recorded in every span.

    Raises:
        EvlError: with every syntax and placement error found in the text.
    """
    suite, diagnostics = parse_with_diagnostics(text, filename)
    if any(d.severity == "error" for d in diagnostics):
        raise EvlError(diagnostics, {filename: text})
    return suite


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building a large tree.

    A parse makes hundreds of thousands of small acyclic objects; left on,
    the collector walks them all again and again and triples the time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_with_diagnostics(text: str, filename: str = "<string>") -> tuple[a.Suite, list[Diagnostic]]:
    """Parse, returning the (possibly partial) suite and all diagnostics, warnings included."""
    with gc_paused():
        return _parse_with_diagnostics(text, filename)


def _parse_with_diagnostics(text: str, filename: str) -> tuple[a.Suite, list[Diagnostic]]:
    if text.startswith("\ufeff"):
        text = text[1:]  # a BOM: columns then count as an editor shows them
    if "\r" in text:
        text = text.replace("\r\n", "\n")  # CRLF: lines and columns stay the same
    parser, joiner = get_parser()
    diagnostics: list[Diagnostic] = []
    work = text
    with LOCK:
        while True:
            joiner.reset()
            try:
                tree = parser.parse(work)
                break
            except (UnexpectedInput, NestingTooDeep) as exc:
                diag, start = _diagnose(exc, work, filename, parser, joiner)
                diagnostics.append(with_hint(diag, work))
                if len(diagnostics) >= MAX_ERRORS:
                    return _empty(filename), diagnostics
                work = _blank(work, min(start, joiner.stmt_start), _error_pos(exc, work), joiner.depth)
        comments = [
            a.Comment.model_construct(text=str(t).rstrip("\r"), span=_token_span(t, filename))
            for t in joiner.comments
        ]
    builder = ToAst(filename)
    statements = builder.transform(tree)
    suite, placement = group(statements, filename)
    suite = suite.model_copy(update={"comments": tuple(comments)})
    return suite, diagnostics + builder.diagnostics + placement


def _empty(filename: str) -> a.Suite:
    return a.Suite.model_construct(span=a.Span(file=filename), items=(), comments=())


def _token_span(tok: Token, filename: str) -> a.Span:
    return a.Span.model_construct(
        file=filename, line=tok.line, column=tok.column,
        end_line=tok.end_line, end_column=tok.end_column,
    )


def _error_pos(exc: Exception, text: str) -> int:
    if isinstance(exc, NestingTooDeep) and exc.token.start_pos is not None:
        return exc.token.start_pos
    if isinstance(exc, UnexpectedToken) and exc.token.start_pos is not None:
        return exc.token.start_pos
    pos = getattr(exc, "pos_in_stream", None)
    return len(text) if pos is None else pos


def _blank(text: str, start: int, pos: int, depth: int) -> str:
    """Replace the failed statement (from `start` to its logical end) with spaces."""
    end = _logical_end(text, pos, depth)
    if end <= start:
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
    middle = "".join(ch if ch == "\n" else " " for ch in text[start:end])
    return text[:start] + middle + text[end:]


def _logical_end(text: str, pos: int, depth: int) -> int:
    """Where the statement holding `pos` ends: a line break outside brackets and strings."""
    i, n = pos, len(text)
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
        elif ch == "\n" and depth == 0:
            return i
        i += 1
    return n


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


def _expected_words(expected: set[str], keywords: dict[str, str]) -> tuple[list[str], str]:
    words = sorted({keywords[t] for t in expected if t in keywords})
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


def _diagnose(exc: Exception, text: str, filename: str, parser: Lark, joiner: Any) -> tuple[Diagnostic, int]:
    """Turn a Lark error into a diagnostic; also return where its statement starts."""
    keywords = keyword_terminals(parser)
    if isinstance(exc, NestingTooDeep):
        span = _token_span(exc.token, filename)
        return error("E104", f"nesting deeper than {MAX_DEPTH} levels", span,
                     help="flatten the pattern or expression"), joiner.stmt_start
    if isinstance(exc, UnexpectedCharacters):
        return _unexpected_char(exc, text, filename, keywords), joiner.stmt_start
    assert isinstance(exc, (UnexpectedToken, UnexpectedEOF))
    tok = exc.token if isinstance(exc, UnexpectedToken) else Token("$END", "")
    expected = set(getattr(exc, "accepts", None) or getattr(exc, "expected", ()) or ()) - {"COMMENT"}
    history = getattr(exc, "token_history", None) or []
    prev = history[-1] if history else None
    if prev is not None and prev.type == "NAME" and expected <= {"_LPAR"}:
        hint = _suggest(str(prev), _PREDICATE_WORDS)
        if hint:
            return error("E101", f"unknown predicate `{prev}`", _token_span(prev, filename),
                         label="not a predicate of the language", suggestion=hint), joiner.stmt_start
    words, wanted = _expected_words(expected, keywords)
    if tok.type == "$END" or tok.line is None:
        line = text.count("\n") + 1
        col = len(text) - (text.rfind("\n") + 1) + 1
        span = a.Span.model_construct(file=filename, line=line, column=col, end_line=line, end_column=col + 1)
    else:
        span = _token_span(tok, filename)
        if tok.type == "_NL":
            span = span.model_copy(update={"end_line": span.line, "end_column": span.column + 1})
    suggestion = _suggest(str(tok), words) if tok.type not in ("STRING", "NUMBER") else None
    hint = None
    if joiner.open and joiner.open[0].line != tok.line:
        opener = joiner.open[0]
        hint = (f"the `{opener}` at line {opener.line}, column {opener.column} is never closed, "
                "so the statement ran on into this line")
    return error("E100", f"unexpected {_describe_token(tok)}", span, label=f"expected {wanted}",
                 suggestion=suggestion, help=hint), joiner.stmt_start


def _unexpected_char(exc: UnexpectedCharacters, text: str, filename: str, keywords: dict[str, str]) -> Diagnostic:
    pos = exc.pos_in_stream
    ch = text[pos] if pos is not None and pos < len(text) else ""
    span = a.Span.model_construct(file=filename, line=exc.line, column=exc.column,
                                  end_line=exc.line, end_column=exc.column + 1)
    if ch == '"':
        return error("E102", "unterminated string", span, label="this string has no closing quote",
                     help='close it on the same line, or use """...""" for text over several lines')
    if ch == "/":
        return error("E102", "unterminated regex", span, label="expected a closing `/`")
    shown = repr(ch) if not ch.isprintable() or ch.isspace() else f"`{ch}`"
    allowed = set(exc.allowed or ()) - {"COMMENT"}
    parser_state = getattr(exc, "interactive_parser", None)
    if parser_state is not None:  # what the parser accepts here, not every token the lexer may see
        try:
            allowed = set(parser_state.accepts()) - {"COMMENT"} or allowed
        except Exception:  # noqa: BLE001 (a best effort for a better message)
            pass
    _, wanted = _expected_words(allowed, keywords)
    return error("E101", f"unexpected character {shown}", span, label=f"expected {wanted}")
