"""The Ray executor's parts that need no cluster: the task body, the worker's cache, a missing Ray."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from evaldsl import compile
from evaldsl.run import _ray

AGENT = '''
from evaldsl import RunArtifacts

BUILT = []

class Agent:
    def __init__(self):
        BUILT.append(1)

    def run(self, prompt):
        return RunArtifacts(final_text=prompt)
'''


@pytest.fixture
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    name = f"ray_unit_agent_{tmp_path.name}"  # a fresh module per test
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    monkeypatch.setattr(_ray, "_SUBJECTS", {})
    monkeypatch.setattr(sys, "path", list(sys.path))
    return tmp_path


def case(text: str = "hello"):  # type: ignore[no-untyped-def]
    return compile(f'case "c"\n  prompt "{text}"\n  expect final text is "hello"\n').cases[0]


def test_the_task_body_runs_the_case_and_builds_the_agent_once(agent_dir: Path) -> None:
    spec = f"ray_unit_agent_{agent_dir.name}:Agent"
    first = _ray.run_on_worker(spec, "agent", [str(agent_dir)], case(), 0, None, None)
    second = _ray.run_on_worker(spec, "agent", [str(agent_dir)], case("bye"), 1, None, None)
    assert (first.passed, second.passed, second.index) == (True, False, 1)
    assert second.expectations[0].detail  # scored in the worker, like the local runner
    assert len(sys.modules[spec.split(":")[0]].BUILT) == 1


def test_an_agent_that_cannot_be_built_on_the_worker_fails_the_run_not_the_worker(agent_dir: Path) -> None:
    result = _ray.run_on_worker("no_such_module_here:Agent", "agent", [str(agent_dir)], case(), 0, None, None)
    assert result.error is not None and not result.passed
    assert "cannot build the agent 'no_such_module_here:Agent' on the Ray worker" in result.error.message


def test_without_ray_the_executor_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(_ray.RayUnavailable, match=r"pip install 'evaldsl\[ray\]'"):
        _ray.RayExecutor("m:a")
    from evaldsl.cli import main

    (tmp_path / "s.evl").write_text('case "c"\n  prompt "p"\n  expect no error\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "s.evl", "--agent", "evaldsl.demo:agent", "--executor", "ray"]) == 4
    assert "evaldsl: --executor ray: Ray is not installed: pip install 'evaldsl[ray]'" in capsys.readouterr().err
