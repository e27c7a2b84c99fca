"""Predicates over the final answer (docs/language.md section 6.2).

The final text is what a user reads, so these checks follow the language
to the letter about white space: `is`, `starts with` and `ends with` look at
the trimmed text (a trailing newline from a model is not an answer), while
`contains` and `matches` look at the text as it is. Every predicate except
`final text is empty` fails when the agent gave no final text at all, and
says so, instead of treating None as "".

`final number` reads the LAST number in the text (answers tend to end with
the result, after the working), with the one regex the language fixes, so
"3-4" ends in 4 and "v2" holds no number. `final json` accepts a bare JSON
answer or exactly one ```json fenced block, the two shapes models produce.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..syntax import _ast as a
from ._errors import CompileProblem
from ._model import Check, EvalContext, Outcome
from ._patterns import COMPARE, compile_pattern, compile_regex, ordered_bounds
from ._regex import search
from ._values import shorten, show, to_number, to_text

_NUMBER = re.compile(r"(?<![\w.])-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?")
_FENCE = re.compile(r"```([A-Za-z0-9_+.\-]*)(.*?)```", re.DOTALL)
_HOLDS = Outcome(1.0)
_NO_TEXT = Outcome(0.0, "no final text")


def last_number(text: str) -> int | float | None:
    """The last number in `text` by the rule of docs/language.md 6.2, or None.

    Commas are thousands separators and are removed: `-1,024.50` is -1024.5.
    A number without a decimal part is an int.
    """
    matches = _NUMBER.findall(text)
    if not matches:
        return None
    digits = matches[-1].replace(",", "")
    return float(digits) if "." in digits else int(digits)


def extract_json(text: str) -> tuple[bool, Any]:
    """The JSON value of a final text: (True, value), or (False, the reason).

    The trimmed text itself, when it parses; else the content of the one
    fenced block opened with three backticks and `json` (in any case).
    Other fenced blocks are ignored; two or more ```json blocks are ambiguous
    and fail, as does one whose content does not parse.
    """
    try:
        return True, _strict_json(text.strip())
    except ValueError:
        pass
    blocks = [m.group(2) for m in _FENCE.finditer(text) if m.group(1).lower() == "json"]
    if not blocks:
        return False, "final text is not JSON and holds no ```json block"
    if len(blocks) > 1:
        return False, f"final text holds {len(blocks)} ```json blocks, expected exactly one"
    try:
        return True, _strict_json(blocks[0])
    except ValueError as err:
        shown = shorten(blocks[0].strip(), 80)
        return False, f"the ```json block is not valid JSON ({err}): {shown}"


def _strict_json(text: str) -> Any:
    """`json.loads` without Python's extensions: NaN and Infinity are not JSON."""
    return json.loads(text, parse_constant=_not_json)


def _not_json(word: str) -> Any:
    raise ValueError(f"{word} is not JSON")


def compile_final(node: Any) -> Check:
    """Compile a `final ...` predicate into a check over a run.

    Args:
        node: TextContains, TextIs, TextEmpty, TextStartsWith, TextEndsWith,
            TextMatches, NumberIs, NumberCompare, NumberBetween or FinalJson.

    Raises:
        CompileProblem: for a bad regex (E202), impossible bounds, or an
            unfilled placeholder.
    """
    factory = _FACTORIES.get(type(node))
    if factory is None:
        raise CompileProblem(f"not a final-answer predicate: {getattr(node, 'kind', node)}",
                             node)
    return factory(node)


def _quoted(text: str) -> str:
    return show(text, limit=120)


def _on_text(holds: Callable[[str], str | None]) -> Check:
    """A check that fails without a final text, else asks `holds` for a detail."""

    def check(ctx: EvalContext) -> Outcome:
        text = ctx.artifacts.final_text
        if text is None:
            return _NO_TEXT
        detail = holds(text)
        return _HOLDS if detail is None else Outcome(0.0, detail)

    return check


