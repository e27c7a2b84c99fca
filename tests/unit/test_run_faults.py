"""Hostile answers, foreign cancellations, slow scoring and huge messages: a run loses no case.

Each test here failed before the runner made artifacts safe at the door,
took exception text defensively, recorded a `CancelledError` it did not ask
for, bounded regex matching, and gave other cases' scoring time back to
each timeout (issues 10 and 11).
"""

from __future__ import annotations

import asyncio
import datetime
import json
import math
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from evaldsl.artifacts import RunArtifacts, ToolCall
from evaldsl.compile._compiler import compile_suite
from evaldsl.compile._model import CaseSettings, CompiledCase, CompiledExpectation, Outcome
from evaldsl.report._json import read_record, write_atomic
from evaldsl.report._terminal import SHOWN_MESSAGE, format_report
from evaldsl.run._api import run_case, run_suite
from evaldsl.run._safe import MAX_MESSAGE, make_safe


class Opaque:
    def __repr__(self) -> str:
        return "<Opaque thing>"


class BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message for you")


class BadBoth(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")

    def __repr__(self) -> str:
        raise RuntimeError("no")


def _circular() -> RunArtifacts:
    loop: list[Any] = [{"role": "user", "content": "hi"}]
    loop.append(loop)
    return RunArtifacts(final_text="ok", transcript=loop)


HOSTILE: dict[str, Any] = {
    "circular": _circular,
    "datetime": lambda: RunArtifacts(
        final_text="ok", tool_calls=[ToolCall(name="t", args={"when": datetime.datetime(2026, 1, 2)})]
    ),
    "set": lambda: RunArtifacts(final_text="ok", tool_calls=[ToolCall(name="t", args={"ids": {1, 2}})]),
    "object": lambda: RunArtifacts(final_text="ok", tool_calls=[ToolCall(name="t", args=Opaque())]),
    "surrogate": lambda: RunArtifacts(final_text="ok \ud800"),
    "nan": lambda: RunArtifacts(final_text="ok", tool_calls=[ToolCall(name="t", args={"x": math.nan, "y": -math.inf})]),
    "str raises": lambda: (_ for _ in ()).throw(BadStr()),
    "str and repr raise": lambda: (_ for _ in ()).throw(BadBoth()),
    "surrogate message": lambda: (_ for _ in ()).throw(ValueError("bad \udc80 text")),
    "backtracking": lambda: RunArtifacts(final_text="a" * 40 + "!"),
    "cancelled": lambda: (_ for _ in ()).throw(asyncio.CancelledError()),
    "negative tokens": lambda: RunArtifacts.model_construct(final_text="ok", tokens=-5),
    "negative tokens dict": lambda: {"final_text": "ok", "tokens": -5},
}

SUITE = "\n".join(
    [f'case "ok {i}"\n  prompt "ok {i}"\n  expect final text contains "ok"\n' for i in range(3)]
    + [f'case "{name}"\n  prompt "{name}"\n  timeout 1s\n  expect final text contains "ok"\n'
       for name in HOSTILE if name != "backtracking"]
    + ['case "backtracking"\n  prompt "backtracking"\n  timeout 1s\n  expect final text matches /^(a+)+$/\n']
    + [f'case "ok after {i}"\n  prompt "ok after {i}"\n  expect final text contains "ok"\n' for i in range(3)]
)


def hostile_agent(prompt: str) -> Any:
    if prompt in HOSTILE:
        return HOSTILE[prompt]()
    return RunArtifacts(final_text=prompt)


def test_hostile_answers_between_ordinary_cases_lose_nothing(tmp_path: Path) -> None:
    suite = compile_suite(SUITE, "hostile.evl")
    report = run_suite(hostile_agent, suite, concurrency=1)  # one worker: nothing after a bad case may time out
    path = tmp_path / "record.json"
    write_atomic(path, report.model_dump_json(indent=2))
    back = read_record(path)
    names = [c.name for c in back.cases]
    assert names == [c.name for c in suite.cases]
    assert back.meta.complete is True
    status = {c.name: c.status for c in back.cases}
    assert all(status[n] == "passed" for n in names if n.startswith("ok"))
    for name in ("circular", "datetime", "set", "object", "surrogate", "nan"):
        assert status[name] == "passed", name  # recorded, with warnings, and scored on what was recorded
        assert back.cases[names.index(name)].runs[0].warnings, name
    errors = {c.name: c.runs[0].error for c in back.cases if c.status == "error"}
    assert set(errors) == {"str raises", "str and repr raise", "surrogate message", "backtracking", "cancelled",
                           "negative tokens", "negative tokens dict"}
    assert all(e is not None and e.type != "TimeoutError" for e in errors.values())
    assert "RegexTimeout" in errors["backtracking"].type  # type: ignore[union-attr]
    assert errors["cancelled"].type == "CancelledError"  # type: ignore[union-attr]
    assert "tokens" in errors["negative tokens"].message and "tokens" in errors["negative tokens dict"].message  # type: ignore[union-attr]
    assert back.summary.errors == 7 and back.summary.total == len(names)
    format_report(back)  # the terminal summary renders every one of them


def _safe(art: RunArtifacts) -> tuple[dict[str, Any], list[str]]:
    safe, warnings = make_safe(art)
    return json.loads(safe.model_dump_json()), warnings


def test_values_json_cannot_hold_are_recorded_as_their_repr_and_named() -> None:
    when = datetime.datetime(2026, 1, 2)
    data, warnings = _safe(RunArtifacts(tool_calls=[ToolCall(name="t", args={"when": when, "o": Opaque()})]))
    assert data["tool_calls"][0]["args"] == {"when": repr(when), "o": "<Opaque thing>"}
    assert warnings == ["tool_calls[0].args.when: datetime recorded as its repr (JSON has no form for it)",
                        "tool_calls[0].args.o: Opaque recorded as its repr (JSON has no form for it)"]


def test_nan_and_infinity_stay_visible_as_strings() -> None:
    data, warnings = _safe(RunArtifacts(tool_calls=[ToolCall(name="t", args=[math.nan, math.inf, -math.inf, 1.5])]))
    assert data["tool_calls"][0]["args"] == ["NaN", "Infinity", "-Infinity", 1.5]
    assert len(warnings) == 3 and "NaN" in warnings[0]


def test_lone_surrogates_are_escaped_visibly() -> None:
    data, warnings = _safe(RunArtifacts(final_text="a\ud800b", transcript=[{"k\udc00": "v"}]))
    assert data["final_text"] == "a\\ud800b"
    assert data["transcript"] == [{"k\\udc00": "v"}]
    assert warnings[0] == "final_text: lone surrogates recorded as backslash escapes"


def test_a_circular_transcript_is_cut_where_it_loops() -> None:
    art = _circular()
    data, warnings = _safe(art)
    assert data["transcript"][0] == {"role": "user", "content": "hi"}
    assert "<circular reference>" in json.dumps(data)
    assert len(warnings) == 1 and "circular reference recorded as '<circular reference>'" in warnings[0]


def test_plain_artifacts_are_kept_as_they_are_in_containers_of_their_own() -> None:
    art = RunArtifacts(final_text="é ok", tool_calls=[ToolCall(name="t", args={"a": [1, 2.5, None, True]})],
                       transcript=[{"role": "user", "content": "x"}], tokens=3)
    safe, warnings = make_safe(art)
    assert safe == art and not warnings
    assert safe.tool_calls is not art.tool_calls and safe.tool_calls[0].args["a"] is not art.tool_calls[0].args["a"]
    assert safe.transcript[0] is not art.transcript[0]
    empty = RunArtifacts(final_text="ok")
    assert make_safe(empty)[0] is empty  # nothing to copy


def test_too_deep_nesting_is_recorded_as_a_repr() -> None:
    deep: Any = 1
    for _ in range(300):
        deep = [deep]
    data, warnings = _safe(RunArtifacts(transcript=[deep]))
    assert "nested deeper than" in warnings[0]
    assert json.dumps(data)


def test_negative_tokens_are_refused_in_every_form() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="tokens"):
        RunArtifacts(tokens=-5)
    with pytest.raises(ValidationError, match="duration_s"):
        RunArtifacts(duration_s=math.nan)


