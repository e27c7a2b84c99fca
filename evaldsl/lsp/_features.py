"""The language server's answers, as plain data: completions, hover text, definitions, symbols.

Each function takes the document text, its `Outline` and a 0-based position
(line, character in code points), and never raises on a half-typed file:
the context is read from the text before the cursor, so completion works
where the parser would still fail.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import _words
from ._outline import Outline, ToolInfo

_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_.\-]*")
_TOOL_BEFORE = re.compile(
    r"(?:\b(?:called|call|then|when|given)\s+(?:(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)|\"(?P<quoted>[^\"]*)\")\s+with\s*|"
    r"^\s*(?P<when>when)\s*)$")


@dataclass(frozen=True)
class Completion:
    label: str
    kind: str
    """keyword, tool, param, column or value."""
    detail: str = ""


def completions(text: str, outline: Outline, line: int, character: int) -> list[Completion]:
    lines = text.split("\n")
    current = lines[line] if line < len(lines) else ""
    before = current[:character]
    prefix = before[_word_start(before):]
    head = before[: len(before) - len(prefix)]
    if "{{" in head and "}}" not in head[head.rfind("{{"):] or prefix.startswith("$"):
        return _columns(outline, line)
    pattern_tool = _open_pattern_tool(lines, line, head, outline)
    if pattern_tool is not None:
        return [Completion(name, "param", detail) for name, detail in pattern_tool.params]
    words = head.split()
    last = words[-1] if words else ""
    if not words:
        return _keywords(_statements(lines, line))
    answers = _answer_words(_continued(lines, line) + words if words[0] == "then" else words)
    if answers is not None:
        return _keywords(answers)
    in_list = ("called" in words or "are" in words) and head.rfind("[") > head.rfind("]")  # v2: `called [a, `
    if (last in ("called", "call", "then", "are", "given")
            or last.endswith(",") and ("only" in words or words[0] == "tools")
            or words[0] == "tools" and len(words) == 1 or in_list and last.endswith(("[", ","))):
        extra = [Completion("any tool", "keyword")] if last in ("called", "then") or in_list else []
        return extra + [Completion(t.name, "tool", t.declaration.split("\n")[0]) for t in outline.tools.values()]
    if last in ("expect", "not", "and", "or", "else", "(") or head.rstrip().endswith("("):
        return _keywords(_words.PREDICATES)
    if last == "final":
        return _keywords(_words.AFTER_FINAL)
    if words[-2:] == ["final", "text"]:
        return _keywords(_words.AFTER_FINAL_TEXT)
    if words[-2:] == ["final", "number"]:
        return _keywords(_words.AFTER_FINAL_NUMBER)
    if last == "mode":
        return _keywords(_words.MODES)
    if last.endswith("]") and ("called" in words or "are" in words):
        return _keywords(_words.AFTER_STEP_LIST)
    if last == "with":
        return _keywords(_words.AFTER_WITH)
    if words[0] == "param" and last.endswith(":"):
        return _keywords(_words.PARAM_TYPES)
    return []


def _answer_words(words: list[str]) -> tuple[str, ...] | None:
    """v2: the words of a `given` line and of an answer sequence, where they are the only ones that fit."""
    if words[0] in ("given", "when", "otherwise") and words[-1] == "then":
        return _words.AFTER_THEN_ANSWER
    if words[0] == "given" and len(words) == 2 and not words[1].endswith(","):
        return _words.AFTER_GIVEN_TOOL
    if words == ["simulated"]:
        return ("user",)
    return None


def _continued(lines: list[str], line: int) -> list[str]:
    """The first words of the statement a `then` line continues (the nearest line above that is not
    itself a `then` line, blank or a comment)."""
    for previous in reversed(lines[max(0, line - 20): line]):
        words = previous.split("#", 1)[0].split()
        if words and words[0] != "then":
            return words[:1]
    return []


def _word_start(before: str) -> int:
    i = len(before)
    while i > 0 and (before[i - 1].isalnum() or before[i - 1] in "_.-$"):
        i -= 1
    return i


def _keywords(words: tuple[str, ...]) -> list[Completion]:
    return [Completion(w, "keyword", _words.MEANINGS.get(w.split()[0], "")) for w in words]


def _statements(lines: list[str], line: int) -> tuple[str, ...]:
    """Which statements may start this line: the suite head's, a case's or a tool block's."""
    in_case = any(previous.split()[:1] == ["case"] for previous in lines[:line])
    for previous in reversed(lines[:line]):
        words = previous.split("#", 1)[0].split()
        if not words or words[0] in ("param", "when", "otherwise") or words[0].startswith("|"):
            continue
        if words[0] == "tool":
            return _words.TOOL_STATEMENTS
        break
    return _words.CASE_STATEMENTS if in_case else _words.HEAD_STATEMENTS