# ------------------------------------------------------------------ text --


def _text_form(node: Any) -> Check:
    wanted = to_text(node.text)
    fold = node.ignore_case
    trim = not isinstance(node, a.TextContains)
    if isinstance(node, a.TextIs):
        wanted = wanted.strip()
    key = wanted.casefold() if fold else wanted
    test, verb = _TEXT_TESTS[type(node)]
    suffix = " (ignoring case)" if fold else ""

    def holds(text: str) -> str | None:
        seen = text.strip() if trim else text
        if test(seen.casefold() if fold else seen, key):
            return None
        return f"final text {_quoted(text)} {verb} {_quoted(wanted)}{suffix}"

    return _on_text(holds)


_TEXT_TESTS: dict[type, tuple[Callable[[str, str], bool], str]] = {
    a.TextContains: (lambda text, key: key in text, "does not contain"),
    a.TextIs: (lambda text, key: text == key, "is not"),
    a.TextStartsWith: (str.startswith, "does not start with"),
    a.TextEndsWith: (str.endswith, "does not end with"),
}


def _text_empty(node: a.TextEmpty) -> Check:
    def check(ctx: EvalContext) -> Outcome:
        text = ctx.artifacts.final_text
        if text is None or not text.strip():
            return _HOLDS
        return Outcome(0.0, f"final text {_quoted(text)} is not empty")

    return check


def _text_matches(node: a.TextMatches) -> Check:
    regex = compile_regex(node.regex)
    shown = f"/{node.regex.pattern}/{node.regex.flags}"

    def holds(text: str) -> str | None:
        if search(regex, text, "the final text"):
            return None
        return f"final text {_quoted(text)} does not match {shown}"

    return _on_text(holds)


# --------------------------------------------------------------- numbers --


def _on_number(test: Callable[[int | float], bool], wanted: str) -> Check:
    """A check on the last number: fails without text or number, else runs `test`."""

    def holds(text: str) -> str | None:
        number = last_number(text)
        if number is None:
            return f"no number in final text {_quoted(text)}"
        return None if test(number) else f"last number {show(number)} is not {wanted}"

    return _on_text(holds)


def _number_is(node: a.NumberIs) -> Check:
    target = to_number(node.value)
    if node.within is None:
        return _on_number(lambda n: n == target, show(target))
    tolerance = to_number(node.within)
    if tolerance < 0:
        raise CompileProblem("a `within` tolerance cannot be negative", node.within,
                             code="E213")
    wanted = f"{show(target)} (within {show(tolerance)})"
    return _on_number(lambda n: abs(n - target) <= tolerance, wanted)


def _number_compare(node: a.NumberCompare) -> Check:
    bound = to_number(node.value)
    holds = COMPARE[node.op]
    return _on_number(lambda n: holds(n, bound), f"{node.op} {show(bound)}")


def _number_between(node: a.NumberBetween) -> Check:
    low, high = ordered_bounds(node)
    return _on_number(lambda n: low <= n <= high, f"between {show(low)} and {show(high)}")


# ------------------------------------------------------------------ json --


def _final_json(node: a.FinalJson) -> Check:
    matcher = compile_pattern(node.pattern)

    def holds(text: str) -> str | None:
        ok, value = extract_json(text)
        if not ok:
            return f"{value}: {_quoted(text)}"
        reason = matcher(value)
        return None if reason is None else f"final json {show(value, limit=80)}: {reason}"

    return _on_text(holds)


_FACTORIES: dict[type, Callable[[Any], Check]] = {
    a.TextContains: _text_form,
    a.TextIs: _text_form,
    a.TextStartsWith: _text_form,
    a.TextEndsWith: _text_form,
    a.TextEmpty: _text_empty,
    a.TextMatches: _text_matches,
    a.NumberIs: _number_is,
    a.NumberCompare: _number_compare,
    a.NumberBetween: _number_between,
    a.FinalJson: _final_json,
}
