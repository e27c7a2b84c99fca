"""The suite cache (compile/_suite_cache.py): reused only while every file a compile read is
unchanged; corrupt and foreign entries ignored with a warning; nothing kept outside the root."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from evaldsl import ScriptedAgent, run_suite
from evaldsl.artifacts import RunArtifacts, ToolCall
from evaldsl.compile._compiler import check_suite, compile_suite
from evaldsl.compile._loading import cache_options
from evaldsl.compile._reading import read_source
from evaldsl.compile._suite_cache import SuiteCache, suite_cache
from evaldsl.syntax._diagnostics import EvlError

SUITE = '''suite "cached"
use "lib.evl"

case "weather"
  prompt "weather in Paris?"
  expect called search with <query: contains "paris">
  expect final text contains "sunny"

case "spaced"
  prompt "{{ not filled }}"
  expect no tool calls
'''

LIB = '''tool search "Search the web"
  param query: string "what to search for"
'''


class Project:
    """A folder with a suite, its `use` file, a cache and a key; `compile` counts real compiles."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "suite.evl").write_text(SUITE)
        (root / "lib.evl").write_text(LIB)
        self.warnings: list[str] = []
        self.builds = 0

    def cache(self, key: str = "key", root: Path | None = None) -> SuiteCache:
        return SuiteCache(self.root / ".evaldsl_cache", root=root or self.root, warn=self.warnings.append,
                          key_file=self.root / key)

    def compile(self, cache: SuiteCache, name: str = "suite.evl", kind: str = "run", root: Any = None) -> Any:
        path = self.root / name
        text = read_source(path)

        def build() -> Any:
            self.builds += 1
            if kind == "check":
                return check_suite(text, str(path), root=root)
            return compile_suite(text, str(path), root=root)

        return cache.compiled(str(path), text, cache_options(kind, None, root), build)

    def entries(self) -> list[Path]:
        return sorted((self.root / ".evaldsl_cache" / "suites").glob("*.bin"))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_an_unchanged_file_is_compiled_once_and_its_warnings_replayed(project: Project) -> None:
    first = project.compile(project.cache())
    second = project.compile(project.cache())
    assert project.builds == 1
    assert [d.code for d in first.warnings] == ["W304"]
    assert second.warnings == first.warnings
    sources = {str(project.root / "suite.evl"): SUITE}
    assert EvlError(list(second.warnings), sources).render() == EvlError(list(first.warnings), sources).render()
    assert [c.name for c in second.cases] == ["weather", "spaced"]
    assert [t.name for t in second.tools] == ["search"]
    assert project.warnings == []


def test_check_and_run_keep_separate_entries(project: Project) -> None:
    project.compile(project.cache(), kind="check")
    suite = project.compile(project.cache(), kind="run")
    assert project.builds == 2 and len(project.entries()) == 2
    assert len(suite.cases) == 2  # not check's suite, which keeps no case


def test_a_cached_suite_runs_as_the_compiled_one(project: Project) -> None:
    compiled = project.compile(project.cache())
    cached = project.compile(project.cache())
    assert project.builds == 1 and cached is not compiled
    call = ToolCall(name="search", args={"query": "weather in paris"})
    answer = RunArtifacts(final_text="it is sunny", tool_calls=[call])
    results = []
    for suite in (compiled, cached):
        report = run_suite(ScriptedAgent(default=answer), suite)
        results.append([(c.name, c.status, [(e.label, e.passed, e.detail) for r in c.runs for e in r.expectations])
                        for c in report.cases])
    assert results[0] == results[1]
    assert [status for _, status, _ in results[0]] == ["passed", "failed"]


