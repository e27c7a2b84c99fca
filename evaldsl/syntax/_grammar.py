"""Build the one Lark parser, once, and describe it for a parse without Lark.

The grammar file (`_tables.grammar_path`) is the single source of truth.
Lark builds the parser from it (LALR, contextual lexer, strict); `install`
gives its rules evaldsl's callbacks (`_building`), each described by plain
data (`rule_spec`), and `tables_of` turns the whole parser (parse table,
per-state lexers, rules) into the plain data with which `_fastparse` parses a
file without importing Lark. Lark's own parser still parses every file that
has a syntax error: its error recovery words the diagnostics.
"""

from __future__ import annotations

import re
from functools import lru_cache, partial
from typing import Any

from lark import Lark, Token
from lark.exceptions import UnexpectedInput
from lark.lexer import BasicLexer, UnlessCallback

from ._building import callback_for, general
from ._joiner import CLOSERS, MAX_DEPTH, OPENERS, Continuations, LineJoiner
from ._reducing import install_fast_state, table_rows
from ._tables import grammar_path

try:
    from lark.parse_tree_builder import ChildFilterLALR, ChildFilterLALR_NoPlaceholders, ExpandSingleChild
except ImportError:  # pragma: no cover - another Lark version: its chains go the general way
    ChildFilterLALR = ChildFilterLALR_NoPlaceholders = ExpandSingleChild = None  # type: ignore[misc,assignment]

__all__ = ["CLOSERS", "MAX_DEPTH", "OPENERS", "Continuations", "LineJoiner", "NestingTooDeep", "build_parser",
           "get_parser", "grammar_path", "install", "keyword_terminals", "relink", "rule_spec", "tables_of"]


class NestingTooDeep(UnexpectedInput):
    """Raised by the postlexer; the parser turns it into a diagnostic.

    A Lark `UnexpectedInput`, so that Lark hands it to the parser's error
    handler with the parser's state, and recovery goes on after it.
    """

    def __init__(self, token: Token) -> None:
        super().__init__("nesting too deep")
        self.token = token
        self.pos_in_stream = token.start_pos  # type: ignore[assignment]
        self.line, self.column = token.line or 0, token.column or 0


@lru_cache(maxsize=1)
def get_parser() -> tuple[Lark, LineJoiner]:
    """The Lark instance (LALR, contextual lexer, strict), built once a process: loaded whole from the
    parser cache (`_parser_cache`) when it holds this grammar's, else built and kept there."""
    from ._parser_cache import load_parser, save_parser

    grammar = grammar_path().read_bytes()
    found = load_parser(grammar, relink)
    if found is not None:
        return found
    parser, joiner = build_parser(grammar=grammar.decode("utf-8"))
    save_parser(grammar, parser, joiner)
    return parser, joiner


def relink(parser: Lark) -> None:
    """Give a parser loaded from the parser cache the rule callbacks and loop `build_parser` installed."""
    install(parser)
    install_fast_state(parser)


def build_parser(*, fast: bool = True, grammar: str | None = None) -> tuple[Lark, LineJoiner]:
    """A new Lark instance and its postlexer; ``fast=False`` leaves out the leaner paths
    (`_reducing`, `_building`'s one-symbol rules), for tests that compare the two."""
    joiner = LineJoiner()
    parser = Lark(
        grammar if grammar is not None else grammar_path().read_text(encoding="utf-8"),
        parser="lalr",
        lexer="contextual",
        strict=True,
        propagate_positions=False,  # `_building` places each rule itself
        maybe_placeholders=True,
        cache=True,
        postlex=joiner,
    )
    install(parser, lean=fast)
    if fast:
        install_fast_state(parser)
    return parser, joiner


def install(parser: Lark, *, lean: bool = True) -> None:
    """Replace the rule callbacks of ``parser`` (built with ``propagate_positions=False``) by evaldsl's.

    With ``lean``, each rule gets `_building.callback_for` its `rule_spec`; without (the plain parser of the
    tests), or for a chain `rule_spec` cannot describe, the general way with Lark's own wrappers: the same
    values and positions (the property tests compare the two).
    """
    callbacks = parser._callbacks  # rule -> callback: the same table the LALR parser calls
    for rule, chain in parser._parse_tree_builder.rule_builders:
        spec = rule_spec(rule, chain) if lean else None
        if spec is not None:
            callbacks[rule] = callback_for(spec)
        else:
            callbacks[rule] = general(_rule_name(rule), chain, one=len(rule.expansion) == 1,
                                      passes_on=_passes_on(rule), lean=lean)