# ---- exception text ---------------------------------------------------------------


def test_a_huge_exception_message_is_bounded_in_the_record_and_cut_on_the_terminal() -> None:
    def agent(prompt: str) -> Any:
        raise ValueError("x" * 3_000_000)

    report = run_suite(agent, compile_suite('case "a"\n  prompt "p"\n  expect final text is "x"\n', "h.evl"))
    message = report.cases[0].runs[0].error.message  # type: ignore[union-attr]
    assert len(message) < MAX_MESSAGE + 100 and message.endswith("more characters not kept)")
    assert len(report.cases[0].runs[0].error.traceback or "") < MAX_MESSAGE + 100  # type: ignore[union-attr]
    text = format_report(report)
    assert len(text) < SHOWN_MESSAGE + 2_000
    assert "more characters, in the record)" in text


# ---- cancellations nobody asked for -------------------------------------------------------


def _case(name: str, *exps: CompiledExpectation, **settings: Any) -> CompiledCase:
    return CompiledCase(suite="t", name=name, file="t.evl", line=1, prompt=name,
                        settings=CaseSettings(**settings),
                        expectations=exps or (CompiledExpectation("ok", "t.evl", 2, lambda ctx: Outcome(1.0)),))


def _raise_cancelled(*args: Any, **kwargs: Any) -> Any:
    raise asyncio.CancelledError


