"""The cyclic collector around a plan's compile (`plan._inputs.load_suites`): off while the suites are
compiled and the parser imported, the compiled suites frozen, and then as the caller had it, whether the
compile succeeded or not. (What it saves is measured in bench/README.md, never asserted here.)"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaldsl.compile import _loading
from evaldsl.plan import PlanUsage, RunRequest, build_plan

AGENT = '''
from evaldsl import RunArtifacts

def agent(prompt):
    return RunArtifacts(final_text=prompt)
'''

GOOD = 'suite "S"\n\ncase "one"\n  prompt "hi"\n  expect final text contains "hi"\n'
BAD = 'suite "S"\n\ncase "one"\n  prompt "hi"\n  expect final text contians "hi"\n'


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "collector_test_agent.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    was = gc.isenabled()
    yield tmp_path
    gc.unfreeze()  # the plan froze this test process's objects: give them back to the collector
    (gc.enable if was else gc.disable)()


def plan_of(work: Path, text: str, seen: list[bool], monkeypatch: pytest.MonkeyPatch) -> object:
    (work / "s.evl").write_text(text, encoding="utf-8")
    compile_files = _loading.compile_files

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return compile_files(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_loading, "compile_files", spy)
    return build_plan(RunRequest(paths=("s.evl",), agent="collector_test_agent:agent", suite_cache=False,
                                 argv=("run", "s.evl")))


def test_the_collector_is_off_while_compiling_and_on_again_after(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gc.enable()
    seen: list[bool] = []
    plan = plan_of(work, GOOD, seen, monkeypatch)
    assert seen == [False] and gc.isenabled()
    assert gc.get_freeze_count() > 0  # the compiled suites are frozen: never rescanned
    assert [c.name for c in plan.todo] == ["one"]  # type: ignore[attr-defined]


def test_a_suite_that_does_not_compile_leaves_the_collector_on(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gc.enable()
    seen: list[bool] = []
    with pytest.raises(PlanUsage, match="cannot run: the suites do not compile"):
        plan_of(work, BAD, seen, monkeypatch)
    assert seen == [False] and gc.isenabled()


def test_a_caller_that_turned_the_collector_off_keeps_it_off(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gc.disable()
    seen: list[bool] = []
    plan_of(work, GOOD, seen, monkeypatch)
    assert seen == [False] and not gc.isenabled()
