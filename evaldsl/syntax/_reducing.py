"""A leaner LALR step over Lark's own parse table: the same shifts, reductions and errors, with less work.

Lark's `ParserState.feed_token` checks ``assert arg != end_state`` on every
reduction (a Python-level `Rule.__eq__` call) and finds each rule's
callback by hashing the rule (a Python-level `Rule.__hash__`).
`FastState.feed_token` reads each rule's size, left-hand side and callback
from a copy of the parse table made once (`fast_rows`), and takes the
one child of a rule of one symbol off the stack without slicing it. A
`?rule` of one symbol (`?or_expr: and_expr ...` with a single `and_expr`:
a third of all reductions) gives back its child unchanged, so its callback
(marked ``passes_child`` by `_building.callback_for`) is not called at all: the
child stays on the value stack and only the state changes. It
raises errors exactly as Lark raises them, from the same state, so error
recovery (`_recovery._Recovery`) sees what it would see with Lark's loop.

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


class FastConf(ParseConf):
    """Lark's `ParseConf` with `rows`: the parse table's states with each reduction's rule already looked up."""

    __slots__ = ("rows",)

    rows: dict[Any, dict[str, tuple[Any, Any]]]


class FastState(ParserState):
    """Lark's LALR parser state with a leaner `feed_token` (see the module's docstring); no state of its own."""

    __slots__ = ()

    parse_conf: FastConf

    def feed_token(self, token: Token, is_end: bool = False) -> Any:
        state_stack, value_stack = self.state_stack, self.value_stack
        rows = self.parse_conf.rows
        end_state = self.parse_conf.end_state
        kind = token.type
        while True:
            row = rows[state_stack[-1]]
            try:
                action, arg = row[kind]
            except KeyError:
                expected = {s for s in row if s.isupper()}
                raise UnexpectedToken(token, expected, state=self, interactive_parser=None) from None
            if action is Shift:
                state_stack.append(arg)
                value_stack.append(token)
                return None
            size, origin, callback = arg
            if callback is None:  # a `?rule` of one symbol: its child is its value, left on the stack as it is
                state_stack[-1] = new_state = rows[state_stack[-2]][origin][1]
                if is_end and new_state == end_state:  # pragma: no cover - the start rule is no `?rule`
                    return value_stack[-1]
                continue
            if size == 1:
                children = [value_stack.pop()]
                del state_stack[-1]
            elif size:
                children = value_stack[-size:]
                del state_stack[-size:]
                del value_stack[-size:]
            else:
                children = []
            value = callback(children)
            new_state = rows[state_stack[-1]][origin][1]
            state_stack.append(new_state)
            value_stack.append(value)
            if is_end and new_state == end_state:
                return value


def fast_rows(table: Any, callbacks: Any) -> dict[Any, dict[str, tuple[Any, Any]]]:
    """The parse table's states, each reduction ``(Reduce, rule)`` made ``(Reduce, (its length, its left-hand
    side, its callback or None to pass its one child on))``; shifts and gotos are Lark's own entries."""
    reduces: dict[Any, tuple[Any, Any]] = {}
    for row in table.states.values():
        for action, rule in row.values():
            if action is not Shift and rule not in reduces:
                callback = callbacks[rule]
                if getattr(callback, "passes_child", False) and len(rule.expansion) == 1:
                    callback = None  # it would give back its one child: no call, no change to the stack
                reduces[rule] = (action, (len(rule.expansion), rule.origin.name, callback))
    return {state: {sym: entry if entry[0] is Shift else reduces[entry[1]] for sym, entry in row.items()}
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
    rows = fast_rows(table, callbacks)

    def parse(lexer: Any, start: str, value_stack: Any = None, state_stack: Any = None,
              start_interactive: bool = False) -> Any:
        conf = FastConf(table, callbacks, start)
        conf.rows = rows
        state = FastState(conf, lexer, state_stack, value_stack)
        if start_interactive:  # `_syntax_errors` asks what a file may start with
            return InteractiveParser(inner, state, state.lexer)
        return inner.parse_from_state(state)

    inner.parse = parse
