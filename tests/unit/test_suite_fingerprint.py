"""The suite fingerprint (`run._shard.suite_version`) from the lines each suite keeps (`compile._described`):
the same value as describing every case, with the suite cache on, off, after a file changes, and from an
entry that was corrupt; a suite read from the cache is not described again."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl import ScriptedAgent, run_suite
from evaldsl.compile import _described
from evaldsl.compile._loading import compile_files
from evaldsl.compile._model import CaseSettings, CompiledCase, CompiledExpectation, CompiledSuite
from evaldsl.compile._suite_cache import SuiteCache
from evaldsl.run._api import flatten_cases
from evaldsl.run._shard import _kept_lines, suite_version

SUITE = '''suite "kept"

case "weather"
  prompt "weather in Paris?"
  expect called search with <query: contains "paris">
  expect final text contains "sunny"

case "alone"
  prompt "hello"
  expect no tool calls
'''

OTHER = '''suite "other"

case "sums"
  prompt "1 + 2?"
  expect final number is 3
'''

_NAMES = st.text(alphabet=st.sampled_from(["a", "b", "'", '"', "\\", "é", "\n", "\ud800", " ", "("]), max_size=5)


def _case(file: str, name: str, prompt: str, setup: Any = None, world: Any = None) -> CompiledCase:
    return CompiledCase(suite="s", name=name, file=file, line=1, prompt=prompt, settings=CaseSettings(),
                        expectations=(CompiledExpectation(label=name + prompt, file=file, line=2, check=print),),
                        setup=setup, world=world)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["s/a.evl", "s/./a.evl", "t/b'.evl", "s/a"]), _NAMES, _NAMES,
                                   st.sampled_from([None, 1, "x", {"k": [1]}])), max_size=8), max_size=4),
       st.booleans())
def test_kept_lines_give_the_fingerprint_of_describing_every_case(suites: list, kept: bool) -> None:  # type: ignore[type-arg]
    """Suites of cases of any files (one key reached by two paths, one file in two suites): the fingerprint
    from their kept lines (made as for the suite cache) is the one of describing the flattened cases."""
    made = [CompiledSuite(name="s", file="s/a.evl", cases=tuple(_case(*c) for c in cases)) for cases in suites]
    if kept:
        for suite in made:
            _described.describe(suite)
    flat = flatten_cases(made)
    whole = len(flat) == sum(len(s.cases) for s in made)  # (no case repeated across the suites)
    assert (_kept_lines(flat, made) is not None) == ((kept or not made) and whole)
    assert suite_version(flat, made) == suite_version(flat) == suite_version(list(flat))


@pytest.mark.parametrize("file", ["a.evl", "s/a.evl", "/abs/s/a.evl", "s/./t/../a.evl", "s\\a.evl", "."])
def test_a_file_loaded_alone_has_the_fingerprint_it_keeps(file: str) -> None:
    one = CompiledSuite(name="one", file=file, cases=(_case(file, "x", "p"), _case(file, "y", "q")))
    _described.describe(one)
    lines = _described.kept(one)
    assert lines is not None and lines[file][2] == suite_version(list(one.cases))
    assert suite_version(flatten_cases([one]), [one]) == suite_version(list(one.cases))


def test_the_kept_lines_are_used_only_for_the_suites_own_cases() -> None:
    one = CompiledSuite(name="one", file="a.evl", cases=(_case("a.evl", "x", "p"), _case("a.evl", "y", "q")))
    two = CompiledSuite(name="two", file="b.evl", cases=(_case("b.evl", "z", "r"),))
    flat = flatten_cases([one, two])
    assert _kept_lines(flat, [one, two]) is None  # compiled without the cache: no lines kept
    _described.describe(one)
    assert _kept_lines(flat, [one, two]) is None
    _described.describe(two)
    assert _kept_lines(flat, [one, two]) is not None
    assert _kept_lines(flat[:2], [one, two]) is None  # a case left out
    assert _kept_lines(flat, [two, one]) is None  # not in the suites' order
    assert _kept_lines([one.cases[0], *flat[1:]], [one, two]) is not None
    assert _kept_lines([_case("a.evl", "x", "p"), *flat[1:]], [one, two]) is None  # an equal case, not the same
    assert suite_version(flat[:2], [one, two]) == suite_version(flat[:2])


def test_a_suite_whose_cases_are_swapped_is_described_again() -> None:
    one = CompiledSuite(name="one", file="a.evl", cases=(_case("a.evl", "x", "p"),))
    _described.describe(one)
    before = suite_version(flatten_cases([one]), [one])
    other = dataclasses.replace(one, cases=(_case("a.evl", "x", "changed"),))
    assert _described.kept(other) is None
    object.__setattr__(other, "_described", one.__dict__["_described"])  # lines kept for other cases: not used
    assert _described.kept(other) is None
    after = suite_version(flatten_cases([other]), [other])
    assert before != after == suite_version(flatten_cases([other]))


def test_a_line_with_a_newline_is_described_by_suite_version_itself() -> None:
    class Spec:  # a world's spec whose repr holds a newline
        def __repr__(self) -> str:
            return "two\nlines"

    world = type("World", (), {"spec": Spec()})()
    one = CompiledSuite(name="one", file="a.evl", cases=(_case("a.evl", "x", "p", world=world),
                                                         _case("a.evl", "y", "p", world=world)))
    flat = flatten_cases([one])
    _described.describe(one)
    assert _described.kept(one) is None and _kept_lines(flat, [one]) is None
    assert suite_version(flat, [one]) == suite_version(flat)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "suite.evl").write_text(SUITE)
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "other.evl").write_text(OTHER)
    return tmp_path


def _version(root: Path, cache: SuiteCache | None) -> str:
    suites = compile_files([root / "suite.evl", root / "more" / "other.evl"], cache=cache)
    return suite_version(flatten_cases(suites), suites)


def _uncached(root: Path) -> str:
    suites = compile_files([root / "suite.evl", root / "more" / "other.evl"])
    flat = flatten_cases(suites)
    return suite_version(list(flat))  # no suites: every case described


def test_one_file_from_the_cache_has_its_fingerprint_without_hashing(project: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def cache() -> SuiteCache:
        return SuiteCache(project / ".evaldsl_cache", root=project, key_file=project / "key")

    expected = suite_version(list(flatten_cases(compile_files([project / "suite.evl"]))))
    suites = compile_files([project / "suite.evl"], cache=cache())
    assert suite_version(flatten_cases(suites), suites) == expected
    suites = compile_files([project / "suite.evl"], cache=cache())
    with monkeypatch.context() as m:
        m.setattr(_described, "hashed", lambda blocks: pytest.fail("hashed again"))
        m.setattr("evaldsl.run._shard.hashed", lambda blocks: pytest.fail("hashed again"))
        assert suite_version(flatten_cases(suites), suites) == expected


def test_the_same_fingerprint_with_the_cache_on_off_and_after_a_change(project: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    warnings: list[str] = []

    def cache() -> SuiteCache:
        return SuiteCache(project / ".evaldsl_cache", root=project, warn=warnings.append, key_file=project / "key")

    off = _uncached(project)
    assert _version(project, None) == off
    assert _version(project, cache()) == off  # compiled, its lines made and stored with it
    with monkeypatch.context() as m:  # from the cache: no case is described
        m.setattr(_described.Describer, "__call__", lambda self, case: pytest.fail("described again"))
        assert _version(project, cache()) == off
    (project / "suite.evl").write_text(SUITE.replace("hello", "hello there"))
    changed = _uncached(project)
    assert changed != off
    assert _version(project, cache()) == changed == _version(project, cache())
    assert warnings == []


def test_a_corrupt_entry_is_ignored_with_a_warning_and_the_fingerprint_is_the_same(project: Path) -> None:
    warnings: list[str] = []

    def cache() -> SuiteCache:
        return SuiteCache(project / ".evaldsl_cache", root=project, warn=warnings.append, key_file=project / "key")

    expected = _uncached(project)
    assert _version(project, cache()) == expected
    for entry in (project / ".evaldsl_cache" / "suites").iterdir():
        data = entry.read_bytes()
        entry.write_bytes(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    assert _version(project, cache()) == expected
    assert len(warnings) == 2 and all("ignoring the entry" in w for w in warnings)
    assert _version(project, cache()) == expected and len(warnings) == 2  # written again


def test_run_suite_of_suites_keeps_the_fingerprint(project: Path) -> None:
    suites = compile_files([project / "suite.evl", project / "more" / "other.evl"])
    twice = [run_suite(ScriptedAgent(default="x"), suites).meta.suite_version for _ in range(2)]
    assert twice == [_uncached(project)] * 2


def test_evaldsl_run_gives_one_fingerprint_from_the_cache_or_not(project: Path) -> None:
    def version(*args: str) -> str:
        subprocess.run([sys.executable, "-m", "evaldsl", "run", "--agent", "evaldsl:ScriptedAgent", "suite.evl",
                        "more", "--json", "r.json", "-q", *args], cwd=project, capture_output=True, timeout=120,
                       env={**os.environ, "NO_COLOR": "1"}, check=False)
        return json.loads((project / "r.json").read_text(encoding="utf-8"))["meta"]["suite_version"]  # type: ignore[no-any-return]

    off = version("--no-suite-cache")
    assert version() == off  # written to the cache
    assert version() == off  # read from it
    assert off == _uncached(project)
