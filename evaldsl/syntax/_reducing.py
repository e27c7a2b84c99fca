"""A leaner LALR step over Lark's own parse table: the same shifts, reductions and errors, with less work.

Lark's `ParserState.feed_token` checks ``assert arg != end_state`` on every
reduction (a Python-level `Rule.__eq__` call) and finds each rule's
callback by hashing the rule (a Python-level `Rule.__hash__`).
`FastState.feed_token` steps with `_fastparse.feed`, the parse without
Lark's own step, over a copy of the parse table made once (`table_rows`)
where each reduction names its rule's size, left-hand side and callback,
and takes the one child of a rule of one symbol off the stack without
slicing it. A `?rule` of one symbol (`?or_expr: and_expr ...` with a single
`and_expr`: a third of all reductions) gives back its child unchanged, so
its callback (marked ``passes_child`` by `_building.callback_for`) is not
called at all: the child stays on the value stack and only the state
changes. It raises errors exactly as Lark raises them, from the same state,
so error recovery (`_recovery._Recovery`) sees what it would see with
Lark's loop.

`install_fast_state` changes nothing if Lark's internals are not what it
expects (Lark's own loop then runs, with the same callbacks).
"""

from __future__ import annotations

from typing import Any

from lark import Lark, Token
from lark.exceptions import UnexpectedToken
from lark.parsers.lalr_analysis import Shift
from lark.parsers.lalr_interactive_parser import InteractiveParser
from lark.parsers.lalr_parser_state import ParseConf, ParserState

from ._building import for_the_loop
from ._fastparse import NO_ACTION, feed


class FastConf(ParseConf):
    """Lark's `ParseConf` with the parse table as `_fastparse.feed` reads it (`rows`, `rules`)."""

    __slots__ = ("rows", "rules")

    rows: dict[Any, dict[str, int]]
    rules: list[tuple[int, str, Any]]


class FastState(ParserState):
    """Lark's LALR parser state with a leaner `feed_token` (see the module's docstring); no state of its own."""

    __slots__ = ()

    parse_conf: FastConf

    def feed_token(self, token: Token, is_end: bool = False) -> Any:
        conf = self.parse_conf
        done = feed(conf.rows, conf.rules, conf.end_state, self.state_stack, self.value_stack, token, token.type)
        if done is NO_ACTION:
            expected = {s for s in conf.rows[self.state_stack[-1]] if s.isupper()}
            raise UnexpectedToken(token, expected, state=self, interactive_parser=None) from None
        return done


def table_rows(table: Any, rules: list) -> dict[Any, dict[str, int]]:
    """Lark's parse table as `_fastparse.feed` reads it: a shift or goto ``(Shift, state)`` is ``state``, a
    reduction ``(Reduce, rule)`` is ``~i`` for the rule's place ``i`` in ``rules``."""
    number = {rule: i for i, rule in enumerate(rules)}
    return {state: {sym: arg if action is Shift else ~number[arg] for sym, (action, arg) in row.items()}
            for state, row in table.states.items()}


def install_fast_state(parser: Lark) -> None:
    """Make ``parser`` (after `_grammar.install`) run `FastState`; left as it is if Lark's internals differ."""
    try:
        inner = parser.parser.parser.parser
        table, callbacks = inner.parse_table, inner.callbacks
    except AttributeError:  # pragma: no cover - another Lark version: its own loop still works
        return
    if any(isinstance(key, str) for key in callbacks):  # pragma: no cover - terminal callbacks: not handled here
        return
    order = list(callbacks)
    rows = table_rows(table, order)
    rules = [(len(rule.expansion), rule.origin.name, for_the_loop(callbacks[rule], len(rule.expansion)))
             for rule in order]

    def parse(lexer: Any, start: str, value_stack: Any = None, state_stack: Any = None,
              start_interactive: bool = False) -> Any:
        conf = FastConf(table, callbacks, start)
        conf.rows, conf.rules = rows, rules
        state = FastState(conf, lexer, state_stack, value_stack)
        if start_interactive:  # `_syntax_errors` asks what a file may start with
            return InteractiveParser(inner, state, state.lexer)
        return inner.parse_from_state(state)

    inner.parse = parse
