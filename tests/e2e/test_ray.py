"""`--executor ray` on a local Ray instance the tests start: the runner's own behaviour, a worker that
dies mid-case, resume, agents built once per worker. Marked ``ray``: skipped unless --run-ray or
EVALDSL_RUN_RAY=1; `.ci/run` runs them in a step of their own. Offline, 2 CPUs."""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.ray

AGENT = '''
import os, time
from evaldsl import RunArtifacts

HERE = os.path.dirname(os.path.abspath(__file__))

def log(name, line):
    with open(os.path.join(HERE, name), "a") as fh:
        fh.write(line + "\\n")

class Agent:
    name = "ray-scripted"

    def __init__(self):
        log("built.log", str(os.getpid()))

    def run(self, prompt):
        log("calls.log", prompt)
        if prompt == "die":
            os._exit(7)
        if prompt == "boom":
            raise RuntimeError("kaput")
        if prompt == "hang":
            time.sleep(30)
        return RunArtifacts(final_text=prompt, tokens=3)

class Shop:
    """A harness: the world is built and checked in the worker, and never travels."""

    predicates = {"stock_is": lambda artifacts, world, item, count: world[item] == count}

    def setup(self, value):
        return dict(value)

    def run(self, instruction, world):
        world["apples"] -= 1
        return RunArtifacts(final_text="sold")

class Chatty:
    """Takes a context: it may hold a conversation."""

    name = "ray-chatty"

    def run(self, message, ctx):
        return RunArtifacts(final_text=f"hi, you said: {message}")

class AsyncAgent:
    name = "ray-async"

    async def run(self, prompt):
        import asyncio
        await asyncio.sleep(0)
        return RunArtifacts(final_text=prompt)
'''

SUITE = '''
timeout 2s

case "passes"
  prompt "hello"
  expect final text contains "hello"

case "fails"
  prompt "bye"
  expect final text contains "hello"

case "raises"
  prompt "boom"
  expect no error

case "hangs"
  prompt "hang"
  expect no error

case "dies"
  prompt "die"
  expect no error

case "later"
  skip "not yet"
  prompt "hello later"
  expect no error

case "known bug"
  xfail
  prompt "bye bug"
  expect final text contains "hello"

case "repeated"
  repeat 3
  prompt "hello again"
  expect final text contains "hello"

case "last"
  prompt "hello last"
  expect final text is "hello last"
'''