@pytest.mark.parametrize("changed", ["suite.evl", "lib.evl"])
def test_a_change_to_the_file_or_a_use_file_compiles_again(project: Project, changed: str) -> None:
    project.compile(project.cache())
    path = project.root / changed
    path.write_text(path.read_text() + 'tool fetch "Fetch a page"\n' if changed == "lib.evl"
                    else path.read_text().replace('"sunny"', '"rainy"'))
    suite = project.compile(project.cache())
    assert project.builds == 2
    if changed == "lib.evl":
        assert [t.name for t in suite.tools] == ["search", "fetch"]
    else:
        assert suite.cases[0].expectations[1].label == 'final text contains "rainy"'


def test_a_change_to_an_examples_file_compiles_again(project: Project) -> None:
    (project.root / "rows.jsonl").write_text('{"city": "Paris"}\n')
    (project.root / "rows.evl").write_text(
        'case "weather in {{city}}"\n  examples from "rows.jsonl"\n  prompt "weather in {{city}}"\n'
        '  expect final text contains "{{city}}"\n')
    assert len(project.compile(project.cache(), "rows.evl").cases) == 1
    assert len(project.compile(project.cache(), "rows.evl").cases) == 1
    assert project.builds == 1
    (project.root / "rows.jsonl").write_text('{"city": "Paris"}\n{"city": "Oslo"}\n')
    suite = project.compile(project.cache(), "rows.evl")
    assert project.builds == 2
    assert [c.name for c in suite.cases] == ["weather in Paris", "weather in Oslo"]
    assert project.compile(project.cache(), "rows.evl").cases[1].prompt == "weather in Oslo"
    assert project.builds == 2


def test_a_change_to_a_world_file_compiles_again(project: Project) -> None:
    (project.root / "shop_world.py").write_text(
        "class Shop:\n    def refund(self, order: int) -> str:\n        '''Refund an order.'''\n"
        "        return 'ok'\n")
    (project.root / "shop.evl").write_text(
        'world "shop_world.py:Shop"\n\ncase "refund"\n  prompt "refund 42"\n  expect called refund\n')
    first = project.compile(project.cache(), "shop.evl")
    second = project.compile(project.cache(), "shop.evl")
    assert project.builds == 1
    assert second.cases[0].world.cls is first.cases[0].world.cls  # loaded again, from this process's import
    assert [t.name for t in second.tools] == ["refund"]
    with open(project.root / "shop_world.py", "a") as handle:
        handle.write("# edited\n")
    project.compile(project.cache(), "shop.evl")
    assert project.builds == 2