def test_a_cancelled_error_from_an_async_or_sync_agent_is_that_cases_error() -> None:
    async def async_agent(prompt: str) -> RunArtifacts:
        if prompt == "boom":
            raise asyncio.CancelledError
        return RunArtifacts(final_text="ok")

    def sync_agent(prompt: str) -> RunArtifacts:
        if prompt == "boom":
            raise asyncio.CancelledError
        return RunArtifacts(final_text="ok")

    for agent in (async_agent, sync_agent):
        report = run_suite(agent, [_case("fine"), _case("boom"), _case("also fine")])
        assert [c.status for c in report.cases] == ["passed", "error", "passed"]
        error = report.cases[1].runs[0].error
        assert error is not None and error.type == "CancelledError"
        assert "the agent raised CancelledError" in error.message
        assert report.summary.errors == 1 and report.meta.complete


def test_a_cancelled_error_from_a_predicate_a_judge_or_one_repeat_is_recorded() -> None:
    raising = CompiledExpectation("raises", "t.evl", 2, _raise_cancelled)
    judged = CompiledExpectation("judge", "t.evl", 3, lambda ctx: ctx.judge(), needs_judge=True)
    calls = {"n": 0}

    async def agent(prompt: str) -> RunArtifacts:
        if prompt == "repeat":
            calls["n"] += 1
            if calls["n"] == 2:
                raise asyncio.CancelledError
        return RunArtifacts(final_text="ok")

    cases = [_case("predicate", raising), _case("judge", judged), _case("repeat", repeat=3)]
    report = run_suite(agent, cases, judge=_raise_cancelled, concurrency=1)
    by_name = {c.name: c for c in report.cases}
    assert set(by_name) == {"predicate", "judge", "repeat"}
    assert by_name["predicate"].status == by_name["judge"].status == "error"
    assert by_name["predicate"].runs[0].error.type == "CancelledError"  # type: ignore[union-attr]
    assert by_name["judge"].runs[0].error.type == "CancelledError"  # type: ignore[union-attr]
    repeat = by_name["repeat"]
    assert len(repeat.runs) == 3 and [r.error is not None for r in repeat.runs] == [False, True, False]
    assert repeat.status == "failed"


def test_run_case_reports_a_cancelled_agent_as_an_error() -> None:
    async def agent(prompt: str) -> RunArtifacts:
        raise asyncio.CancelledError

    result = run_case(agent, _case("c"))
    assert result.status == "error" and result.runs[0].error.type == "CancelledError"  # type: ignore[union-attr]


class OwnBase(BaseException):
    """An agent's own BaseException subclass: not Exception, not the runner's business."""


def _raiser(exc: BaseException) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise exc
    return fn


def test_any_base_exception_but_keyboard_interrupt_is_that_runs_error() -> None:
    thrown = {"own": OwnBase("mine"), "genexit": GeneratorExit(), "exit": SystemExit(3)}

    def sync_agent(prompt: str) -> RunArtifacts:
        if prompt in thrown:
            raise thrown[prompt]
        return RunArtifacts(final_text="ok")

    async def async_agent(prompt: str) -> RunArtifacts:
        return sync_agent(prompt)

    predicate = CompiledExpectation("own", "t.evl", 2, _raiser(OwnBase("from a predicate")))
    for agent in (sync_agent, async_agent):
        cases = [_case("fine"), *(_case(n) for n in thrown), _case("predicate", predicate), _case("also fine")]
        report = run_suite(agent, cases, concurrency=1)
        status = {c.name: (c.status, c.runs[0].error and c.runs[0].error.type) for c in report.cases}
        assert status == {"fine": ("passed", None), "own": ("error", "OwnBase"), "genexit": ("error", "GeneratorExit"),
                          "exit": ("error", "SystemExit"), "predicate": ("error", "OwnBase"),
                          "also fine": ("passed", None)}
        assert report.meta.complete