def _open_pattern_tool(lines: list[str], line: int, head: str, outline: Outline) -> ToolInfo | None:
    """The tool whose `< >` the cursor stands in, at its top level where a key may be typed."""
    text = "\n".join(lines[max(0, line - 20): line] + [head])
    depth, i = 0, len(text)
    in_string = False
    while i > 0:
        i -= 1
        ch = text[i]
        if ch == '"':
            in_string = not in_string
        if in_string:
            continue
        if ch in ">}])":
            depth += 1
        elif ch in "<{[(":
            if depth == 0:
                break
            depth -= 1
    else:
        return None
    if text[i] not in "<{" or not _at_key_position(text[i + 1:]):
        return None
    match = _TOOL_BEFORE.search(text[:i].split("\n")[-1])
    if match is None:
        return None
    if match.group("when"):
        return _enclosing_tool(lines, line, outline)
    return outline.tools.get(match.group("name") or match.group("quoted") or "")


def _at_key_position(inside: str) -> bool:
    depth, last = 0, "<"
    for ch in inside:
        if ch in "<{[(":
            depth += 1
        elif ch in ">}])":
            depth -= 1
        elif depth == 0 and not ch.isspace():
            last = ch
    stripped = inside.rstrip()
    tail = stripped[_word_start(stripped):] if stripped else ""
    body = stripped[: len(stripped) - len(tail)].rstrip()
    return depth == 0 and (not body or body[-1] == ",") and last != ":"


def _enclosing_tool(lines: list[str], line: int, outline: Outline) -> ToolInfo | None:
    for previous in reversed(lines[: line + 1]):
        words = previous.split()
        if words[:1] == ["tool"] and len(words) > 1:
            return outline.tools.get(words[1].strip('"'))
        if words[:1] == ["case"]:
            return None
    return None


def _columns(outline: Outline, line: int) -> list[Completion]:
    case = outline.case_at(line + 1)
    return [Completion(c, "column", f"examples column of {case.name!r}") for c in case.columns] if case else []


def word_at(text: str, line: int, character: int) -> str | None:
    lines = text.split("\n")
    if line >= len(lines):
        return None
    current = lines[line]
    for match in re.finditer(r'"[^"\n]*"|[A-Za-z_$][A-Za-z0-9_.\-]*', current):
        if match.start() <= character <= match.end():
            return match.group(0)
    return None


def hover(text: str, outline: Outline, line: int, character: int) -> str | None:
    word = word_at(text, line, character)
    if word is None:
        return None
    tool = outline.tools.get(word.strip('"'))
    if tool is not None and _is_tool_position(text, line, word):
        where = "" if tool.file == outline.file else f"\n\n(declared in `{tool.file}`)"
        return f"```evl\n{tool.declaration}\n```{where}"
    meaning = _words.MEANINGS.get(word)
    return meaning


def _is_tool_position(text: str, line: int, word: str) -> bool:
    current = text.split("\n")[line]
    before = r"\b(?:tool|called|call|then|are|only called|given)\s+(?:[A-Za-z0-9_.\-\"]+\s*,\s*)*"
    return word.startswith('"') or bool(re.search(before + re.escape(word), current))


def definition(text: str, outline: Outline, line: int, character: int) -> ToolInfo | None:
    word = word_at(text, line, character)
    if word is None:
        return None
    return outline.tools.get(word.strip('"'))
