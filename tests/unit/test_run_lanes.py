"""Lanes (`run/_lanes.py`): a plain sync agent's runs called back to back on a few threads and scored
on the loop. Each test pins one thing the scheduler's workers guaranteed and lanes must keep:
the concurrency bound, timeouts, the hand-over to the workers (judged cases, awaitables), errors,
an agent's KeyboardInterrupt, and that nothing is lost or run twice. No timing is asserted."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from evaldsl.artifacts import RunArtifacts
from evaldsl.compile._model import CaseSettings, CompiledCase, CompiledExpectation, Outcome
from evaldsl.run import _lanes
from evaldsl.run._api import run_suite


def _ok(ctx: Any) -> Outcome:
    return Outcome(1.0 if ctx.artifacts.final_text == "ok" else 0.0, f"got {ctx.artifacts.final_text!r}")


def case(name: str, *, judged: bool = False, **settings: Any) -> CompiledCase:
    exps = [CompiledExpectation("final text is ok", "t.evl", 2, _ok)]
    if judged:
        exps.append(CompiledExpectation("judged", "t.evl", 3, lambda ctx: Outcome(ctx.judge(prompt="q", answer="a")),
                                        needs_judge=True))
    return CompiledCase(suite="t", name=name, file="t.evl", line=1, prompt=name, settings=CaseSettings(**settings),
                        expectations=tuple(exps))


class Calls:
    """A sync agent that notes each call, on which thread, and how many calls were in flight at once."""

    def __init__(self, answer: Any = "ok", pause: float = 0.0) -> None:
        self.answer, self.pause = answer, pause
        self.prompts: list[str] = []
        self.threads: set[str] = set()
        self.most = 0
        self._now = 0
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> Any:
        with self._lock:
            self.prompts.append(prompt)
            self.threads.add(threading.current_thread().name)
            self._now += 1
            self.most = max(self.most, self._now)
        try:
            if self.pause:
                time.sleep(self.pause)
            answer = self.answer(prompt) if callable(self.answer) else self.answer
            return RunArtifacts(final_text=answer) if isinstance(answer, str) else answer
        finally:
            with self._lock:
                self._now -= 1


def test_a_plain_sync_agent_runs_in_lanes_and_every_run_is_recorded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_lanes, "AHEAD", 16)  # several refills
    monkeypatch.setattr(_lanes, "LOW", 4)
    agent = Calls(answer=lambda p: "ok" if int(p.split()[0]) % 7 else "no")
    cases = [case(f"{i} case", repeat=2 if i % 5 == 0 else 1) for i in range(100)]
    report = run_suite(agent, cases)
    assert [c.name for c in report.cases] == [c.name for c in cases]
    assert [c.status for c in report.cases] == ["failed" if i % 7 == 0 else "passed" for i in range(100)]
    assert [len(c.runs) for c in report.cases] == [2 if i % 5 == 0 else 1 for i in range(100)]
    assert sorted(agent.prompts) == sorted(c.name for c in cases for _ in range(c.settings.repeat))
    assert agent.threads and all(name.startswith("evaldsl-lane-") for name in agent.threads)


def test_lanes_keep_the_concurrency_bound_and_spread_slow_runs() -> None:
    agent = Calls(pause=0.03)
    report = run_suite(agent, [case(str(i)) for i in range(30)], concurrency=3)
    assert report.ok and len(agent.prompts) == 30
    assert agent.most <= 3  # never more agent calls at once than -j
    barrier = threading.Barrier(3, timeout=10)
    meet = Calls(answer=lambda p: barrier.wait() and "ok" or "ok")  # passes only with three calls at once
    assert run_suite(meet, [case(str(i)) for i in range(3)], concurrency=3).ok


def test_a_hung_call_times_out_and_a_fresh_lane_goes_on_even_at_one_at_a_time() -> None:
    release, returned = threading.Event(), threading.Event()

    def answer(prompt: str) -> str:
        if prompt == "hang":
            release.wait(10)
            returned.set()
        return "ok"

    try:
        agent = Calls(answer=answer)
        cases = [case("before"), case("hang", timeout_s=0.1), case("after 1"), case("after 2")]
        report = run_suite(agent, cases, concurrency=1)
        assert [c.status for c in report.cases] == ["passed", "error", "passed", "passed"]
        error = report.cases[1].runs[0].error
        assert error is not None and error.type == "TimeoutError"
        assert error.message == ("the agent did not finish within 0.1s (the case's timeout); "
                                 "the run was abandoned (a sync agent cannot be stopped)")
        assert not returned.is_set()  # the run ended while the hung call still held its thread
    finally:
        release.set()


def test_an_agents_errors_are_its_runs_errors_and_the_lanes_go_on() -> None:
    def answer(prompt: str) -> Any:
        if prompt == "boom":
            raise ValueError("the model is down")
        if prompt == "cancel":
            raise asyncio.CancelledError
        if prompt == "none":
            return None
        return "ok"

    report = run_suite(Calls(answer=answer), [case(n) for n in ("a", "boom", "cancel", "none", "b")])
    assert [c.status for c in report.cases] == ["passed", "error", "error", "error", "passed"]
    types = [c.runs[0].error.type for c in report.cases[1:4]]  # type: ignore[union-attr]
    assert types == ["ValueError", "CancelledError", "TypeError"]
    assert "the model is down" in report.cases[1].runs[0].error.message  # type: ignore[union-attr]


def test_judged_cases_and_awaitables_are_handed_to_the_workers_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_lanes, "AHEAD", 8)
    monkeypatch.setattr(_lanes, "LOW", 2)

    def answer(prompt: str) -> Any:
        if prompt.startswith("coro"):
            async def later() -> RunArtifacts:
                await asyncio.sleep(0)
                return RunArtifacts(final_text="ok")
            return later()
        return "ok"

    names = [f"{i}" for i in range(12)] + ["judged"] + [f"coro {i}" for i in range(3)]
    names += [f"{i} more" for i in range(12)]
    cases = [case(n, judged=n == "judged") for n in names]
    agent = Calls(answer=answer)
    report = run_suite(agent, cases, judge=lambda **kw: 1.0)
    assert [c.name for c in report.cases] == names
    assert report.ok, [(c.name, c.runs[0].error) for c in report.cases if not c.passed]
    assert sorted(agent.prompts) == sorted(names)  # each called once: none lost, none called twice
    judged = report.cases[names.index("judged")].runs[0]
    assert [e.passed for e in judged.expectations] == [True, True]


def test_an_agents_keyboard_interrupt_stops_the_run_after_keeping_what_came_back_before_it() -> None:
    def answer(prompt: str) -> str:
        if prompt == "stop":
            raise KeyboardInterrupt
        return "ok"

    seen: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        run_suite(Calls(answer=answer), [case("a"), case("b"), case("stop"), case("never")], concurrency=1,
                  on_result=lambda r: seen.append(r.name))
    assert seen == ["a", "b"]


def test_lanes_are_not_used_with_exitfirst() -> None:
    agent = Calls(answer=lambda p: "no" if p == "b" else "ok")
    report = run_suite(agent, [case("a"), case("b"), case("c")], concurrency=1, exitfirst=True)
    assert [c.name for c in report.cases] == ["a", "b"] and agent.prompts == ["a", "b"]
    assert not any(name.startswith("evaldsl-lane-") for name in agent.threads)


def test_a_lane_with_nothing_left_to_take_has_the_loop_look_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the loop's looks a minute apart, a run still ends as soon as its lanes have called the agent
    for every queued run: the lane that finds the queue empty asks the loop to look (one wake, where the
    lanes would park anyway)."""
    monkeypatch.setattr(_lanes, "_LOOK_S", (60.0, 60.0))
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(run_suite(Calls(pause=0.02), [case(str(i)) for i in range(5)])),
                              daemon=True)
    worker.start()
    worker.join(30)  # far below a look; it ends within milliseconds
    assert box and box[0].ok