@pytest.fixture(scope="module")
def ray_session() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def agent_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ray_agent")
    (folder / "ray_agent.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    (folder / "s.evl").write_text(textwrap.dedent(SUITE).lstrip(), encoding="utf-8")
    return folder


@pytest.fixture
def work(agent_dir: Path, ray_session: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(agent_dir)
    for log in ("calls.log", "built.log"):
        (agent_dir / log).unlink(missing_ok=True)
    return agent_dir


def run(*args: str) -> int:
    from evaldsl.cli import main

    return main(["run", *args, "--agent", "ray_agent:Agent", "--executor", "ray", "-q"])


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_statuses_timeouts_and_a_dying_worker_match_the_local_runner(work: Path) -> None:
    assert run("s.evl", "--json", "r.json") == 1
    rec = json.loads((work / "r.json").read_text())
    status = {c["name"]: c["status"] for c in rec["cases"]}
    assert status == {"passes": "passed", "fails": "failed", "raises": "error", "hangs": "error", "dies": "error",
                      "later": "skipped", "known bug": "xfailed", "repeated": "passed", "last": "passed"}
    runs = {c["name"]: c["runs"] for c in rec["cases"]}
    assert [r["index"] for r in runs["repeated"]] == [0, 1, 2] and all(r["passed"] for r in runs["repeated"])
    assert runs["raises"][0]["error"]["type"] == "RuntimeError" and runs["raises"][0]["error"]["message"] == "kaput"
    hang = runs["hangs"][0]["error"]
    assert hang["type"] == "TimeoutError" and "within 2s (the case's timeout)" in hang["message"]
    died = runs["dies"][0]["error"]
    assert died["type"] == "WorkerCrashedError" and "the Ray worker running this case died mid-run" in died["message"]
    assert rec["meta"]["agent"] == "ray-scripted" and rec["meta"]["complete"] is True
    assert rec["summary"]["tokens_total"] == 3 * 7  # passes, fails, known bug, three repeats, last
    assert "hello later" not in lines(work / "calls.log")  # skipped: never sent


def test_the_agent_is_built_once_per_worker_process(work: Path) -> None:
    assert run("s.evl", "-k", "repeated or last or passes or fails") == 1
    built = lines(work / "built.log")
    assert len(built) == len(set(built))  # no process built it twice (the driver builds one to check it)
    assert len(lines(work / "calls.log")) == 6 > len(built) - 1


def test_resume_runs_only_the_missing_cases_on_ray(work: Path) -> None:
    assert run("s.evl", "-k", "passes or last", "--json", "part.json") == 0
    (work / "calls.log").unlink()
    assert run("s.evl", "-k", "not hangs and not dies", "--resume", "part.json") == 1
    calls = lines(work / "calls.log")
    assert "hello" not in calls and "hello last" not in calls  # done before: not run again
    assert sorted(calls) == sorted(["bye", "boom", "bye bug", "hello again", "hello again", "hello again"])
    rec = json.loads((work / "part.json").read_text())
    assert [c["name"] for c in rec["cases"]] == ["passes", "fails", "raises", "later", "known bug", "repeated", "last"]


def test_exitfirst_stops_the_run_on_ray(work: Path) -> None:
    assert run("s.evl", "-k", "passes or fails or last", "-x", "-j", "1", "--json", "x.json") == 1
    rec = json.loads((work / "x.json").read_text())
    assert [c["name"] for c in rec["cases"]] == ["passes", "fails"] and rec["meta"]["complete"] is False
    assert "hello last" not in lines(work / "calls.log")


def test_a_harness_runs_on_ray_with_its_world_and_predicates(work: Path) -> None:
    from evaldsl.cli import main

    (work / "shop.evl").write_text(textwrap.dedent('''
        case "sells one"
          prompt "sell an apple"
          setup <apples: 3>
          expect stock_is(item: apples, count: 2)

        case "sells none"
          prompt "sell an apple"
          setup <apples: 3>
          expect stock_is(item: apples, count: 3)
        ''').lstrip(), encoding="utf-8")
    code = main(["run", "shop.evl", "--harness", "ray_agent:Shop", "--executor", "ray", "-q", "--json", "h.json"])
    assert code == 1
    rec = json.loads((work / "h.json").read_text())
    assert [c["status"] for c in rec["cases"]] == ["passed", "failed"] and rec["meta"]["backend"] == "harness"


def test_the_library_takes_an_executor_and_async_agents_keep_one_loop(work: Path) -> None:
    from evaldsl import RayExecutor, load, run_suite

    executor = RayExecutor("ray_agent:AsyncAgent", paths=[str(work)])
    report = run_suite(object.__new__(_Named), load(work / "s.evl"), executor=executor, keyword="repeated or last")
    assert [c.status for c in report.cases] == ["passed", "passed"] and report.summary.runs == 4


class _Named:
    """Stands in on the driver (it names the record); the workers build ray_agent:AsyncAgent."""

    name = "ray-async"

    def run(self, prompt: str) -> Any:
        raise AssertionError("the driver must not run the agent")


def test_an_llm_judge_and_a_simulated_user_travel_to_the_workers(work: Path, openai_server: Any) -> None:
    """`--judge` and `--user-model` on Ray: each worker gets them pickled (their prompt templates as
    text, compiled again there) and calls the endpoint itself."""
    from servers._script import text

    from evaldsl.cli import main

    def script(request: dict[str, Any], index: int) -> Any:
        if request["model"] == "judge":
            return text('{"score": 0.9, "reasoning": "greets back"}')
        return text("hello there" if len(request["messages"]) < 3 else "thanks ###DONE###")

    openai_server.reply = script
    (work / "judged.evl").write_text(textwrap.dedent('''
        case "judged"
          prompt "hello judge"
          expect judge "greets back" at least 0.5

        case "talks"
          simulated user "say hello, then stop"
          user turns 2
          expect no error
        ''').lstrip(), encoding="utf-8")
    code = main(["run", "judged.evl", "--agent", "ray_agent:Chatty", "--executor", "ray", "-q", "--json", "j.json",
                 "--judge", "openai:judge", "--judge-base-url", openai_server.base_url,
                 "--user-model", "openai:user", "--user-base-url", openai_server.base_url, "--no-cache"])
    rec = json.loads((work / "j.json").read_text())
    status = {c["name"]: c["status"] for c in rec["cases"]}
    assert code == 0, rec["cases"]
    assert status == {"judged": "passed", "talks": "passed"}
    judged = rec["cases"][0]["runs"][0]["expectations"][0]
    assert "greets back" in (judged["detail"] or "")
