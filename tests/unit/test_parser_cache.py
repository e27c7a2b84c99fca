"""The parser cache (`syntax/_parser_cache.py`): a parser loaded whole parses exactly as one just built,
an entry that is not this user's own is never loaded, and nothing about the cache can fail a parse."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evaldsl.syntax import _grammar, _parser_cache
from evaldsl.syntax._diagnostics import EvlError

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted([*ROOT.glob("suites/**/*.evl"), *ROOT.glob("tests/golden/errors/*.evl"),
                  *ROOT.glob("tests/golden/format/*.evl")])


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("EVALDSL_PARSER_CACHE", raising=False)
    return tmp_path / "evaldsl"


def _grammar_bytes() -> bytes:
    return _grammar.grammar_path().read_bytes()


def _saved(cache_home: Path) -> Path:
    parser, joiner = _grammar.build_parser()
    _parser_cache.save_parser(_grammar_bytes(), parser, joiner)
    entries = list((cache_home / "parsers").glob("*.bin"))
    assert len(entries) == 1
    return entries[0]


def _outcome(parser_and_joiner: tuple, text: str, name: str) -> str:
    """What parsing ``text`` with that parser gives: the suite's JSON, or the rendered errors."""
    from evaldsl.syntax import _parser, _recovery, _tables

    saved = _recovery.get_parser, _tables.fast_tables
    _recovery.get_parser = lambda: parser_and_joiner  # type: ignore[assignment]
    _tables.fast_tables = lambda: None  # type: ignore[assignment]  # Lark's way for every file
    try:
        return _parser.parse(text, name).model_dump_json()
    except EvlError as exc:
        return exc.render()
    finally:
        _recovery.get_parser, _tables.fast_tables = saved  # type: ignore[assignment]


def test_a_loaded_parser_parses_every_sample_as_a_built_one(cache_home: Path) -> None:
    _saved(cache_home)
    loaded = _parser_cache.load_parser(_grammar_bytes(), _grammar.relink)
    assert loaded is not None
    built = _grammar.build_parser()
    assert len(SAMPLES) > 40
    errors = 0
    for path in SAMPLES:
        text = path.read_text(encoding="utf-8")
        outcome = _outcome(loaded, text, path.name)
        assert outcome == _outcome(built, text, path.name), path
        errors += not outcome.startswith("{")
    assert errors > 5  # syntax errors (and their recovery) are compared too


def test_only_the_newest_entries_are_kept(cache_home: Path) -> None:
    import os

    folder = cache_home / "parsers"
    folder.mkdir(parents=True)
    for n in range(12):  # entries of other versions, oldest first
        old = folder / f"old{n:02}.bin"
        old.write_bytes(b"x")
        os.utime(old, ns=(n * 10**9, n * 10**9))
    entry = _saved_among(cache_home)
    left = sorted(p.name for p in folder.glob("*.bin"))
    assert entry.name in left and len(left) == _parser_cache.KEPT
    others = [name for name in left if name != entry.name]
    assert others == [f"old{n:02}.bin" for n in range(12 - _parser_cache.KEPT + 1, 12)]  # the newest of them


def _saved_among(cache_home: Path) -> Path:
    parser, joiner = _grammar.build_parser()
    _parser_cache.save_parser(_grammar_bytes(), parser, joiner)
    return _parser_cache._entry(_grammar_bytes(), ".bin")


def test_the_entry_is_its_users_alone(cache_home: Path) -> None:
    assert _saved(cache_home).stat().st_mode & 0o777 == 0o600


def test_an_altered_entry_is_refused_and_the_parser_built_again(cache_home: Path) -> None:
    entry = _saved(cache_home)
    data = bytearray(entry.read_bytes())
    data[-10] ^= 0xFF
    entry.write_bytes(bytes(data))
    assert _parser_cache.load_parser(_grammar_bytes(), _grammar.relink) is None


def test_an_entry_sealed_with_another_users_key_is_refused(cache_home: Path) -> None:
    _saved(cache_home)
    key = cache_home / "suite-cache.key"
    key.write_bytes(bytes(32))  # another key than the one that sealed the entry
    assert _parser_cache.load_parser(_grammar_bytes(), _grammar.relink) is None


def test_another_grammar_has_its_own_entry(cache_home: Path) -> None:
    _saved(cache_home)
    assert _parser_cache.load_parser(_grammar_bytes() + b"\n// changed\n", _grammar.relink) is None


def test_turned_off_it_neither_writes_nor_reads(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _saved(cache_home)
    monkeypatch.setenv("EVALDSL_PARSER_CACHE", "off")
    assert _parser_cache.load_parser(_grammar_bytes(), _grammar.relink) is None
    parser, joiner = _grammar.build_parser()
    for entry in (cache_home / "parsers").glob("*.bin"):
        entry.unlink()
    _parser_cache.save_parser(_grammar_bytes(), parser, joiner)
    assert not list((cache_home / "parsers").glob("*.bin"))


def test_check_works_when_the_cache_cannot_be_written(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would go")
    case = tmp_path / "one.evl"
    case.write_text('case "c"\n  prompt "hi"\n  expect final text contains "hi"\n', encoding="utf-8")
    env = {"XDG_CACHE_HOME": str(blocked), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "evaldsl", "check", str(case), "--no-suite-cache"],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_a_second_process_loads_the_parser_the_first_one_kept(tmp_path: Path) -> None:
    case = tmp_path / "one.evl"
    case.write_text('case "c"\n  prompt "hi"\n  expect called calculator\n', encoding="utf-8")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    probe = ("import sys; from evaldsl.syntax import _grammar, _parser_cache; "
             "found = _parser_cache.load_parser(_grammar.grammar_path().read_bytes(), _grammar.relink); "
             "print('loaded' if found else 'none')")
    first = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert first.stdout.strip() == "none", first.stderr
    done = subprocess.run([sys.executable, "-m", "evaldsl", "check", str(case), "--no-suite-cache"],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    second = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert second.stdout.strip() == "loaded", second.stderr


def test_without_a_home_folder_nothing_is_kept_and_nothing_fails(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    from evaldsl import _files

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr("os.path.expanduser", lambda path: path)  # no HOME, no password entry: "~" stays
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OSError, match="no home folder"):
        _files.cache_home()
    parser, joiner = _grammar.build_parser()
    _parser_cache.save_parser(_grammar_bytes(), parser, joiner)
    assert _parser_cache.load_parser(_grammar_bytes(), _grammar.relink) is None
    assert not any(tmp_path.iterdir())  # no "~" folder made in the working directory
