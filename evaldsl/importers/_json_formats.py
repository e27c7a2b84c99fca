"""The two JSON eval formats: single-turn tool selection and multi-turn agent loops.

Single-turn items (`input`, `expected_tool`, optional `secondary_tools`)
score the FIRST tool call: the golden tool gives full credit, a secondary
one half, and `"none"` asks for no tool call at all. That is exactly
`expect first call GOLDEN else first call SECONDARY for 0.5` and
`expect no tool calls`.

Multi-turn items (`input`, `expected_tools`, `expected_content`) pass when
the expected tools occur as a subsequence of the calls (`expect called A
then B`) and an LLM judge scores the answer against the expected content at
0.5 or more (`expect judge "..."`, whose default threshold is 0.5).

A file may mix both shapes; each item is read by its own keys. JSON has no
positions after `json.loads`, so the items of the top-level array are read
one by one with `raw_decode`, which keeps each item's offset for errors.
"""

from __future__ import annotations

import json
from typing import Any

from . import _emit
from ._model import CaseOut, Problem

SINGLE_KEYS = {"input", "expected_tool", "secondary_tools"}
MULTI_KEYS = {"input", "expected_tools", "expected_content"}


def read_items(text: str) -> list[tuple[int, Any]]:
    """The top-level array's items with their offsets (a lone object is one item)."""
    try:
        json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise Problem(f"not valid JSON: {exc.msg}", exc.pos, code="E501") from None
    except ValueError as exc:
        raise Problem(f"not valid JSON: {exc}", _constant_offset(text), code="E501") from None
    decoder = json.JSONDecoder()
    at = _skip_ws(text, 0)
    if not text.startswith("[", at):
        return [(at, json.loads(text))]
    items: list[tuple[int, Any]] = []
    at = _skip_ws(text, at + 1)
    while not text.startswith("]", at):
        item, end = decoder.raw_decode(text, at)
        items.append((at, item))
        at = _skip_ws(text, end)
        if text.startswith(",", at):
            at = _skip_ws(text, at + 1)
    return items


def _no_constant(word: str) -> Any:
    raise ValueError(f"`{word}` is not a JSON value")


def _constant_offset(text: str) -> int:
    hits = [text.find(w) for w in ("NaN", "Infinity", "-Infinity") if w in text]
    return min(hits) if hits else 0


def _skip_ws(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n\ufeff":
        at += 1
    return at


def convert_item(item: Any, offset: int) -> CaseOut:
    """One JSON item as a case; raises `Problem` when it has neither shape."""
    if not isinstance(item, dict):
        raise Problem(f"expected an object with `input`, found {_kind(item)}", offset)
    prompt = item.get("input")
    if not isinstance(prompt, str):
        raise Problem("this item has no `input` string (the prompt)", offset)
    if "expected_tool" in item:
        return _single(item, prompt, offset)
    if "expected_tools" in item or "expected_content" in item:
        return _multi(item, prompt, offset)
    raise Problem("this item has neither `expected_tool` (single-turn) nor `expected_tools` / "
                  "`expected_content` (multi-turn)", offset)


def _single(item: dict[str, Any], prompt: str, offset: int) -> CaseOut:
    golden = item["expected_tool"]
    secondary = item.get("secondary_tools", [])
    if not isinstance(golden, str):
        raise Problem("`expected_tool` must be a string (a tool name, or \"none\")", offset)
    if not isinstance(secondary, list) or not all(isinstance(s, str) for s in secondary):
        raise Problem("`secondary_tools` must be a list of tool names", offset)
    main = "no tool calls" if golden == "none" else f"first call {_emit.name(golden)}"
    fallbacks = "".join(f" else first call {_emit.name(s)} for 0.5" for s in secondary)
    case = CaseOut(prompt=prompt, offset=offset, source_format="single-turn")
    case.expects.append(main + fallbacks)
    _keep_unknown(case, item, SINGLE_KEYS)
    return case


def _multi(item: dict[str, Any], prompt: str, offset: int) -> CaseOut:
    tools = item.get("expected_tools", [])
    content = item.get("expected_content")
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise Problem("`expected_tools` must be a list of tool names", offset)
    if content is not None and not isinstance(content, str):
        raise Problem("`expected_content` must be a string", offset)
    case = CaseOut(prompt=prompt, offset=offset, source_format="multi-turn")
    if tools:
        case.expects.append("called " + " then ".join(_emit.name(t) for t in tools))
    if content is not None:
        case.expects.append(f"judge {_emit.string(judge_rubric(content))}")
    if not case.expects:  # an empty subsequence and no content: the source checks nothing
        case.comments.append(("the source item checks nothing (no expected_tools, no expected_content)", offset))
        case.expects.append("no error")
    _keep_unknown(case, item, MULTI_KEYS)
    return case


def judge_rubric(expected: str) -> str:
    """The rubric for `expected_content`: the source's judge compared the answer to it."""
    return f"The answer says what this expected answer says: {expected}"


def _keep_unknown(case: CaseOut, item: dict[str, Any], known: set[str]) -> None:
    for key, val in item.items():
        if key not in known:
            shown = json.dumps(val, ensure_ascii=False)
            case.unknown.append(f"{json.dumps(key)}: {shown}")


def _kind(item: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(item), "a number")
