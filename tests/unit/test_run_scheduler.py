"""The runner: statuses, isolation, timeouts, repeats, concurrency, order, -x, harnesses.

Cases are built by hand (checks are plain callables over an EvalContext), so
these tests pin the runner's behaviour independently of the compiler.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from evaldsl.artifacts import RunArtifacts, ToolCall
from evaldsl.compile._model import (
    CaseSettings,
    CompiledCase,
    CompiledExpectation,
    CompiledSuite,
    Outcome,
)
from evaldsl.run._api import arun_suite, flatten_cases, run_case, run_eval, run_suite
from evaldsl.run._protocols import Predicates
from evaldsl.run._scripted import ScriptedAgent


def expect(label: str, check: Any, *, line: int = 3, judge: bool = False) -> CompiledExpectation:
    return CompiledExpectation(label=label, file="t.evl", line=line, check=check, needs_judge=judge)


def final_is(text: str) -> CompiledExpectation:
    def check(ctx: Any) -> Outcome:
        got = ctx.artifacts.final_text
        return Outcome(1.0 if got == text else 0.0, None if got == text else f"got {got!r}")

    return expect(f'final text is "{text}"', check)


def credit(value: float) -> CompiledExpectation:
    return expect(f"credit {value}", lambda ctx: Outcome(value, None if value == 1 else "partial"))


def case(name: str, prompt: str | None = None, *exps: CompiledExpectation, suite: str = "t", **settings: Any) -> CompiledCase:
    return CompiledCase(
        suite=suite, name=name, file="t.evl", line=1, prompt=prompt if prompt is not None else name,
        settings=CaseSettings(**settings), expectations=tuple(exps) or (final_is("ok"),),
    )


def statuses(report: Any) -> dict[str, str]:
    return {c.name: c.status for c in report.cases}


# ---- statuses (docs/language.md 6.6) -------------------------------------------------


def test_every_status() -> None:
    agent = ScriptedAgent({"good": "ok", "bad": "no", "boom": lambda p: 1 / 0})
    cases = [
        case("good"), case("bad"), case("boom"),
        case("skipped", "good", skip="not today"),
        case("xfailed", "bad", xfail="known bug"),
        case("xfail-error", "boom", xfail=""),
        case("xpassed", "good", xfail="flaky"),
        case("skip-wins", "good", skip="", xfail="also"),
    ]
    report = run_suite(agent, cases)
    assert statuses(report) == {
        "good": "passed", "bad": "failed", "boom": "error", "skipped": "skipped",
        "xfailed": "xfailed", "xfail-error": "xfailed", "xpassed": "xpassed", "skip-wins": "skipped",
    }
    assert agent.prompts.count("good") == 2  # good and xpassed; skipped cases never run
    s = report.summary
    assert (s.total, s.passed, s.failed, s.errors, s.skipped, s.xfailed, s.xpassed) == (8, 1, 1, 1, 2, 2, 1)
    assert s.accuracy == pytest.approx(2 / 6)  # (passed + xpassed) / cases that ran
    skipped = report.cases[3]
    assert skipped.score is None and skipped.pass_rate is None and skipped.runs == [] and skipped.skip == "not today"
    assert not report.ok


def test_xfailed_and_xpassed_do_not_fail_the_report() -> None:
    agent = ScriptedAgent({"a": "no", "b": "ok"})
    report = run_suite(agent, [case("a", xfail=""), case("b", xfail=""), case("c", "b", skip="")])
    assert statuses(report) == {"a": "xfailed", "b": "xpassed", "c": "skipped"}
    assert report.ok


# ---- isolation: errors stay in their run --------------------------------------


def test_exception_is_kept_with_type_message_and_traceback() -> None:
    def explode(prompt: str) -> RunArtifacts:
        raise ValueError("the model is down")

    report = run_suite(ScriptedAgent({"x": explode, "y": "ok"}), [case("x"), case("y")])
    err = report.cases[0].runs[0].error
    assert err is not None and err.type == "ValueError" and err.message == "the model is down"
    assert "explode" in (err.traceback or "") and "ValueError" in (err.traceback or "")
    assert report.cases[0].runs[0].artifacts is None
    assert report.cases[1].status == "passed"


def test_agent_reported_error_makes_an_error_but_expectations_are_still_shown() -> None:
    agent = ScriptedAgent({"x": RunArtifacts(final_text="ok", error="rate limited")})
    result = run_suite(agent, [case("x")]).cases[0]
    run = result.runs[0]
    assert result.status == "error" and run.score == 0 and not run.passed
    assert run.error is not None and (run.error.type, run.error.message) == ("AgentError", "rate limited")
    assert run.expectations[0].passed  # evaluated all the same, for the report


@pytest.mark.parametrize(
    ("returned", "needle"),
    [(42, "returned int, not RunArtifacts"), (None, "returned None"), ("text", "returned str"),
     ({"final_txt": "x"}, "dict that is not valid RunArtifacts: final_txt")],
)
def test_wrong_return_type_fails_the_run_naming_the_type(returned: Any, needle: str) -> None:
    result = run_suite(lambda prompt: returned, [case("x")]).cases[0]
    assert result.status == "error"
    assert needle in result.runs[0].error.message  # type: ignore[union-attr]


def test_a_dict_of_artifact_fields_is_accepted() -> None:
    agent = lambda prompt: {"final_text": "ok", "tool_calls": [{"name": "search", "args": {"q": 1}}]}  # noqa: E731
    result = run_suite(agent, [case("x")]).cases[0]
    assert result.status == "passed"
    assert result.runs[0].artifacts.tool_calls == [ToolCall(name="search", args={"q": 1})]  # type: ignore[union-attr]


def test_an_expectation_that_raises_makes_the_run_an_error() -> None:
    def unreadable(ctx: Any) -> Outcome:
        raise RuntimeError("judge reply unreadable")

    c = case("x", None, final_is("ok"), expect("judge-ish", unreadable, line=7))
    run = run_suite(ScriptedAgent({"x": "ok"}), [c]).cases[0].runs[0]
    assert run.error is not None and run.error.type == "RuntimeError"
    assert "judge reply unreadable" in run.error.message and "t.evl:7" in run.error.message
    assert [e.passed for e in run.expectations] == [True, False]
    assert "could not be evaluated" in (run.expectations[1].detail or "")
    assert run.score == 0 and not run.passed


# ---- timeouts ---------------------------------------------------------------------


def test_a_hung_sync_agent_is_abandoned_and_the_run_moves_on() -> None:
    release = threading.Event()

    def hang(prompt: str) -> RunArtifacts:
        release.wait(10)
        return RunArtifacts(final_text="ok")

    try:
        report = run_suite(ScriptedAgent({"hang": hang, "next": "ok"}),
                           [case("hang", timeout_s=0.05), case("next")])
    finally:
        release.set()
    hung = report.cases[0]
    assert hung.status == "error"
    assert hung.runs[0].error.type == "TimeoutError"  # type: ignore[union-attr]
    assert "0.05s" in hung.runs[0].error.message and "abandoned" in hung.runs[0].error.message  # type: ignore[union-attr]
    assert report.cases[1].status == "passed"


def test_a_hung_async_agent_is_cancelled() -> None:
    cancelled = []

    class Slow:
        async def run(self, instruction: str) -> RunArtifacts:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                cancelled.append(instruction)
                raise
            return RunArtifacts(final_text="ok")

    result = run_suite(Slow(), [case("x", timeout_s=0.05)]).cases[0]
    assert result.status == "error" and "cancelled" in result.runs[0].error.message  # type: ignore[union-attr]
    assert cancelled == ["x"]


def test_an_agent_that_ignores_cancellation_is_still_reported_as_timed_out() -> None:
    class Stubborn:
        async def run(self, instruction: str) -> RunArtifacts:
            for _ in range(3):
                try:
                    await asyncio.sleep(0.03)
                except asyncio.CancelledError:
                    pass
            return RunArtifacts(final_text="ok")

    result = run_suite(Stubborn(), [case("x", timeout_s=0.02)]).cases[0]
    assert result.runs[0].error.type == "TimeoutError"  # type: ignore[union-attr]


# ---- repeats and statistics --------------------------------------------------------


def alternating(pattern: str) -> Any:
    """A script reply that answers 'ok' or 'no' following pattern ('1' = ok), thread-safe."""
    lock, state = threading.Lock(), {"i": 0}

    def reply(prompt: str) -> str:
        with lock:
            i = state["i"]
            state["i"] += 1
        return "ok" if pattern[i % len(pattern)] == "1" else "no"

    return reply


def test_repeat_pass_rate_gate_and_wilson_interval() -> None:
    agent = ScriptedAgent({"x": alternating("1101"), "y": alternating("1000")})
    cases = [case("x", repeat=4, pass_rate=0.75), case("y", repeat=4, pass_rate=0.5)]
    x, y = run_suite(agent, cases, concurrency=1).cases
    assert (x.status, x.pass_rate, x.score, len(x.runs)) == ("passed", 0.75, 0.75, 4)
    assert [r.index for r in x.runs] == [0, 1, 2, 3]
    assert x.wilson_95 is not None and x.wilson_95.low == pytest.approx(0.3006, abs=1e-3)
    assert x.wilson_95.high == pytest.approx(0.9544, abs=1e-3)
    assert (y.status, y.pass_rate) == ("failed", 0.25)


def test_error_only_when_every_run_errored() -> None:
    counter = {"n": 0}

    def sometimes(prompt: str) -> str:
        counter["n"] += 1
        if counter["n"] % 2:
            raise OSError("flaky network")
        return "ok"

    def always(prompt: str) -> str:
        raise OSError("down")

    agent = ScriptedAgent({"some": sometimes, "all": always})
    some, every = run_suite(agent, [case("some", repeat=2), case("all", repeat=3)], concurrency=1).cases
    assert some.status == "failed" and some.pass_rate == 0.5
    assert every.status == "error" and every.score == 0


def test_score_is_the_product_of_credits_and_partial_credit_passes() -> None:
    report = run_suite(ScriptedAgent({"x": "ok", "y": "ok"}),
                       [case("x", None, credit(0.5), credit(0.5)), case("y", None, credit(1.0), credit(0.0))])
    x, y = report.cases
    assert (x.status, x.score) == ("passed", 0.25)
    assert (y.status, y.score) == ("failed", 0.0)
    assert report.summary.average_score == pytest.approx(0.125)


def test_latency_and_tokens_are_summarised() -> None:
    agent = ScriptedAgent({"a": RunArtifacts(final_text="ok", tokens=10), "b": RunArtifacts(final_text="ok", tokens=30),
                           "c": "ok"})
    report = run_suite(agent, [case("a"), case("b"), case("c")])
    s = report.summary
    assert (s.tokens_total, s.tokens_mean) == (40, 20.0)
    assert s.latency_p50_s is not None and s.latency_p95_s is not None and s.latency_mean_s is not None
    assert all(r.artifacts.duration_s == r.latency_s for c in report.cases for r in c.runs)  # type: ignore[union-attr]
    none = run_suite(ScriptedAgent({"c": "ok"}), [case("c")]).summary
    assert none.tokens_total is None and none.tokens_mean is None


# ---- concurrency and order -----------------------------------------------------------


def test_concurrency_is_bounded_and_results_come_in_case_order() -> None:
    state = {"now": 0, "max": 0}
    finished: list[str] = []

    class Agent:
        async def run(self, instruction: str) -> RunArtifacts:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
            await asyncio.sleep(0.002 * (10 - int(instruction)))  # later cases finish first
            state["now"] -= 1
            return RunArtifacts(final_text="ok")

    cases = [case(str(i)) for i in range(10)]
    report = run_suite(Agent(), cases, concurrency=3, on_result=lambda r: finished.append(r.name))
    assert state["max"] == 3
    assert [c.name for c in report.cases] == [str(i) for i in range(10)]
    assert sorted(finished) == sorted(str(i) for i in range(10)) and finished != sorted(finished)


def test_sync_agents_run_on_worker_threads_in_parallel() -> None:
    barrier = threading.Barrier(3, timeout=5)

    def meet(prompt: str) -> str:
        barrier.wait()  # only passes if three runs are in flight at once
        return "ok"

    report = run_suite(ScriptedAgent(default=meet), [case(str(i)) for i in range(3)], concurrency=3)
    assert [c.status for c in report.cases] == ["passed"] * 3


def test_exitfirst_stops_after_the_first_failure() -> None:
    agent = ScriptedAgent({"a": "ok", "b": "no", "c": "ok", "d": "ok"})
    report = run_suite(agent, [case("a"), case("b"), case("c"), case("d")], concurrency=1, exitfirst=True)
    assert statuses(report) == {"a": "passed", "b": "failed"}
    assert agent.prompts == ["a", "b"]
    assert report.meta.complete is False
    full = run_suite(agent, [case("a")], exitfirst=True)
    assert full.meta.complete is True


def test_exitfirst_keeps_the_run_whole_when_every_case_had_finished() -> None:
    """With more workers than cases and an agent that answers at once, every case is done before the
    stop: the record has them all, so it is complete (nothing is left for --resume)."""

    class Instant:
        name = "instant"

        async def run(self, prompt: str) -> RunArtifacts:
            return RunArtifacts(final_text="no" if prompt == "b" else "ok")

    report = run_suite(Instant(), [case("a"), case("b"), case("c")], concurrency=8, exitfirst=True)
    assert statuses(report) == {"a": "passed", "b": "failed", "c": "passed"}
    assert report.meta.complete is True
    stopped = run_suite(Instant(), [case("a"), case("b"), case("c")], concurrency=1, exitfirst=True)
    assert statuses(stopped) == {"a": "passed", "b": "failed"} and stopped.meta.complete is False
    last = run_suite(Instant(), [case("a"), case("b")], concurrency=1, exitfirst=True)  # the last case fails
    assert statuses(last) == {"a": "passed", "b": "failed"} and last.meta.complete is True


def test_exitfirst_reports_the_cases_it_caught_in_flight_as_cancelled() -> None:
    class Slow:
        name = "slow"

        async def run(self, prompt: str) -> RunArtifacts:
            if prompt != "a":
                await asyncio.sleep(30)
            return RunArtifacts(final_text="no")

    cases = [case("a"), case("b"), case("c", repeat=2), case("d"), case("e")]
    report = run_suite(Slow(), cases, concurrency=4, exitfirst=True)
    assert statuses(report) == {"a": "failed", "b": "error", "c": "error"}  # d, e: never started
    for name in ("b", "c"):
        runs = next(c for c in report.cases if c.name == name).runs
        assert runs and all(r.error is not None and r.error.kind == "cancelled" for r in runs)
        assert "-x stopped the run before this run finished" in runs[0].error.message
    assert report.meta.complete is False


def test_exitfirst_ignores_xfail() -> None:
    agent = ScriptedAgent({"a": "no", "b": "ok"})
    report = run_suite(agent, [case("a", xfail=""), case("b")], concurrency=1, exitfirst=True)
    assert statuses(report) == {"a": "xfailed", "b": "passed"}


# ---- judge, harness, predicates ---------------------------------------------------------


def test_judge_expectations_run_off_the_event_loop() -> None:
    loop_thread = threading.get_ident()
    seen: list[int] = []

    def judge(*, rubric: str, prompt: str, artifacts: RunArtifacts) -> float:
        seen.append(threading.get_ident())
        return 0.9

    def judged(ctx: Any) -> Outcome:
        return Outcome(1.0 if ctx.judge(rubric="r", prompt=ctx.prompt, artifacts=ctx.artifacts) >= 0.5 else 0.0)

    c = case("x", None, expect('judge "r"', judged, judge=True))
    assert run_suite(ScriptedAgent({"x": "ok"}), [c], judge=judge).cases[0].status == "passed"
    assert seen and seen[0] != loop_thread
    missing = run_suite(ScriptedAgent({"x": "ok"}), [c]).cases[0]
    assert missing.status == "error" and "needs a judge" in missing.runs[0].error.message  # type: ignore[union-attr]


class Shop:
    """A harness whose world is a stock dict; a custom predicate reads it."""

    predicates = Predicates()

    def __init__(self) -> None:
        self.setups: list[Any] = []

    def setup(self, value: Any) -> dict[str, int]:
        self.setups.append(value)
        return dict(value or {})

    def run(self, instruction: str, world: dict[str, int]) -> RunArtifacts:
        world["apples"] = world.get("apples", 0) - 1
        return RunArtifacts(final_text="sold one")

    @predicates.register("stock_is")
    def _stock(artifacts: RunArtifacts, world: dict[str, int], *, item: str, count: int) -> bool:  # type: ignore[misc]
        return world[item] == count


def stock_is(count: int) -> CompiledExpectation:
    def check(ctx: Any) -> Outcome:
        ok = ctx.predicates["stock_is"](ctx.artifacts, ctx.world, item="apples", count=count)
        return Outcome(1.0 if ok else 0.0, f"stock is {ctx.world['apples']}")

    return expect(f"stock_is(item: apples, count: {count})", check)


def test_harness_gets_a_fresh_world_per_run_and_its_predicates() -> None:
    shop = Shop()
    c = CompiledCase(suite="t", name="sell", file="t.evl", line=1, prompt="sell", setup={"apples": 3},
                     settings=CaseSettings(repeat=2), expectations=(stock_is(2),))
    report = run_eval(shop, [c])
    assert report.cases[0].status == "passed"  # each run sees 3 - 1, not 3 - 2
    assert shop.setups == [{"apples": 3}, {"apples": 3}]
    assert report.meta.backend == "harness"


def test_async_harness_and_extra_predicates() -> None:
    class AsyncShop(Shop):
        async def setup(self, value: Any) -> dict[str, int]:  # type: ignore[override]
            return {"apples": 5}

        async def run(self, instruction: str, world: dict[str, int]) -> RunArtifacts:  # type: ignore[override]
            world["apples"] -= 2
            return RunArtifacts(final_text="sold two")

    calls: list[str] = []

    def spy(artifacts: RunArtifacts, world: Any, **kw: Any) -> bool:
        calls.append("spy")
        return world["apples"] == kw["count"]

    c = case("sell", None, stock_is(3))
    report = run_eval(AsyncShop, [c], predicates={"stock_is": spy})
    assert report.cases[0].status == "passed" and calls == ["spy"]


def test_run_case_returns_one_case_result_and_detects_a_harness() -> None:
    assert run_case(ScriptedAgent({"x": "ok"}), case("x")).status == "passed"
    c = CompiledCase(suite="t", name="sell", file="t.evl", line=1, prompt="sell", setup={"apples": 1},
                     settings=CaseSettings(), expectations=(stock_is(0),))
    assert run_case(Shop(), c).status == "passed"


def test_sync_functions_work_inside_a_running_loop() -> None:
    async def main() -> str:
        return run_suite(ScriptedAgent({"x": "ok"}), [case("x")]).cases[0].status

    assert asyncio.run(main()) == "passed"


def test_async_function_agent_and_async_api() -> None:
    async def agent(prompt: str) -> RunArtifacts:
        await asyncio.sleep(0)
        return RunArtifacts(final_text="ok")

    report = asyncio.run(arun_suite(agent, CompiledSuite(name="t", file="t.evl", cases=(case("x"),))))
    assert report.cases[0].status == "passed" and report.meta.agent == "agent"


# ---- inputs, selection and resume through the API -----------------------------------------


def test_flatten_accepts_suites_cases_and_mixtures() -> None:
    a, b, c = case("a"), case("b"), case("c")
    suite = CompiledSuite(name="t", file="t.evl", cases=(a, b))
    assert flatten_cases(suite) == [a, b]
    assert flatten_cases([suite, c]) == [a, b, c]
    assert flatten_cases(c) == [c]
    with pytest.raises(TypeError, match="expected CompiledSuite or CompiledCase"):
        flatten_cases(["nope"])  # type: ignore[list-item]


def test_selection_options_and_meta() -> None:
    agent = ScriptedAgent(default="ok")
    cases = [case("adds numbers", tags=("math",)), case("says hello", tags=("chat",))]
    report = run_suite(agent, cases, keyword="ADDS")
    assert [c.name for c in report.cases] == ["adds numbers"]
    assert report.meta.selection == {"keyword": "ADDS"}
    assert [c.name for c in run_suite(agent, cases, tags=["chat"]).cases] == ["says hello"]
    assert report.meta.evaldsl_version and report.meta.agent == "scripted" and report.meta.concurrency == 8
    assert report.meta.started_at is not None and report.meta.finished_at >= report.meta.started_at  # type: ignore[operator]


def test_previous_record_is_resumed_running_only_missing_cases() -> None:
    first = ScriptedAgent({"a": "ok", "b": "no"})
    cases = [case("a"), case("b"), case("c")]
    partial = run_suite(first, cases[:2])
    second = ScriptedAgent({"c": "ok"})
    report = run_suite(second, cases, previous=partial)
    assert second.prompts == ["c"]
    assert statuses(report) == {"a": "passed", "b": "failed", "c": "passed"}
    assert report.meta.started_at == partial.meta.started_at


def test_sync_timeout_does_not_hold_up_later_runs() -> None:
    # A hung run occupies a worker thread; the pool makes another so the rest still run.
    release, blocked = threading.Event(), threading.Event()

    def hang(prompt: str) -> str:
        blocked.set()
        release.wait(10)
        blocked.clear()
        return "ok"

    try:
        agent = ScriptedAgent({"hang": hang}, default="ok")
        report = run_suite(agent, [case("hang", timeout_s=0.05), *[case(str(i)) for i in range(5)]], concurrency=2)
        assert [c.status for c in report.cases] == ["error"] + ["passed"] * 5
        assert blocked.is_set()  # the run finished while the hung agent was still blocked
    finally:
        release.set()


def test_a_sync_agent_whose_returned_coroutine_hangs_still_times_out() -> None:
    """A sync run's job is timed by the pool: a run whose job came back at once and then waits on the
    loop (a sync function returning a coroutine) must still be timed out, for the time it has left."""

    class Later:
        name = "later"

        def run(self, prompt: str) -> Any:
            async def forever() -> RunArtifacts:
                await asyncio.sleep(30)
                return RunArtifacts(final_text="ok")

            return forever()

    report = run_suite(Later(), [case("waits", timeout_s=0.2)])
    run = report.cases[0].runs[0]
    assert report.cases[0].status == "error"
    assert run.error is not None and run.error.type == "TimeoutError" and "0.2s" in run.error.message
    assert run.error.message.endswith("the run was cancelled")  # its coroutine ran on the loop, and was stopped


def _timers_armed(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The deadlines of the run timers (`bounded`'s ``expire``) armed from now on, as they are armed."""
    armed: list[float] = []
    real_call_at = asyncio.BaseEventLoop.call_at

    def call_at(self: Any, when: float, callback: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(callback, "__name__", "") == "expire":
            armed.append(when)
        return real_call_at(self, when, callback, *args, **kwargs)

    monkeypatch.setattr(asyncio.BaseEventLoop, "call_at", call_at)
    return armed


def test_instant_sync_runs_arm_no_timers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain sync agent's run sets no timer of its own (what one costs is a tenth of such a run): its
    job's deadline is kept by the pool; the results are the same."""
    armed = _timers_armed(monkeypatch)
    agent = ScriptedAgent({}, default="ok")
    report = run_suite(agent, [case(str(i)) for i in range(200)])
    assert [c.status for c in report.cases] == ["passed"] * 200
    assert armed == []  # a plain sync agent's job is timed by the pool's looks: no timer of its own


def test_sync_harnesses_and_context_agents_arm_no_timers_and_still_time_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sync harness's setup and run, and a sync agent that takes the case context, are one job each,
    timed by the pool as a plain sync agent's is: no timer of their own, and a hung one still times out
    (abandoned), while the rest of the run goes on."""
    from evaldsl import CaseContext

    armed = _timers_armed(monkeypatch)
    release = threading.Event()

    class Hanging(Shop):
        def run(self, instruction: str, world: dict[str, int]) -> RunArtifacts:
            if instruction == "hang":
                release.wait(10)
            return super().run(instruction, world)

    def with_context(prompt: str, ctx: CaseContext) -> RunArtifacts:
        if prompt == "hang":
            release.wait(10)
        return RunArtifacts(final_text="ok")

    try:
        sells = [CompiledCase(suite="t", name=f"sell {i}", file="t.evl", line=1, prompt=f"sell {i}",
                              setup={"apples": 3}, settings=CaseSettings(), expectations=(stock_is(2),))
                 for i in range(50)]
        report = run_eval(Hanging(), sells)
        assert report.ok and armed == []
        hung = CompiledCase(suite="t", name="hang", file="t.evl", line=1, prompt="hang", setup={"apples": 3},
                            settings=CaseSettings(timeout_s=0.05), expectations=(stock_is(2),))
        report = run_eval(Hanging(), [hung, *sells[:3]])
        assert [c.status for c in report.cases] == ["error", "passed", "passed", "passed"]
        assert "abandoned" in report.cases[0].runs[0].error.message  # type: ignore[union-attr]
        report = run_suite(with_context, [case(str(i)) for i in range(50)])
        assert report.ok and armed == []
        report = run_suite(with_context, [case("hang", timeout_s=0.05), case("after")])
        assert [c.status for c in report.cases] == ["error", "passed"]
        assert report.cases[0].runs[0].error.type == "TimeoutError"  # type: ignore[union-attr]
    finally:
        release.set()


def test_a_sync_run_leaves_no_cycles_for_the_collector() -> None:
    """Each run's timer closures are let go of when it ends: 400 runs leave the collector no garbage
    a run (it was 14 objects a run, and the collections they caused cost a few us a case)."""
    import gc

    agent = ScriptedAgent({}, default="ok")
    cases = [case(str(i)) for i in range(400)]
    run_suite(agent, cases[:10])  # imports and first-time set-up out of the way
    gc.collect()
    gc.disable()
    try:
        report = run_suite(agent, cases)
        garbage = gc.collect()
    finally:
        gc.enable()
    assert report.ok
    assert garbage < 400, garbage  # 5,600 with a cycle a run


def test_a_traceback_from_the_sync_api_holds_only_the_agents_error() -> None:
    async def crash(prompt: str) -> RunArtifacts:
        raise RuntimeError("the model is down")

    err = run_suite(crash, [case("x")]).cases[0].runs[0].error
    assert err is not None and err.traceback is not None
    assert err.traceback.startswith("Traceback (most recent call last):")
    assert "During handling" not in err.traceback and "no running event loop" not in err.traceback
    assert err.traceback.rstrip().endswith("RuntimeError: the model is down")


def test_a_case_reached_twice_runs_once() -> None:
    suite = CompiledSuite(name="t", file="t.evl", cases=(case("a"), case("b")))
    agent = ScriptedAgent(default="ok")
    report = run_suite(agent, [suite, suite, case("a")])
    assert sorted(agent.prompts) == ["a", "b"]
    assert [c.name for c in report.cases] == ["a", "b"] and report.summary.runs == 2


def test_the_same_file_by_two_paths_is_one_file(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    first = CompiledCase(suite="t", name="a", file="d/x.evl", line=1, prompt="first",
                         settings=CaseSettings(), expectations=(final_is("ok"),))
    again = CompiledCase(suite="t", name="a", file="./d/../d/x.evl", line=1, prompt="again",
                         settings=CaseSettings(), expectations=(final_is("ok"),))
    other = CompiledCase(suite="t", name="a", file="e/x.evl", line=1, prompt="other",
                         settings=CaseSettings(), expectations=(final_is("ok"),))
    assert flatten_cases([first, again, other]) == [first, other]


def judged_at(threshold: float) -> CompiledExpectation:
    def check(ctx: Any) -> Outcome:
        score = ctx.judge(rubric="r", prompt=ctx.prompt, artifacts=ctx.artifacts)
        if not isinstance(score, (int, float)):
            raise TypeError(f"the judge returned {score!r}, not a score from 0 to 1")
        return Outcome(1.0 if score >= threshold else 0.0)

    return expect('judge "r"', check, judge=True)


def test_an_async_judge_is_awaited_on_the_runs_event_loop() -> None:
    loops: list[Any] = []

    async def judge(*, rubric: str, prompt: str, artifacts: RunArtifacts) -> float:
        loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        return 0.9 if artifacts.final_text == "ok" else 0.1

    class Agent:
        async def run(self, instruction: str) -> RunArtifacts:
            loops.append(asyncio.get_running_loop())
            return RunArtifacts(final_text=instruction)

    cases = [case("ok", None, judged_at(0.5)), case("no", None, judged_at(0.5))]
    report = run_suite(Agent(), cases, judge=judge)
    assert statuses(report) == {"ok": "passed", "no": "failed"}
    assert len(loops) == 4 and len(set(map(id, loops))) == 1  # the agents' loop, not a new one
    partial = run_suite(Agent(), [case("ok", None, judged_at(0.5))], judge=lambda **kw: judge(**kw))
    assert partial.cases[0].status == "passed"  # a sync function that returns a coroutine


def test_an_async_judge_that_times_out_is_cancelled() -> None:
    cancelled = threading.Event()

    async def judge(*, rubric: str, prompt: str, artifacts: RunArtifacts) -> float:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 1.0

    class Agent:
        async def run(self, instruction: str) -> RunArtifacts:
            for _ in range(100):  # the next run: give the loop turns to deliver the cancellation
                if cancelled.is_set() or instruction == "x":
                    break
                await asyncio.sleep(0)
            return RunArtifacts(final_text="ok" if instruction == "x" or cancelled.is_set() else "no")

    cases = [case("x", None, judged_at(0.5), timeout_s=0.05), case("after")]
    report = run_suite(Agent(), cases, judge=judge, concurrency=1)
    error = report.cases[0].runs[0].error
    assert error is not None and error.type == "RunTimeout" and "judge did not finish" in error.message
    assert report.cases[1].status == "passed"  # cancelled while the run went on, not at shutdown


def test_an_async_agent_that_blocks_the_loop_past_its_timeout_is_a_timeout() -> None:
    import time

    class Blocking:
        async def run(self, instruction: str) -> RunArtifacts:
            if instruction == "block":
                time.sleep(0.15)  # noqa: ASYNC251 - blocks the event loop: the timer cannot fire
            return RunArtifacts(final_text="ok")

    report = run_suite(Blocking(), [case("block", timeout_s=0.05), case("quick")])
    run = report.cases[0].runs[0]
    assert report.cases[0].status == "error" and run.error is not None and run.error.type == "TimeoutError"
    assert run.error.message.startswith("the agent did not finish within 0.05s (the case's timeout)")
    assert "blocked the event loop past the timeout" in run.error.message
    assert run.artifacts is None
    assert report.cases[1].status == "passed"


def test_no_case_starts_once_halted_says_so() -> None:
    from evaldsl.run._protocols import agent_subject
    from evaldsl.run._scheduler import schedule

    asked: list[str] = []

    class Async:
        name = "async"

        async def run(self, prompt: str) -> RunArtifacts:
            asked.append(prompt)
            return RunArtifacts(final_text="ok")

    seen: list[str] = []

    def on_result(result: Any) -> None:
        seen.append(result.name)

    cases = [case("a"), case("b"), case("c"), case("d")]
    asyncio.run(schedule(agent_subject(Async()), cases, concurrency=1, on_result=on_result, keep=False,
                         halted=lambda: len(seen) >= 2))
    assert seen == ["a", "b"] and asked == ["a", "b"]
