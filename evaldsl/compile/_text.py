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
from ._pattern_leaves import _Between, _Compare
from ._patterns import compile_pattern, compile_regex
from ._regex import search
from ._values import shorten, show, to_number, to_text

_NUMBER = re.compile(r"(?<![\w.])-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?")
"""A number, by the regex docs/language.md 6.2 fixes, as written there (`last_number` uses `_NUMBER_SCAN`)."""
_NUMBER_SCAN = re.compile(r"[-0-9](?<![\w.][-0-9])"
                          r"(?:(?<=-)(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)|(?<=[0-9])(?:[0-9]{0,2}(?:,[0-9]{3})+|[0-9]*))"
                          r"(?:\.[0-9]+)?")
"""`_NUMBER` rewritten to start with a character class: the regex engine then skips, in C, every
position where no number starts, instead of trying the whole pattern there (a 16-character answer
in half the time, a long one in a third). It takes the first character, `-` or a digit, checks
the one before it as `_NUMBER`'s look-behind does, and goes on as `_NUMBER` would: after `-`, the
same digits; after a digit, the same digits less that one, with the same greedy choices in the
same order. So it finds the same numbers at the same places (tests/properties/test_fast_detail_props.py)."""
_FENCE = re.compile(r"```([A-Za-z0-9_+.\-]*)(.*?)```", re.DOTALL)
_HOLDS = Outcome(1.0)
_NO_TEXT = Outcome(0.0, "no final text")


def last_number(text: str) -> int | float | None:
    """The last number in `text` by the rule of docs/language.md 6.2, or None.

    Commas are thousands separators and are removed: `-1,024.50` is -1024.5.
    A number without a decimal part is an int.
    """
    matches = _NUMBER_SCAN.findall(text)
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


class _OnText:
    """A check of the final text: fails without one, else asks `detail` why the text misses (None: it holds).

    Each form is a small class with its values as slots (the code once, a few bytes a case).
    """

    __slots__ = ()

    def __call__(self, ctx: EvalContext) -> Outcome:
        text = ctx.artifacts.final_text
        if text is None:
            return _NO_TEXT
        detail = self.detail(text)
        return _HOLDS if detail is None else Outcome(0.0, detail)

    def detail(self, text: str) -> str | None:
        raise NotImplementedError


# ------------------------------------------------------------------ text --


class _TextForm(_OnText):
    """`final text contains / is / starts with / ends with "s" [ignoring case]`."""

    __slots__ = ("form", "wanted", "key", "fold")

    def __init__(self, node: Any) -> None:
        wanted = to_text(node.text)
        if isinstance(node, a.TextIs):
            wanted = wanted.strip()
        self.form = type(node)
        self.wanted = wanted
        self.fold = node.ignore_case
        self.key = wanted.casefold() if self.fold else wanted

    def detail(self, text: str) -> str | None:
        seen = text if self.form is a.TextContains else text.strip()
        test, verb = _TEXT_TESTS[self.form]
        if test(seen.casefold() if self.fold else seen, self.key):
            return None
        suffix = " (ignoring case)" if self.fold else ""
        return f"final text {_quoted(text)} {verb} {_quoted(self.wanted)}{suffix}"


_TEXT_TESTS: dict[type, tuple[Callable[[str, str], bool], str]] = {
    a.TextContains: (lambda text, key: key in text, "does not contain"),
    a.TextIs: (lambda text, key: text == key, "is not"),
    a.TextStartsWith: (str.startswith, "does not start with"),
    a.TextEndsWith: (str.endswith, "does not end with"),
}


def _text_empty(node: a.TextEmpty) -> Check:
    return _TEXT_EMPTY


def _is_empty(ctx: EvalContext) -> Outcome:
    text = ctx.artifacts.final_text
    if text is None or not text.strip():
        return _HOLDS
    return Outcome(0.0, f"final text {_quoted(text)} is not empty")


_TEXT_EMPTY: Check = _is_empty


class _TextMatches(_OnText):
    __slots__ = ("regex", "flags")

    def __init__(self, node: a.TextMatches) -> None:
        self.regex = compile_regex(node.regex)
        self.flags = node.regex.flags

    def detail(self, text: str) -> str | None:
        if search(self.regex, text, "the final text"):
            return None
        return f"final text {_quoted(text)} does not match /{self.regex.pattern}/{self.flags}"


# --------------------------------------------------------------- numbers --


class _OnNumber(_OnText):
    """A check on the last number: fails without text or number, else runs `holds`."""

    __slots__ = ()

    def detail(self, text: str) -> str | None:
        number = last_number(text)
        if number is None:
            return f"no number in final text {_quoted(text)}"
        return None if self.holds(number) else f"last number {show(number)} is not {self.wanted()}"

    def holds(self, number: int | float) -> bool:
        raise NotImplementedError

    def wanted(self) -> str:
        raise NotImplementedError


class _NumberIs(_OnNumber):
    __slots__ = ("target", "tolerance")

    def __init__(self, node: a.NumberIs) -> None:
        self.target = to_number(node.value)
        self.tolerance = None
        if node.within is not None:
            self.tolerance = to_number(node.within)
            if self.tolerance < 0:
                raise CompileProblem("a `within` tolerance cannot be negative", node.within,
                                     code="E213")

    def holds(self, number: int | float) -> bool:
        if self.tolerance is None:
            return number == self.target
        return abs(number - self.target) <= self.tolerance

    def wanted(self) -> str:
        if self.tolerance is None:
            return show(self.target)
        return f"{show(self.target)} (within {show(self.tolerance)})"


class _NumberTest(_OnNumber):
    """`final number above 5` / `between 1 and 3`: the pattern form of the same words, on the last number."""

    __slots__ = ("test",)

    def __init__(self, test: _Compare | _Between) -> None:
        self.test = test

    def holds(self, number: int | float) -> bool:
        return self.test.holds(number)

    def wanted(self) -> str:
        return self.test.wanted()


# ------------------------------------------------------------------ json --


class _FinalJson(_OnText):
    __slots__ = ("matcher",)

    def __init__(self, node: a.FinalJson) -> None:
        self.matcher = compile_pattern(node.pattern)

    def detail(self, text: str) -> str | None:
        ok, value = extract_json(text)
        if not ok:
            return f"{value}: {_quoted(text)}"
        reason = self.matcher(value)
        return None if reason is None else f"final json {show(value, limit=80)}: {reason}"


_FACTORIES: dict[type, Callable[[Any], Check]] = {
    a.TextContains: _TextForm,
    a.TextIs: _TextForm,
    a.TextStartsWith: _TextForm,
    a.TextEndsWith: _TextForm,
    a.TextEmpty: _text_empty,
    a.TextMatches: _TextMatches,
    a.NumberIs: _NumberIs,
    a.NumberCompare: lambda node: _NumberTest(_Compare(node)),
    a.NumberBetween: lambda node: _NumberTest(_Between(node)),
    a.FinalJson: _FinalJson,
}
