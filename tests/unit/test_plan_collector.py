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
    gc.unfreeze()
    with pytest.raises(PlanUsage, match="cannot run: the suites do not compile"):
        plan_of(work, BAD, seen, monkeypatch)
    assert seen == [False] and gc.isenabled()
    assert gc.get_freeze_count() == 0  # only suites that compiled are frozen


def test_a_caller_that_turned_the_collector_off_keeps_it_off(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gc.disable()
    seen: list[bool] = []
    plan_of(work, GOOD, seen, monkeypatch)
    assert seen == [False] and not gc.isenabled()


# ---- the command line: paused through start-up, on for the run (`plan/_collector.py`) ----------------

SEEN_AGENT = '''
import gc
from evaldsl import RunArtifacts

seen = []

def agent(prompt):
    seen.append(gc.isenabled())
    return RunArtifacts(final_text=prompt)
'''


def test_the_command_line_runs_its_agent_with_the_collector_on(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evaldsl.cli import main

    (work / "collector_seen_agent.py").write_text(SEEN_AGENT, encoding="utf-8")
    (work / "s.evl").write_text(GOOD, encoding="utf-8")
    gc.enable()
    planning: list[bool] = []
    plan_of_compile = _loading.compile_files
    monkeypatch.setattr(_loading, "compile_files", lambda *a, **k: (planning.append(gc.isenabled()),
                                                                    plan_of_compile(*a, **k))[1])
    assert main(["run", "s.evl", "--agent", "collector_seen_agent:agent", "-q", "--no-suite-cache"]) == 0
    import collector_seen_agent  # type: ignore[import-not-found]

    assert planning == [False] and collector_seen_agent.seen == [True] and gc.isenabled()


def test_a_command_that_cannot_run_leaves_the_collector_on(work: Path) -> None:
    from evaldsl.cli import main

    (work / "s.evl").write_text(BAD, encoding="utf-8")
    gc.enable()
    assert main(["run", "s.evl", "--agent", "collector_test_agent:agent", "-q", "--no-suite-cache"]) == 4
    assert main(["run", "nowhere.evl", "--agent", "collector_test_agent:agent", "-q"]) == 4
    assert gc.isenabled()


def test_run_starts_does_nothing_unless_the_command_line_paused(work: Path) -> None:
    from evaldsl.plan._collector import run_starts, start_up_paused

    gc.disable()
    run_starts()
    assert not gc.isenabled()  # a library caller's choice is left alone
    with start_up_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
    gc.enable()
    with start_up_paused():
        assert not gc.isenabled()
        run_starts()
        assert gc.isenabled()
    assert gc.isenabled()