@pytest.mark.parametrize("damage", ["truncated", "flipped", "garbage", "empty"])
def test_a_corrupt_entry_is_ignored_with_a_warning_and_written_again(project: Project, damage: str) -> None:
    project.compile(project.cache())
    (entry,) = project.entries()
    data = entry.read_bytes()
    entry.write_bytes({"truncated": data[: len(data) // 2], "flipped": data[:-5] + bytes([data[-5] ^ 1]) + data[-4:],
                       "garbage": b"not a cache entry at all", "empty": b""}[damage])
    suite = project.compile(project.cache())
    assert project.builds == 2 and len(suite.cases) == 2
    assert len(project.warnings) == 1 and str(entry) in project.warnings[0]
    assert "compiling" in project.warnings[0] and str(project.root / "suite.evl") in project.warnings[0]
    project.compile(project.cache())  # written again, whole
    assert project.builds == 2 and len(project.warnings) == 1


def test_an_entry_written_under_another_key_is_foreign(project: Project) -> None:
    project.compile(project.cache(key="key"))
    project.compile(project.cache(key="other-key"))
    assert project.builds == 2
    assert len(project.warnings) == 1 and "another user or machine, or altered" in project.warnings[0]


def test_nothing_is_kept_for_a_file_outside_the_root(project: Project, tmp_path: Path) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    project.compile(project.cache(root=inner))
    project.compile(project.cache(root=inner))
    assert project.builds == 2 and project.entries() == []


def test_nothing_is_kept_when_a_use_file_is_outside_the_root(tmp_path: Path) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    project = Project(inner)
    (tmp_path / "lib.evl").write_text(LIB)
    (inner / "suite.evl").write_text(SUITE.replace('use "lib.evl"', 'use "../lib.evl"'))
    project.compile(project.cache())
    project.compile(project.cache())
    assert project.builds == 2 and project.entries() == []


def test_the_root_option_is_part_of_the_key(project: Project, tmp_path: Path) -> None:
    """A suite cached without --root is not reused under a root that forbids its `use` file."""
    (project.root / "sub").mkdir()
    (project.root / "sub" / "suite.evl").write_text(SUITE.replace('use "lib.evl"', 'use "../lib.evl"'))
    project.compile(project.cache(), "sub/suite.evl")
    with pytest.raises(EvlError, match="E230|outside the root"):
        project.compile(project.cache(), "sub/suite.evl", root=project.root / "sub")
    assert project.builds == 2


def test_errors_are_not_kept(project: Project) -> None:
    (project.root / "bad.evl").write_text('case "x"\n  prompt "p"\n  expect calld search\n')
    for _ in range(2):
        with pytest.raises(EvlError):
            project.compile(project.cache(), "bad.evl")
    assert project.builds == 2 and project.entries() == []


def test_what_cannot_be_stored_is_compiled_each_time(project: Project) -> None:
    cache = project.cache()
    path = project.root / "suite.evl"
    text = path.read_text()
    made = []

    def build() -> Any:
        made.append(1)
        return {"holds": lambda: None}  # a function of this module, with no importable name

    for _ in range(2):
        cache.compiled(str(path), text, ("run", None, None), build)
    assert len(made) == 2 and project.entries() == [] and project.warnings == []


def test_writers_at_once_leave_one_whole_entry(project: Project) -> None:
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for _ in range(3):
                cache = project.cache()
                cache._write(cache_entry, key, reads, suite)
        except BaseException as exc:  # pragma: no cover - shown by the assertion
            errors.append(exc)

    project.compile(project.cache())
    (cache_entry,) = project.entries()
    suite = compile_suite(read_source(project.root / "suite.evl"), str(project.root / "suite.evl"))
    probe = project.cache()
    key = repr((str(project.root / "suite.evl"), str((project.root / "suite.evl").resolve()),
                cache_options("run", None, None), __import__("evaldsl.compile._suite_cache", fromlist=["x"])
                .code_fingerprint()))
    reads = [(str((project.root / "suite.evl").resolve()),
              __import__("evaldsl.compile._reads", fromlist=["x"]).digest_file(project.root / "suite.evl")),
             (str((project.root / "lib.evl").resolve()),
              __import__("evaldsl.compile._reads", fromlist=["x"]).digest_file(project.root / "lib.evl"))]
    threads = [threading.Thread(target=write) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert project.entries() == [cache_entry]
    assert [p.name for p in cache_entry.parent.iterdir() if p.name.endswith(".tmp")] == []
    assert len(project.compile(probe).cases) == 2
    assert project.builds == 1 and project.warnings == []


def test_the_switches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALDSL_SUITE_CACHE", raising=False)
    monkeypatch.delenv("EVALDSL_SUITE_CACHE_DIR", raising=False)
    assert suite_cache(None, enabled=False) is None
    assert suite_cache(tmp_path / "c").directory == tmp_path / "c"
    assert suite_cache(None).directory == Path(".evaldsl_cache")
    monkeypatch.setenv("EVALDSL_SUITE_CACHE_DIR", str(tmp_path / "env"))
    assert suite_cache(None).directory == tmp_path / "env"
    assert suite_cache(tmp_path / "c").directory == tmp_path / "c"
    for off in ("0", "off", "OFF", "no", "false"):
        monkeypatch.setenv("EVALDSL_SUITE_CACHE", off)
        assert suite_cache(tmp_path / "c") is None


def test_a_harness_with_other_predicates_compiles_again(project: Project) -> None:
    """Unknown custom predicates are errors only when a harness names its own: the names are in the key."""
    (project.root / "custom.evl").write_text('case "x"\n  prompt "p"\n  expect is_tidy()\n')
    path = project.root / "custom.evl"
    text = path.read_text()

    def compiled(predicates: Any) -> Any:
        def build() -> Any:
            project.builds += 1
            return check_suite(text, str(path), predicates=predicates)

        return project.cache().compiled(str(path), text, cache_options("check", predicates, None), build)

    compiled(None)
    compiled({"is_tidy": print})
    assert project.builds == 2
    with pytest.raises(EvlError, match="is_tidy"):
        compiled({"is_clean": print})
    compiled(None)
    assert project.builds == 3


def test_a_folder_that_cannot_be_written_is_said_once_and_the_compile_goes_on(project: Project) -> None:
    (project.root / ".evaldsl_cache").write_text("a file where the folder should be")
    cache = project.cache()
    for _ in range(2):
        assert len(project.compile(cache).cases) == 2
    assert project.builds == 2
    assert len(project.warnings) == 1
    assert "cannot write in" in project.warnings[0] and "going on without it" in project.warnings[0]


def test_an_entry_whose_world_no_longer_imports_is_compiled_again_with_the_error(tmp_path: Path) -> None:
    """A world is imported again when its entry is loaded (each process imports it once): when an import
    inside it now fails, the suite is compiled again, so the error is the compile's own, at its line."""
    import os
    import subprocess
    import sys

    (tmp_path / "helper.py").write_text("STATE = 'ok'\n")
    (tmp_path / "shop_world.py").write_text(
        "import helper\n\nclass Shop:\n    def refund(self, order: int) -> str:\n        '''Refund.'''\n"
        "        return helper.STATE\n")
    (tmp_path / "shop.evl").write_text(
        'world "shop_world.py:Shop"\n\ncase "refund"\n  prompt "refund 42"\n  expect called refund\n')
    (tmp_path / "agent.py").write_text(
        "from evaldsl import RunArtifacts, ToolCall\n"
        "def agent(prompt):\n    return RunArtifacts(tool_calls=[ToolCall(name='refund', args={'order': 42})])\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "key"), "PYTHONPATH": str(tmp_path)}
    env.pop("EVALDSL_SUITE_CACHE", None)

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "evaldsl", "run", "shop.evl", "--agent", "agent:agent", "-q"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    assert run().returncode == 0
    assert len(list((tmp_path / ".evaldsl_cache" / "suites").glob("*.bin"))) == 1
    (tmp_path / "helper.py").write_text("raise RuntimeError('helper broke')\n")
    done = run()
    assert done.returncode == 4, done.stdout + done.stderr
    assert "E244" in done.stderr and "helper broke" in done.stderr and "shop.evl:1" in done.stderr
    assert "ignoring the entry" not in done.stderr  # not a damaged entry: a suite that no longer compiles


def test_entries_unused_for_a_month_are_swept_at_the_next_write_and_used_ones_kept(project: Project) -> None:
    """An entry a command used is brought up to date (once a day at most); one that nobody used for
    `KEEP_DAYS` (an older evaldsl's, a renamed file's) goes when the cache next writes an entry."""
    import os
    import time

    from evaldsl.compile._suite_cache import KEEP_DAYS

    project.compile(project.cache())
    (used,) = project.entries()
    stale = used.with_name("0" * 40 + ".bin")
    stale.write_bytes(b"an older evaldsl's entry")
    other = used.with_name("not-an-entry.txt")
    other.write_text("kept")
    old = time.time() - (KEEP_DAYS + 1) * 86400
    for path in (used, stale, other):
        os.utime(path, (old, old))
    project.compile(project.cache())  # a hit: the used entry's time is brought up to date
    assert project.builds == 1 and time.time() - used.stat().st_mtime < 60
    assert stale.exists()  # nothing was written yet: no sweep
    (project.root / "lib.evl").write_text(LIB + "\n")  # a miss: the entry is written again, then the sweep
    project.compile(project.cache())
    assert project.builds == 2
    assert not stale.exists() and used.exists() and other.exists()
