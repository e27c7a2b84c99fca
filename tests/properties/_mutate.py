"""A seeded mutation fuzzer of the language: shipped suites, bent out of shape.

Shared by tests/properties/test_fuzz.py (a few hundred inputs in every run)
and bench/fuzz.py (100,000 and more). Seeds are the shipped suites/ and the
golden .evl files; each input applies one to four mutations to one seed:
byte flips, token deletions, duplications and swaps, line splices (a line of
another seed inserted, a line dropped or doubled), and inserted brackets,
quotes, comment marks, line breaks and unusual unicode.

`check_input(data)` runs one input through the reader, `parse`, `compile`
and `format`, and returns what went wrong, or None. Going wrong means: an
exception other than `EvlError` escaped, or `format` changed the meaning of
text that parses (its output does not parse, parses to another AST, compiles
to other cases, or formats again to something else).
"""

from __future__ import annotations

import random
import re
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evaldsl import EvlError, compile, format, parse
from evaldsl.compile._reading import decode_source

ROOT = Path(__file__).resolve().parents[2]
_TOKEN = re.compile(r'\s+|"""|"(?:[^"\\\n]|\\.)*"|[A-Za-z_$][A-Za-z0-9_.\-]*|-?[0-9][0-9.eE+\-]*|.', re.S)
INSERTS = [
    "<", ">", "[", "]", "{", "}", "(", ")", '"', '"""', "'", "#", "|", ",", ":", "?", "$", "/",
    "\\", "\n", "\r", "\r\n", "\t", " ", "\x00", "\x0b", "\x0c", "\x1c", "\x85", "\u2028",
    "\u2029", "\ufeff", "\ud800", "é", "\u0301", "\U0001f600", "\u200b", "then", "and", "else",
    "not", "with", "case", "expect", "examples", "| a |", "$x", "{{x}}", "1e999", "-0", "99999999999",
    # v2: precise matching
    "only", "only <", "loosely", "absent or", " or <k: 1>", " and <", "(", "in any order", "called [",
    "calls are [", "valid arguments", "tools t, u", "\"s\" loosely",
]


def seeds() -> list[tuple[str, bytes]]:
    """(name, bytes) of every shipped and golden .evl file, sorted by name."""
    paths = sorted((ROOT / "suites").rglob("*.evl")) + sorted((ROOT / "tests" / "golden").rglob("*.evl"))
    return [(str(p.relative_to(ROOT)), p.read_bytes()) for p in paths]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _flip(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    if not data:
        return bytes([rng.randrange(256)])
    i = rng.randrange(len(data))
    byte = data[i] ^ (1 << rng.randrange(8)) if rng.random() < 0.7 else rng.randrange(256)
    return data[:i] + bytes([byte]) + data[i + 1:]


def _token_edit(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    toks = _tokens(data.decode("latin-1"))  # latin-1: any bytes round-trip
    if len(toks) < 2:
        return data
    i, j = rng.randrange(len(toks)), rng.randrange(len(toks))
    kind = rng.randrange(3)
    if kind == 0:
        del toks[i]
    elif kind == 1:
        toks.insert(j, toks[i])
    else:
        toks[i], toks[j] = toks[j], toks[i]
    return "".join(toks).encode("latin-1")


def _splice(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    lines = data.split(b"\n")
    i = rng.randrange(len(lines) + 1)
    kind = rng.randrange(3)
    if kind == 0:
        donor = rng.choice(pool).split(b"\n")
        lines.insert(i, rng.choice(donor))
    elif kind == 1 and i < len(lines):
        del lines[i]
    elif i < len(lines):
        lines.insert(i, lines[i])
    return b"\n".join(lines)


def _insert(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    i = rng.randrange(len(data) + 1)  # may split a character: that is a mutation too
    return data[:i] + rng.choice(INSERTS).encode("utf-8", "surrogatepass") + data[i:]


MUTATIONS = (_flip, _token_edit, _splice, _insert)


def mutants(seed: int, count: int, pool: list[bytes] | None = None) -> Iterator[bytes]:
    """`count` mutated inputs, the same ones for the same `seed`."""
    pool = pool if pool is not None else [data for _, data in seeds()]
    rng = random.Random(seed)
    for _ in range(count):
        data = rng.choice(pool)
        for _ in range(rng.randint(1, 4)):
            data = rng.choice(MUTATIONS)(rng, data, pool)
        yield data


def _meaning(text: str, base: str) -> Any:
    """What a text compiles to, positions aside; or the codes of the errors it gives."""
    try:
        suite = compile(text, "f.evl", base_dir=base)
    except EvlError as exc:
        return sorted(d.code for d in exc.errors)
    return _without_lines(suite.to_json())


def _without_lines(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_lines(v) for k, v in value.items() if k != "line"}
    if isinstance(value, list):
        return [_without_lines(v) for v in value]
    return value


def check_input(data: bytes, base: str | None = None) -> str | None:
    """Run one input through every stage; None when all is well, else what went wrong."""
    base = base if base is not None else tempfile.gettempdir() + "/evaldsl-fuzz-empty"
    stage = "read"
    try:
        text = decode_source(data, "f.evl")
        stage = "parse"
        suite = parse(text, "f.evl")
    except EvlError:
        return None
    except Exception:  # noqa: BLE001 (this is what the fuzzer looks for)
        return f"{stage}: {traceback.format_exc(limit=-3)}"
    try:
        stage = "compile"
        before = _meaning(text, base)
        stage = "format"
        out = format(text, "f.evl")
        stage = "parse of format's output"
        if parse(out, "f.evl") != suite:
            return "format changed the AST"
        stage = "compile of format's output"
        if _meaning(out, base) != before:
            return "format changed what the suite compiles to"
        stage = "format of format's output"
        if format(out, "f.evl") != out:
            return "format is not idempotent"
    except Exception:  # noqa: BLE001 (an EvlError here is an escape too: the text parsed)
        return f"{stage}: {traceback.format_exc(limit=-3)}"
    return None
