"""The parser as plain data, for a parse without Lark (`_fastparse`): the grammar file, the tables, their cache.

Lark builds the parser (`_grammar`); `_grammar.tables_of` writes down what a
parse needs of it: the LALR table (each state's actions by symbol), the rules
(their size, left-hand side and how each is built: `_building.callback_for`)
and the contextual lexer's per-state lexers (their regular expressions, the
terminals they ignore or that hold line breaks, and the keywords a name may
turn out to be). The data is kept in the parser cache (`_parser_cache`) beside
the pickled Lark parser, so a fresh process with a file to parse loads these
tables and never imports Lark; when they are missing (first use) Lark builds
the parser and the tables are taken from it. With the cache turned off
(``EVALDSL_PARSER_CACHE=off``) every file takes Lark's way: taking the tables
costs more than they save in one process.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from ._building import callback_for, for_the_loop


def grammar_path() -> Path:
    """The grammar file, from an installed wheel or a source checkout."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "grammar" / "evl.lark", package.parent / "grammar" / "evl.lark"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"evl.lark not found next to {package}")


class StateLexer:
    """One of the contextual lexer's lexers: the terminals a parser state may see next, as Lark orders them.

    Its regular expressions are compiled on first use (a short file meets a few of the states).
    """

    __slots__ = ("patterns", "ignore", "newlines", "unless", "mres")

    def __init__(self, data: list) -> None:
        patterns, ignore, newlines, unless = data
        self.patterns: list = patterns
        self.ignore = frozenset(ignore)
        self.newlines = frozenset(newlines)
        self.unless: dict[str, dict[str, str]] = unless
        """For a terminal that a keyword also matches whole (`NAME`): keyword text -> the keyword's terminal."""
        self.mres: list | None = None

    def compile(self) -> list:
        if self.mres is None:
            self.mres = [re.compile(pattern, flags) for pattern, flags in self.patterns]
        return self.mres


class Tables:
    """What `_fastparse.run` reads: ``rows[state][symbol]`` is the next state (a shift, or a goto after a
    reduction) when >= 0, else ``~r`` for a reduction by ``rules[r] = (size, left-hand side, callback)``
    (callback None: a `?rule` whose lone child is its value); ``lexer_at[state]`` its lexer."""

    def __init__(self, data: dict) -> None:
        self.rows: dict[int, dict[str, int]] = data["rows"]
        self.start: int = data["start"]
        self.end: int = data["end"]
        self.rules: list[tuple[int, str, Any]] = []
        for size, origin, spec in data["rules"]:
            self.rules.append((size, origin, for_the_loop(callback_for(spec), size)))
        lexers = [StateLexer(item) for item in data["lexers"]]
        self.lexer_at: dict[int, StateLexer] = {state: lexers[i] for state, i in data["lexer_of"].items()}


_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _loaded() -> Tables | None:
    from . import _parser_cache

    if _parser_cache.turned_off():
        return None  # nothing kept: writing the tables down would cost more than Lark's way of parsing
    grammar = grammar_path().read_bytes()
    data = _parser_cache.load_tables(grammar)
    if data is None:
        from ._grammar import get_parser, tables_of

        data = tables_of(get_parser()[0])
        if data is None:  # pragma: no cover - a Lark whose internals differ: every file takes Lark's way
            return None
        _parser_cache.save_tables(grammar, data)
    return Tables(data)


def fast_tables() -> Tables | None:
    """This process's tables (loaded once), or None when Lark's parser must parse every file."""
    with _LOCK:
        return _loaded()