def test_an_agent_that_cancels_its_own_task_loses_no_case() -> None:
    """`asyncio.current_task().cancel()` counts as a request on 3.11+, yet the runner did not make it."""
    async def raises_it(prompt: str) -> RunArtifacts:
        if prompt == "self":
            asyncio.current_task().cancel()  # type: ignore[union-attr]
            await asyncio.sleep(0)
        return RunArtifacts(final_text="ok")

    async def returns_after_it(prompt: str) -> RunArtifacts:
        if prompt == "self":
            asyncio.current_task().cancel()  # type: ignore[union-attr]  # never delivered in this run
            return RunArtifacts(final_text="ok")
        await asyncio.sleep(0.01)  # where an undelivered cancel would land: the next case
        return RunArtifacts(final_text="ok")

    for agent, self_status in ((raises_it, "error"), (returns_after_it, "passed")):
        for concurrency in (1, 4):
            cases = [_case("fine"), _case("self", repeat=3), _case("also fine", repeat=2), _case("last")]
            report = run_suite(agent, cases, concurrency=concurrency)
            assert [c.name for c in report.cases] == ["fine", "self", "also fine", "last"]
            assert [c.status for c in report.cases] == ["passed", self_status, "passed", "passed"], agent
            assert [len(c.runs) for c in report.cases] == [1, 3, 2, 1] and report.meta.complete
            if self_status == "error":
                assert {r.error.type for r in report.cases[1].runs} == {"CancelledError"}  # type: ignore[union-attr]
    result = run_case(raises_it, _case("self", repeat=2))  # the pytest plugin's entry
    assert result.status == "error" and len(result.runs) == 2


def test_a_timeout_after_a_recorded_self_cancel_is_still_a_timeout() -> None:
    async def agent(prompt: str) -> RunArtifacts:
        if prompt == "self":
            asyncio.current_task().cancel()  # type: ignore[union-attr]
            await asyncio.sleep(0)
        await asyncio.sleep(5)
        return RunArtifacts(final_text="ok")

    report = run_suite(agent, [_case("self"), _case("slow", timeout_s=0.2)], concurrency=1)
    errors = [c.runs[0].error.type for c in report.cases]  # type: ignore[union-attr]
    assert errors == ["CancelledError", "TimeoutError"]


# ---- scoring does not steal other cases' time --------------------------------------------


def test_slow_scoring_does_not_make_other_cases_time_out() -> None:
    def slow_check(ctx: Any) -> Outcome:
        time.sleep(1.5)  # scoring that holds the event loop longer than the other cases' timeout
        return Outcome(1.0)

    started: list[str] = []

    async def agent(prompt: str) -> RunArtifacts:
        # the slow cases' agents answer first, once every fast case's agent (and timer) has started
        if prompt.startswith("fast"):
            started.append(prompt)
            await asyncio.sleep(0.2)
        else:
            while len(started) < 10:
                await asyncio.sleep(0.005)
        return RunArtifacts(final_text="ok")

    slow = CompiledExpectation("slow", "t.evl", 2, slow_check)
    cases = [_case(f"slow {i}", slow, timeout_s=30.0) for i in range(2)]
    cases += [_case(f"fast {i}", timeout_s=1.0) for i in range(10)]
    report = run_suite(agent, cases, concurrency=12)
    assert {c.name: c.status for c in report.cases} == {c.name: "passed" for c in cases}


