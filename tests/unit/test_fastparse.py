"""The parse without Lark (`syntax/_fastparse.py`, `_tables.py`): its tables come from the parser cache, a
file without a syntax error never imports Lark, and a file with one is handed to Lark with nothing read twice.

That both ways give the same suites and diagnostics is the property test's
(tests/properties/test_fast_parse_props.py); these are what it cannot see.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evaldsl.syntax import _grammar, _parser, _parser_cache, _recovery, _tables

GOOD = 'case "one"\n  prompt "p1"\n  expect called search\n\ncase "two"\n  prompt "p2"\n  expect no error\n'
BAD_AT_THE_END = GOOD + '\ncase "three"\n  prompt "p3"\n  expect calld search\n'


def _env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}


_PROBE = """
import sys
from evaldsl.cli import main
code = main(["check", sys.argv[1], "--no-suite-cache"])
print("lark imported" if "lark" in sys.modules else "no lark", code, file=sys.stderr)
"""


def test_a_check_without_syntax_errors_does_not_import_lark_once_the_tables_are_kept(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.evl", tmp_path / "bad.evl"
    good.write_text(GOOD, encoding="utf-8")
    bad.write_text(BAD_AT_THE_END, encoding="utf-8")
    runs = [subprocess.run([sys.executable, "-c", _PROBE, str(path)], capture_output=True, text=True,
                           env=_env(tmp_path), cwd=tmp_path) for path in (good, good, bad)]
    assert runs[0].stderr.strip().endswith("lark imported 0")  # the first: Lark builds the parser and its tables
    assert runs[1].stderr.strip().endswith("no lark 0"), runs[1].stderr
    assert "lark imported 1" in runs[2].stderr  # a syntax error: Lark's recovery words it
    assert "unknown predicate `calld`" in runs[2].stdout + runs[2].stderr


def test_statements_read_before_the_first_syntax_error_are_handed_on_once() -> None:
    emitted: list = []
    suite, diagnostics = _parser.parse_items(BAD_AT_THE_END, "t.evl", emitted.append)
    only_lark: list = []
    saved = _tables.fast_tables
    _tables.fast_tables = lambda: None  # type: ignore[assignment]
    try:
        suite2, diagnostics2 = _parser.parse_items(BAD_AT_THE_END, "t.evl", only_lark.append)
    finally:
        _tables.fast_tables = saved  # type: ignore[assignment]
    assert [type(item).__name__ for item in emitted] == ["Case", "Case", "Case"]
    assert [item.name.value for item in emitted] == ["one", "two", "three"]
    assert emitted == only_lark and diagnostics == diagnostics2 and suite == suite2
    assert [d.code for d in diagnostics] == ["E101"]


def test_a_file_without_errors_is_not_given_to_lark(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("Lark's way was taken")

    monkeypatch.setattr(_recovery, "lark_parse", refuse)
    suite = _parser.parse(GOOD, "t.evl")
    assert [case.name.value for case in suite.items] == ["one", "two"]


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("EVALDSL_PARSER_CACHE", raising=False)
    return tmp_path / "evaldsl"


def test_the_tables_are_kept_sealed_and_an_altered_entry_is_refused(cache_home: Path) -> None:
    grammar = _grammar.grammar_path().read_bytes()
    data = _grammar.tables_of(_grammar.get_parser()[0])
    assert data is not None
    _parser_cache.save_tables(grammar, data)
    entry = _parser_cache._entry(grammar, ".tables")
    assert entry.stat().st_mode & 0o777 == 0o600
    assert _parser_cache.load_tables(grammar) == data
    assert _parser_cache.load_tables(grammar + b"\n// changed\n") is None
    altered = bytearray(entry.read_bytes())
    altered[-5] ^= 0xFF
    entry.write_bytes(bytes(altered))
    assert _parser_cache.load_tables(grammar) is None


def test_the_tables_hold_plain_data_only() -> None:
    import marshal

    data = _grammar.tables_of(_grammar.get_parser()[0])
    assert data is not None
    assert marshal.loads(marshal.dumps(data)) == data  # nothing marshal cannot write (no code, no objects)
    tables = _tables.Tables(data)
    assert tables.start in tables.rows and set(tables.lexer_at) == set(tables.rows)
    assert any(callback is None for _, _, callback in tables.rules)  # `?rule`s of one symbol pass their child on


def test_with_the_parser_cache_off_every_file_takes_lark_s_way(tmp_path: Path) -> None:
    good = tmp_path / "good.evl"
    good.write_text(GOOD, encoding="utf-8")
    env = {**_env(tmp_path), "EVALDSL_PARSER_CACHE": "off"}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", _PROBE, str(good)], capture_output=True, text=True, env=env,
                              cwd=tmp_path)
        assert done.stderr.strip().endswith("lark imported 0"), done.stderr
    assert not (tmp_path / "cache" / "evaldsl" / "parsers").exists()


def test_the_post_lexer_gives_a_parse_its_whole_state_back() -> None:
    """A `use` file with a syntax error, read inside the `emit` of a file taking Lark's way, takes it too,
    with Lark's one post-lexer: `load` must give the outer parse back what `take` keeps of its statement."""
    from evaldsl.syntax._joiner import LineJoiner
    from evaldsl.syntax._tokens import Token

    joiner = LineJoiner()
    joiner.reset("expect not not (")
    for kind in ("EXPECT", "NOT", "NOT"):
        assert joiner.take(Token(kind, "x", end_pos=1))
    assert joiner.nots == 2
    assert joiner.take(Token("_LPAR", "(", end_pos=1))
    state = (joiner.last, joiner.nots, joiner.depth, len(joiner.open))
    saved = joiner.save()
    joiner.reset("case")  # the parse inside
    joiner.take(Token("CASE", "case", end_pos=4))
    joiner.load(saved)
    assert (joiner.last, joiner.nots, joiner.depth, len(joiner.open)) == state == ("_LPAR", 0, 1, 1)