def test_a_runner_bug_while_scoring_a_lanes_run_costs_that_run_only(monkeypatch: pytest.MonkeyPatch) -> None:
    real = _lanes.score_run

    def flaky(subject: Any, case: Any, *args: Any, **kwargs: Any) -> Any:
        if case.name == "bug":
            raise RuntimeError("a bug in the runner")
        return real(subject, case, *args, **kwargs)

    monkeypatch.setattr(_lanes, "score_run", flaky)
    report = run_suite(Calls(), [case("a"), case("bug"), case("b")])
    assert [c.status for c in report.cases] == ["passed", "error", "passed"]
    assert "a bug in the runner" in report.cases[1].runs[0].error.message  # type: ignore[union-attr]


def test_the_quick_awaitable_test_answers_as_inspect_does() -> None:
    """`is_awaitable` skips the general test for plain artifacts and dicts only, never for a subclass
    that can be awaited."""
    import inspect

    from evaldsl.artifacts import RunArtifacts
    from evaldsl.run._scoring import is_awaitable

    class AwaitableDict(dict):  # type: ignore[type-arg]
        def __await__(self):  # type: ignore[no-untyped-def]
            yield from ()

    class AwaitableArtifacts(RunArtifacts):
        def __await__(self):  # type: ignore[no-untyped-def]
            yield from ()

    async def coroutine() -> None:
        return None

    pending, loop = coroutine(), asyncio.new_event_loop()
    values = [RunArtifacts(final_text="x"), {"final_text": "x"}, AwaitableDict(), AwaitableArtifacts(),
              pending, loop.create_future(), None, "text", 3]
    try:
        answers = [is_awaitable(v) for v in values]
        assert answers == [inspect.isawaitable(v) for v in values]
        assert answers == [False, False, True, True, True, True, False, False, False]
    finally:
        pending.close()
        loop.close()