def test_slow_scoring_gives_a_sync_agents_runs_their_time_back() -> None:
    """A plain sync agent's deadline is kept by the worker pool: it is put off by the scoring that held
    the loop while the agent ran, as an async agent's timer is.

    Ordered by events, not by sleeps racing each other: the slow case's agent answers only once every
    fast agent has started, its scoring then holds the loop for longer than the fast cases' timeout, and
    the fast agents answer only once that scoring is over, so each comes back past its own 0.5 s but
    well within 0.5 s plus the time the loop was held."""
    fast_started = threading.Semaphore(0)
    scoring_done = threading.Event()

    def slow_check(ctx: Any) -> Outcome:
        time.sleep(0.8)  # holds the loop past the fast cases' 0.5 s timeout
        scoring_done.set()
        return Outcome(1.0)

    def agent(prompt: str) -> RunArtifacts:
        if prompt == "slow":
            for _ in range(4):
                assert fast_started.acquire(timeout=20), "a fast case's agent never started"
        else:
            fast_started.release()
            assert scoring_done.wait(timeout=20), "the slow case was never scored"
        return RunArtifacts(final_text="ok")

    slow = CompiledExpectation("slow", "t.evl", 2, slow_check)
    cases = [_case("slow", slow, timeout_s=30.0)] + [_case(f"fast {i}", timeout_s=0.5) for i in range(4)]
    report = run_suite(agent, cases, concurrency=5)
    assert {c.name: c.status for c in report.cases} == {c.name: "passed" for c in cases}


# ---- regex matching is bounded --------------------------------------------------------


def test_a_catastrophic_regex_in_an_argument_pattern_is_that_cases_error() -> None:
    source = (
        'tool t\n  param x: string\n'
        'case "bad"\n  prompt "p"\n  timeout 500ms\n  expect called t with <x: matches /^(a+)+$/>\n'
        'case "good"\n  prompt "q"\n  expect called t\n'
    )

    def agent(prompt: str) -> RunArtifacts:
        return RunArtifacts(tool_calls=[ToolCall(name="t", args={"x": "a" * 40 + "!"})])

    report = run_suite(agent, compile_suite(source, "r.evl"))
    assert [c.status for c in report.cases] == ["error", "passed"]
    error = report.cases[0].runs[0].error
    assert error is not None and error.type == "RegexTimeout" and "0.5s" in error.message


MOCK_REGEX_SUITE = (
    'tool lookup\n  param q: string\n  when <q: matches /^(a+)+$/> returns "matched"\n  otherwise returns "plain"\n'
    + "".join(f'case "{n}"\n  prompt "{n}"\n  timeout 1s\n  expect final text is "plain"\n'
              for n in ("fine", "evil", "after"))
)

MOCK_REGEX_PROGRAM = f"""
import json
from evaldsl import RunArtifacts, compile, run_suite

suite = compile({MOCK_REGEX_SUITE!r})

def answer(prompt, ctx):
    return RunArtifacts(final_text=ctx.call("lookup", {{"q": "a" * 40 + "!" if prompt == "evil" else "b"}}).text)

def sync_agent(prompt, ctx):  # on a worker thread
    return answer(prompt, ctx)

async def async_agent(prompt, ctx):  # on the loop
    return answer(prompt, ctx)

out = []
for agent in (sync_agent, async_agent):
    report = run_suite(agent, suite)
    out.append({{c.name: [c.status, c.runs[0].error and c.runs[0].error.type] for c in report.cases}})
print(json.dumps(out))
"""


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="needs setitimer")
def test_a_catastrophic_regex_in_a_mock_tool_called_from_a_worker_thread_is_bounded() -> None:
    """The regex engine holds the interpreter lock: on a sync agent's thread it froze the whole run."""
    import subprocess
    import sys

    # A child process: a regression freezes it (and the timeout kills it), not the test suite.
    done = subprocess.run([sys.executable, "-c", MOCK_REGEX_PROGRAM], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    expected = {"fine": ["passed", None], "evil": ["error", "RegexTimeout"], "after": ["passed", None]}
    assert json.loads(done.stdout) == [expected, expected]


def test_ordinary_regexes_keep_python_re_semantics() -> None:
    source = 'case "u"\n  prompt "p"\n  expect final text matches /^\\d+\\s\\w+$/\n  expect final text matches /ÉTÉ/i\n'
    report = run_suite(lambda p: RunArtifacts(final_text="٣٤\u2003été"), compile_suite(source, "u.evl"))
    assert report.cases[0].status == "passed"  # Unicode digits, spaces and case folding, as Python's re has them


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="needs setitimer")
def test_a_timer_someone_else_set_still_fires_into_their_handler() -> None:
    import re
    import signal

    from evaldsl.compile._regex import disarm, search

    fired: list[int] = []
    old = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        assert search(re.compile("b+"), "abbc", "the text") is not None
        disarm()
        remaining = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 0 < remaining <= 0.3  # put back, less the match's time
        deadline = time.monotonic() + 10
        while not fired and time.monotonic() < deadline:
            time.sleep(0.01)
        assert fired == [signal.SIGALRM]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