def rule_spec(rule: Any, chain: list) -> tuple | None:
    """``(name, size, steps, passes_on)`` for `_building.callback_for`: plain data for a rule and its Lark
    chain of wrappers (a `?rule`'s pass-through, LALR child filters); None for a chain of anything else."""
    steps: list = []
    for step in chain:
        if step is ExpandSingleChild and ExpandSingleChild is not None:
            steps.append(("expand1",))
        elif isinstance(step, partial) and not step.keywords and step.func is ChildFilterLALR and len(step.args) == 2:
            steps.append(("filter", [tuple(item) for item in step.args[0]], step.args[1]))
        elif (isinstance(step, partial) and not step.keywords and step.func is ChildFilterLALR_NoPlaceholders
              and len(step.args) == 1):
            steps.append(("filter", [tuple(item) for item in step.args[0]]))
        else:
            return None
    return _rule_name(rule), len(rule.expansion), steps, _passes_on(rule)


def _rule_name(rule: Any) -> str:
    return str(rule.alias or rule.options.template_source or rule.origin.name)


def _passes_on(rule: Any) -> bool:
    return bool(rule.options.expand1 and not rule.alias)


def tables_of(parser: Lark) -> dict | None:
    """``parser`` as the plain data of `_tables.Tables` (marshal's types only); None if Lark's internals are
    not what this expects (every file then takes Lark's way)."""
    try:
        table = parser.parser.parser.parser.parse_table
        lexers = parser.parser.lexer.lexer.lexers
        builders = parser._parse_tree_builder.rule_builders
    except AttributeError:  # pragma: no cover - another Lark version
        return None
    if parser.lexer_conf.re_module is not re or parser.lexer_conf.use_bytes:
        return None  # pragma: no cover - the `regex` module or bytes: Lark's way
    rules = []
    for rule, chain in builders:
        spec = rule_spec(rule, chain)
        if spec is None:
            return None  # pragma: no cover - another Lark version's chain
        rules.append((len(rule.expansion), rule.origin.name, spec))
    rows = table_rows(table, [rule for rule, _ in builders])
    described: dict[int, int] = {}
    state_lexers: list = []
    lexer_of = {}
    for state, lexer in lexers.items():
        if id(lexer) not in described:
            data = _lexer_data(lexer)
            if data is None:
                return None  # pragma: no cover - a lexer with callbacks of its own
            described[id(lexer)] = len(state_lexers)
            state_lexers.append(data)
        lexer_of[state] = described[id(lexer)]
    return {"rows": rows, "rules": rules, "lexers": state_lexers, "lexer_of": lexer_of,
            "start": table.start_states["start"], "end": table.end_states["start"]}


def _lexer_data(lexer: Any) -> list | None:
    """A per-state lexer as `_tables.StateLexer` reads it: Lark's regular expressions for it (compiled once
    here, so their order and grouping are Lark's own), ignored and line-break terminals, keywords."""
    if not isinstance(lexer, BasicLexer):
        return None  # pragma: no cover
    scanner = lexer.scanner  # (builds the scanner and `callback`)
    unless: dict[str, dict[str, str]] = {}
    for name, callback in lexer.callback.items():
        if type(callback) is not UnlessCallback:
            return None  # pragma: no cover - a user callback
        words = unless[name] = {}
        for term in callback.scanner.terminals:
            if term.pattern.type != "str" or term.pattern.flags:
                return None  # pragma: no cover - a keyword with flags (`"x"i`) is not matched by its text
            words[term.pattern.value] = term.name
    patterns = [(mre.pattern, mre.flags) for mre in scanner._mres]
    return [patterns, sorted(lexer.ignore_types), sorted(lexer.newline_types), unless]


@lru_cache(maxsize=4)
def keyword_terminals(parser: Lark) -> dict[str, str]:
    """Terminal name -> keyword text, for every keyword of the language."""
    result = {}
    for term in parser.terminals:
        pattern = term.pattern
        if pattern.type == "str" and pattern.value.isalpha():
            result[term.name] = pattern.value
    return result
