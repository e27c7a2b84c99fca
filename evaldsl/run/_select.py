"""Selecting cases: pytest's `-k` and `-m` expressions, `--tag`, `--lf`.

`-k EXPR` works as in pytest: words joined by ``and``, ``or``, ``not`` and
parentheses (``not`` binds tightest, then ``and``, then ``or``); a word
matches a case when it is a case-insensitive substring of the case's name,
its suite's name, its file's name or one of its tags. Case names hold
spaces, which pytest words cannot, so a word may also be quoted:
``-k '"adds two" and not slow'``.

`-m EXPR` is the same language over tags only, matched exactly (as pytest's
markers are). `--tag T` (repeatable) keeps the cases that have any of the
given tags. `--lf` keeps the cases that failed or errored in a previous
record; a case is identified across records by its file and name.
"""

from __future__ import annotations

import functools
import os
import re
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..compile._model import CompiledCase, LazyCases, SuiteCases, outlined
from ._record import EvalReport

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<lparen>\() | (?P<rparen>\)) |
      "(?P<dq>[^"]*)" | '(?P<sq>[^']*)' |
      (?P<word>[^\s()"']+)
    )""",
    re.VERBOSE,
)
_KEYWORDS = {"and", "or", "not"}


class SelectionError(ValueError):
    """A `-k` or `-m` expression that cannot be parsed."""


@dataclass(frozen=True)
class _Tok:
    kind: str  # "(", ")", "and", "or", "not", "name", "end"
    text: str
    column: int


Matcher = Callable[[str], bool]
"""Tests one word of the expression against a case."""
Predicate = Callable[[Matcher], bool]


def parse_expression(text: str, *, option: str = "-k") -> Predicate:
    """Compile a `-k`-style expression into a function of a word-matcher.

    Raises:
        SelectionError: with the column and what was expected.
    """
    tokens = _tokenize(text, option)
    parser = _Parser(tokens, text, option)
    if tokens[0].kind == "end":
        return lambda match: True
    tree = parser.expr()
    parser.expect("end")
    return tree


def _tokenize(text: str, option: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise SelectionError(f"{option} {text!r}: unclosed quote at column {pos + 1}")
        column = m.start() + len(m.group()) - len(m.group().lstrip()) + 1
        if m.lastgroup in ("lparen", "rparen"):
            tokens.append(_Tok("(" if m.lastgroup == "lparen" else ")", m.group(), column))
        elif m.lastgroup in ("dq", "sq"):
            tokens.append(_Tok("name", m.group(m.lastgroup), column))
        else:
            word = m.group("word")
            kind = word if word in _KEYWORDS else "name"
            tokens.append(_Tok(kind, word, column))
        pos = m.end()
    tokens.append(_Tok("end", "", len(text) + 1))
    return tokens


class _Parser:
    def __init__(self, tokens: list[_Tok], text: str, option: str) -> None:
        self.tokens, self.text, self.option, self.pos = tokens, text, option, 0

    def peek(self) -> _Tok:
        return self.tokens[self.pos]

    def expect(self, kind: str) -> _Tok:
        tok = self.peek()
        if tok.kind != kind:
            wanted = {"end": "the end", ")": "')'", "name": "a word"}.get(kind, kind)
            found = "the end" if tok.kind == "end" else repr(tok.text)
            raise SelectionError(
                f"{self.option} {self.text!r}: expected {wanted} at column {tok.column}, found {found}"
                + self._quote_hint()
            )
        self.pos += 1
        return tok

    def _quote_hint(self) -> str:
        """For words meant as one phrase (``-k 'adds 1 and'``): how to say so."""
        if self.option != "-k" or " " not in self.text.strip() or '"' in self.text:
            return ""
        phrase = self.text.strip().replace("'", "'\\''")
        return (f"; words are joined with and / or / not: to match a phrase (spaces, or the words and, or, "
                f"not, inside it), quote it: -k '\"{phrase}\"'")

    def expr(self) -> Predicate:
        left = self.and_expr()
        while self.peek().kind == "or":
            self.pos += 1
            left = _or(left, self.and_expr())
        return left

    def and_expr(self) -> Predicate:
        left = self.not_expr()
        while self.peek().kind == "and":
            self.pos += 1
            left = _and(left, self.not_expr())
        return left

    def not_expr(self) -> Predicate:
        tok = self.peek()
        if tok.kind == "not":
            self.pos += 1
            inner = self.not_expr()
            return lambda match: not inner(match)
        if tok.kind == "(":
            self.pos += 1
            inner = self.expr()
            self.expect(")")
            return inner
        word = self.expect("name").text
        return lambda match: match(word)


def _and(a: Predicate, b: Predicate) -> Predicate:
    return lambda match: a(match) and b(match)


def _or(a: Predicate, b: Predicate) -> Predicate:
    return lambda match: a(match) or b(match)


def keyword_words(case: CompiledCase) -> tuple[str, ...]:
    """What `-k` words are matched against, lower-cased."""
    names = (case.name, case.suite, os.path.basename(case.file), *case.settings.tags)
    return tuple(n.lower() for n in names)


def case_key(file: str, name: str) -> tuple[str, str]:
    """A case's identity across records: its normalized file path and its name."""
    shown = _RELATIVE.get(file)  # a run asks for every case's file, of a few files: most are known
    if shown is not None:
        return (shown, name)
    if os.path.isabs(file):
        return (_normalized(file, os.getcwd()), name)  # relative to the current directory
    shown = _normalized(file, "")
    if len(_RELATIVE) < 4096 and type(file) is str:
        _RELATIVE[file] = shown
    return (shown, name)


_RELATIVE: dict[str, str] = {}
"""`case_key`'s normalized relative paths (which do not depend on the current directory), by path."""


@functools.lru_cache(maxsize=1024)
def _normalized(path: str, cwd: str) -> str:
    """The path as `case_key` compares it; cached, since a run asks for every case's file."""
    if cwd:
        try:
            path = os.path.relpath(path, cwd)
        except ValueError:  # another drive on Windows
            pass
    return os.path.normcase(os.path.normpath(path))


def failed_keys(report: EvalReport) -> set[tuple[str, str]]:
    """The keys of the cases that failed or errored in a record."""
    return {case_key(c.file, c.name) for c in report.cases if c.status in ("failed", "error")}


def select_cases(
    cases: Iterable[CompiledCase],
    *,
    keyword: str | None = None,
    markers: str | None = None,
    tags: Sequence[str] = (),
    last_failed: EvalReport | None = None,
) -> Sequence[CompiledCase]:
    """Keep the cases that every given criterion selects, in their order.

    A list, unless ``cases`` are made when read (`LazyCases`, `SuiteCases`): then
    the chosen ones are too (`picked`).

    Args:
        keyword: a `-k` expression (substring, case-insensitive).
        markers: a `-m` expression over tags (exact match).
        tags: keep cases having any of these tags (exact match).
        last_failed: keep cases that failed or errored in this record.

    Raises:
        SelectionError: when an expression cannot be parsed.
    """
    lazy = isinstance(cases, (SuiteCases, LazyCases))
    if not (keyword or markers or tags or last_failed is not None) and lazy:
        return cases  # type: ignore[return-value]  # all of them, still made when read (see LazyCases)
    tests: list[Callable[[CompiledCase], bool]] = []
    if keyword:
        k_expr = parse_expression(keyword, option="-k")
        tests.append(lambda c: k_expr(_substring_matcher(keyword_words(c))))
    if markers:
        m_expr = parse_expression(markers, option="-m")
        tests.append(lambda c: m_expr(set(c.settings.tags).__contains__))
    if tags:
        wanted = set(tags)
        tests.append(lambda c: bool(wanted.intersection(c.settings.tags)))
    if last_failed is not None:
        failed = failed_keys(last_failed)
        tests.append(lambda c: case_key(c.file, c.name) in failed)
    if lazy:  # decided on outlines (name, file, suite, tags are theirs), the chosen cases made when read
        described = outlined(cases, labels=False)  # type: ignore[arg-type]
        return picked(cases, [i for i, c in enumerate(described) if all(t(c) for t in tests)])  # type: ignore
    return [c for c in cases if all(t(c) for t in tests)]


def picked(cases: Sequence[CompiledCase], positions: Sequence[int]) -> Sequence[CompiledCase]:
    """The cases at ``positions``, in that order: a list, unless the cases are made when read
    (`LazyCases`, `SuiteCases`); then a `LazyCases` that makes each when read, so that a selection
    of 100,000 examples rows holds their positions, not their cases."""
    if not isinstance(cases, (LazyCases, SuiteCases)):
        return [cases[i] for i in positions]
    kept = array("q", positions)
    views: dict[bool, Sequence[CompiledCase]] = {}

    def outline(j: int, labels: bool) -> CompiledCase:
        view = views.get(labels)
        if view is None:
            view = views[labels] = outlined(cases, labels)
        return view[kept[j]]

    return LazyCases(len(kept), lambda j: cases[kept[j]], outline=outline)


def _substring_matcher(words: tuple[str, ...]) -> Matcher:
    return lambda word: any(word.lower() in w for w in words)
