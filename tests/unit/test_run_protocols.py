"""Agent and Harness protocols, the resolvers, importing module:attr, the scripted agent."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from evaldsl.artifacts import RunArtifacts
from evaldsl.run._protocols import (
    Agent,
    FunctionAgent,
    Harness,
    Predicates,
    agent_subject,
    harness_subject,
    import_object,
    predicates_of,
    resolve_agent,
    resolve_harness,
    subject_for,
)
from evaldsl.run._scripted import ScriptedAgent, UnscriptedPrompt


class SyncAgent:
    def run(self, instruction: str) -> RunArtifacts:
        return RunArtifacts(final_text=instruction)


class AsyncAgent:
    name = "async-one"

    async def run(self, instruction: str) -> RunArtifacts:
        return RunArtifacts(final_text=instruction)


class World:
    predicates = Predicates()

    def setup(self, value: Any) -> dict[str, Any]:
        return {}

    def run(self, instruction: str, world: dict[str, Any]) -> RunArtifacts:
        return RunArtifacts()

    @predicates.register
    def tidy(artifacts: RunArtifacts, world: Any) -> bool:  # type: ignore[misc]
        return True


def test_protocols_are_runtime_checkable() -> None:
    assert isinstance(SyncAgent(), Agent) and isinstance(AsyncAgent(), Agent)
    assert isinstance(World(), Harness) and not isinstance(SyncAgent(), Harness)
    assert isinstance(ScriptedAgent(), Agent)


def test_resolve_agent_accepts_objects_classes_and_functions() -> None:
    obj = SyncAgent()
    assert resolve_agent(obj) is obj
    assert isinstance(resolve_agent(SyncAgent), SyncAgent)

    def my_agent(prompt: str) -> RunArtifacts:
        return RunArtifacts()

    wrapped = resolve_agent(my_agent)
    assert isinstance(wrapped, FunctionAgent) and wrapped.run is my_agent
    assert agent_subject(my_agent).name == "my_agent"
    assert agent_subject(AsyncAgent()).run_is_async and agent_subject(AsyncAgent()).name == "async-one"
    assert not agent_subject(obj).run_is_async and agent_subject(obj).name == "SyncAgent"


@pytest.mark.parametrize("thing", [None, 42, "agent", {"run": 1}, [SyncAgent()], object()])
def test_resolve_agent_rejects_non_agents_clearly(thing: Any) -> None:
    with pytest.raises(TypeError, match="is not an agent: an agent is an object with a run"):
        resolve_agent(thing)


def test_resolve_agent_explains_bad_shapes() -> None:
    class NeedsArgs:
        def __init__(self, key: str) -> None: ...

        def run(self, instruction: str) -> RunArtifacts: ...

    with pytest.raises(TypeError, match="cannot make an agent from class .*NeedsArgs.* raised TypeError"):
        resolve_agent(NeedsArgs)
    with pytest.raises(TypeError, match=r"must accept \(instruction\).*pass it as a harness"):
        resolve_agent(World())
    with pytest.raises(TypeError, match=r"must accept \(instruction\)"):
        resolve_agent(lambda: None)


def test_resolve_harness() -> None:
    assert isinstance(resolve_harness(World), World)
    with pytest.raises(TypeError, match="is not a harness"):
        resolve_harness(SyncAgent())
    subject = harness_subject(World, predicates={"extra": lambda a, w: True})
    assert subject.kind == "harness" and set(subject.predicates) == {"tidy", "extra"}


def test_subject_for_tells_agents_and_harnesses_apart() -> None:
    assert subject_for(World).kind == "harness"
    assert subject_for(SyncAgent).kind == "agent"

    class AgentWithSetup(SyncAgent):
        def setup(self) -> None: ...

    assert subject_for(AgentWithSetup()).kind == "agent"


def test_predicates_registry_and_reader() -> None:
    preds = Predicates()

    @preds.register("renamed")
    def original(artifacts: Any, world: Any) -> bool:
        return True

    assert list(preds) == ["renamed"] and preds["renamed"] is original
    assert set(predicates_of(World)) == {"tidy"}
    assert predicates_of(SyncAgent()) == {}

    class Bad:
        predicates = {"x": 3}

    with pytest.raises(TypeError, match="must be a mapping of name -> function"):
        predicates_of(Bad)


def test_import_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "agent_mod_for_tests.py").write_text("class A:\n    class B:\n        pass\nagent = A()\n")
    (tmp_path / "broken_mod_for_tests.py").write_text("1 / 0\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    assert type(import_object("agent_mod_for_tests:agent")).__name__ == "A"
    assert import_object("agent_mod_for_tests:A.B").__name__ == "B"
    assert import_object(f"{tmp_path / 'agent_mod_for_tests.py'}:agent") is not None
    assert type(import_object("./agent_mod_for_tests:agent")).__name__ == "A"  # a path, without .py
    for spec, message in [
        ("agent_mod_for_tests", "not of the form module:attr"),
        ("agent_mod_for_tests:nope", "has no attribute 'nope'"),
        ("no_such_module_xyz:agent", "cannot import 'no_such_module_xyz': No module named"),
        ("broken_mod_for_tests:x", "raised ZeroDivisionError: division by zero"),
        ("missing.py:x", "no such file"),
        ("agent_mod_for_tests:agnt", r"has no attribute 'agnt'; did you mean agent_mod_for_tests:agent\?"),
        ("./missing_agent:agent", r"no such file: ./missing_agent.py"),
        ("agents/missing:agent", r"a module is written with dots, e.g. agents.missing:agent"),
    ]:
        with pytest.raises(ImportError, match=message):
            import_object(spec)


# ---- the scripted agent ----------------------------------------------------------------


def test_scripted_agent_replies_from_its_script() -> None:
    canned = RunArtifacts(final_text="4", tokens=3)
    agent = ScriptedAgent({
        "sum": canned,
        "text": "hello",
        "dict": {"final_text": "from dict"},
        "fn": lambda prompt: prompt.upper(),
    })
    assert agent.run("sum") is canned
    assert agent.run("text").final_text == "hello"
    assert agent.run("dict").final_text == "from dict"
    assert agent.run("fn").final_text == "FN"
    assert agent.prompts == ["sum", "text", "dict", "fn"]


def test_scripted_agent_unknown_prompts() -> None:
    agent = ScriptedAgent({"what is 2 + 2?": "4"})
    with pytest.raises(UnscriptedPrompt, match=r"no reply for the prompt 'what is 2\+2\?'; did you mean 'what is 2 \+ 2\?'"):
        agent.run("what is 2+2?")
    with pytest.raises(UnscriptedPrompt, match="knows 1 prompt"):
        agent.run("something else entirely")
    with pytest.raises(UnscriptedPrompt, match="script is empty"):
        ScriptedAgent().run("x")
    assert ScriptedAgent(default="fallback").run("x").final_text == "fallback"
    with pytest.raises(TypeError, match="got int"):
        ScriptedAgent({"x": lambda p: 5}).run("x")
