"""Tool-call predicates (docs/language.md section 6.1): each form holds and fails as written."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evaldsl.artifacts import RunArtifacts, ToolCall
from evaldsl.compile._calls import compile_calls
from evaldsl.compile._errors import CompileProblem
from evaldsl.compile._model import EvalContext, Outcome
from evaldsl.syntax import _ast as a

# ------------------------------------------------------------- builders --


def tool(name: str) -> a.ToolName:
    return a.ToolName(name=name)


def num(value: int) -> a.Number:
    return a.Number(value=value, raw=json.dumps(value))


def args(**entries: Any) -> a.ObjectPattern:
    """`<k: v, ...>` with literal values (str, int, bool) as equals patterns."""
    def value(v: Any) -> Any:
        if isinstance(v, bool):
            return a.Constant(value=v)
        if isinstance(v, int):
            return num(v)
        return a.String(value=v)

    return a.ObjectPattern(entries=tuple(
        a.KeyPattern(key=k, pattern=a.EqualsPattern(value=value(v))) for k, v in entries.items()
    ))


def count(form: Any, n: int | None = None, m: int | None = None) -> a.Count:
    return a.Count(form=form, n=None if n is None else num(n), m=None if m is None else num(m))


def step(name: str | None, with_args: a.ObjectPattern | None = None) -> a.Step:
    return a.Step(tool=None if name is None else tool(name), args=with_args)


def calls(*made: str | tuple[str, Any]) -> EvalContext:
    """A context whose run made these calls: a name, or (name, args)."""
    tool_calls = [
        ToolCall(name=c) if isinstance(c, str) else ToolCall(name=c[0], args=c[1]) for c in made
    ]
    return EvalContext(artifacts=RunArtifacts(tool_calls=tool_calls))


def run(node: Any, ctx: EvalContext) -> Outcome:
    return compile_calls(node)(ctx)


def holds(node: Any, ctx: EvalContext) -> bool:
    outcome = run(node, ctx)
    assert outcome.credit in (0.0, 1.0)
    assert (outcome.detail is None) == (outcome.credit == 1.0)
    return outcome.passed


# ---------------------------------------------------------------- called --


def test_called() -> None:
    node = a.Called(tool=tool("search"))
    assert holds(node, calls("calculator", "search"))
    assert run(node, calls("calculator", "send_email")).detail == (
        "search was not called; calls: calculator, send_email"
    )
    assert run(node, calls()).detail == "no tool was called"


def test_tool_names_compare_exactly() -> None:
    assert not holds(a.Called(tool=tool("search")), calls("Search", "search ", "search_web"))


def test_called_with_args() -> None:
    node = a.Called(tool=tool("calculator"), args=args(op="add"))
    assert holds(node, calls(("calculator", {"op": "sub"}), ("calculator", {"op": "add", "a": 2})))
    detail = run(node, calls(("calculator", {"op": "sub", "a": 2}))).detail
    assert detail is not None
    assert detail.startswith("no call of calculator matched ")
    assert 'calls of calculator: calculator({"op": "sub", "a": 2})' in detail
    assert detail.endswith('; closest: op: expected "add", got "sub"')


def test_called_with_args_shows_the_closest_call() -> None:
    node = a.Called(tool=tool("calculator"), args=args(op="add", a=2, b=2))
    ctx = calls(
        ("calculator", {"op": "sub", "a": 1, "b": 2}),
        ("calculator", {"op": "add", "a": 1, "b": 2}),
        ("search", {"op": "add", "a": 2, "b": 2}),
    )
    detail = run(node, ctx).detail
    assert detail is not None
    assert detail.endswith("; closest: a: expected 2, got 1")
    assert "search(" not in detail


def test_called_with_args_when_the_tool_was_not_called() -> None:
    node = a.Called(tool=tool("calculator"), args=args(op="add"))
    assert run(node, calls("search")).detail == "calculator was not called; calls: search"
    assert run(node, calls()).detail == "no tool was called"


def test_string_arguments_are_decoded() -> None:
    node = a.Called(tool=tool("calculator"), args=args(op="add"))
    assert holds(node, calls(("calculator", '{"op": "add"}')))
    detail = run(node, calls(("calculator", "{op: add"))).detail
    assert detail is not None and "arguments are not valid JSON: {op: add" in detail


@pytest.mark.parametrize(
    ("the_count", "good", "bad"),
    [
        (count("once"), 1, 2),
        (count("twice"), 2, 1),
        (count("times", 3), 3, 4),
        (count("times", 0), 0, 1),
        (count("at least", 2), 3, 1),
        (count("at most", 2), 2, 3),
        (count("between", 1, 3), 1, 0),
        (count("between", 1, 3), 3, 4),
    ],
)
def test_called_count(the_count: a.Count, good: int, bad: int) -> None:
    node = a.Called(tool=tool("search"), count=the_count)
    assert holds(node, calls(*["search", "other"] * good))
    assert not holds(node, calls(*["search", "other"] * bad))


def test_count_detail() -> None:
    node = a.Called(tool=tool("search"), count=count("at least", 2))
    assert run(node, calls("search", "calc")).detail == (
        "expected search at least 2 times, called 1 time"
    )
    node = a.Called(tool=tool("search"), count=count("between", 1, 3))
    assert run(node, calls()).detail == "expected search between 1 and 3 times, called 0 times"


def test_count_with_args_counts_matching_calls() -> None:
    node = a.Called(tool=tool("calc"), args=args(op="add"), count=count("twice"))
    ctx = calls(("calc", {"op": "add"}), ("calc", {"op": "sub"}), ("calc", {"op": "add"}))
    assert holds(node, ctx)
    detail = run(node, calls(("calc", {"op": "add"}), ("calc", {"op": "sub"}))).detail
    assert detail is not None
    assert "twice, matched 1 time" in detail
    assert 'calls of calc: calc({"op": "add"}), calc({"op": "sub"})' in detail


def test_count_must_be_a_whole_number() -> None:
    bad = a.Count(form="times", n=a.Number(value=1.5, raw="1.5"))
    with pytest.raises(CompileProblem):
        compile_calls(a.Called(tool=tool("t"), count=bad))
    with pytest.raises(CompileProblem):
        compile_calls(a.Called(tool=tool("t"), count=count("between", 3, 1)))
    huge = a.Count(form="at least", n=a.Number(value=float("inf"), raw="1e999"))
    with pytest.raises(CompileProblem):
        compile_calls(a.Called(tool=tool("t"), count=huge))
    negative = a.Count(form="at most", n=a.Number(value=-1, raw="-1"))
    with pytest.raises(CompileProblem):
        compile_calls(a.Called(tool=tool("t"), count=negative))
    assert holds(a.Called(tool=tool("t"), count=count("times", 2)), calls("t", "t"))


def test_called_any() -> None:
    assert holds(a.CalledAny(), calls("x"))
    assert run(a.CalledAny(), calls()).detail == "no tool was called"
    node = a.CalledAny(count=count("at least", 2))
    assert holds(node, calls("x", "y"))
    assert run(node, calls("x")).detail == (
        "expected any tool at least 2 times, called 1 time; calls: x"
    )
    assert holds(a.CalledAny(count=count("at most", 1)), calls())


# ----------------------------------------------------------------- order --


def test_called_then_is_a_subsequence() -> None:
    node = a.CalledSequence(steps=(step("search"), step("send_email")))
    assert holds(node, calls("search", "calculator", "send_email"))
    assert holds(node, calls("send_email", "search", "send_email"))
    assert run(node, calls("search", "calculator")).detail == (
        "step 2 (send_email) not found after search at call 1; calls: search, calculator"
    )
    assert run(node, calls("send_email", "search")).detail == (
        "step 2 (send_email) not found after search at call 2; calls: send_email, search"
    )


def test_called_then_first_step_missing() -> None:
    node = a.CalledSequence(steps=(step("search"), step("send_email")))
    assert run(node, calls("send_email")).detail == "step 1 (search) not found; calls: send_email"
    assert run(node, calls()).detail == "step 1 (search) not found; no tool was called"


def test_called_then_with_args_and_any_tool() -> None:
    node = a.CalledSequence(steps=(
        step("search", args(query="weather")), step(None), step("send_email", args(to="bob")),
    ))
    good = calls(("search", {"query": "weather"}), "calc", ("send_email", {"to": "bob"}))
    assert holds(node, good)
    # `any tool` needs a call of its own between the two
    assert not holds(node, calls(("search", {"query": "weather"}), ("send_email", {"to": "bob"})))
    bad = calls(("search", {"query": "weather"}), "calc", ("send_email", {"to": "eve"}))
    detail = run(node, bad).detail
    assert detail is not None
    assert detail.startswith("step 3 (send_email with ")
    assert "not found after calc at call 2" in detail
    assert detail.endswith('closest: send_email({"to": "eve"}): to: expected "bob", got "eve"')


def test_called_then_count_is_e204() -> None:
    node = a.CalledSequence(steps=(step("a"), step("b")), count=count("once"))
    with pytest.raises(CompileProblem) as caught:
        compile_calls(node)
    assert caught.value.code == "E204"


def test_calls_are_is_exact() -> None:
    node = a.CallsAre(steps=(step("search"), step("send_email")))
    assert holds(node, calls("search", "send_email"))
    assert run(node, calls("search", "calc", "send_email")).detail == (
        "call 2 was calc, expected send_email; calls: search, calc, send_email"
    )
    assert run(node, calls("search", "send_email", "search")).detail == (
        "expected 2 calls, got 3; calls: search, send_email, search"
    )
    assert run(node, calls("search")).detail == "expected 2 calls, got 1; calls: search"
    assert run(node, calls()).detail == "expected 2 calls, got 0; no tool was called"


def test_calls_are_with_args_and_any_tool() -> None:
    node = a.CallsAre(steps=(step(None), step("send_email", args(to="bob"))))
    assert holds(node, calls("whatever", ("send_email", {"to": "bob", "cc": "x"})))
    detail = run(node, calls("whatever", ("send_email", {"to": "eve"}))).detail
    assert detail is not None
    assert detail.startswith('call 2 send_email({"to": "eve"}) did not match ')
    assert detail.endswith(': to: expected "bob", got "eve"')


def test_only_called() -> None:
    node = a.OnlyCalled(tools=(tool("search"), tool("read_file")))
    assert holds(node, calls("search", "search", "read_file"))
    assert holds(node, calls())
    assert run(node, calls("search", "delete_repo", "rm")).detail == (
        "called tools not allowed: delete_repo (call 2), rm (call 3); allowed: search, read_file"
    )


def test_first_call() -> None:
    node = a.FirstCall(tool=tool("read_file"))
    assert holds(node, calls("read_file", "list_files"))
    assert run(node, calls("list_files", "read_file")).detail == (
        "first call was list_files, not read_file; calls: list_files, read_file"
    )
    assert run(node, calls()).detail == "no tool was called"


def test_first_call_with_args() -> None:
    node = a.FirstCall(tool=tool("read_file"), args=args(path="a.txt"))
    assert holds(node, calls(("read_file", {"path": "a.txt"}), "x"))
    detail = run(node, calls(("read_file", {"path": "b.txt"}), ("read_file", {"path": "a.txt"})))
    assert detail.detail is not None
    assert detail.detail.startswith('first call read_file({"path": "b.txt"}) did not match ')
    assert detail.detail.endswith(': path: expected "a.txt", got "b.txt"')


def test_last_call() -> None:
    node = a.LastCall(tool=tool("send_email"), args=args(to="bob"))
    assert holds(node, calls("search", ("send_email", {"to": "bob"})))
    assert run(node, calls(("send_email", {"to": "bob"}), "search")).detail == (
        "last call was search, not send_email; calls: send_email, search"
    )
    detail = run(node, calls(("send_email", {"to": "eve"}))).detail
    assert detail is not None and detail.startswith('last call send_email({"to": "eve"})')


def test_every_call() -> None:
    node = a.EveryCall(tool=tool("search"), args=args(safe=True))
    assert holds(node, calls(("search", {"safe": True}), "other", ("search", {"safe": True})))
    assert holds(node, calls("other"))
    assert holds(node, calls())
    ctx = calls(("search", {"safe": True}), ("search", {"safe": False}), ("search", {}))
    detail = run(node, ctx).detail
    assert detail is not None
    assert detail.startswith("2 of 3 calls of search did not match ")
    assert detail.endswith('call 2 search({"safe": false}): safe: expected true, got false')


def test_no_tool_calls() -> None:
    assert holds(a.NoToolCalls(), calls())
    assert run(a.NoToolCalls(), calls("search", "calc")).detail == (
        "expected no tool calls, got 2; calls: search, calc"
    )


def test_long_call_lists_are_cut() -> None:
    detail = run(a.Called(tool=tool("missing")), calls(*[f"t{i}" for i in range(30)])).detail
    assert detail is not None and "… (10 more)" in detail and "t29" not in detail


@pytest.mark.parametrize(
    "node",
    [
        a.Called(tool=a.Placeholder(name="golden")),
        a.FirstCall(tool=a.Placeholder(name="golden")),
        a.OnlyCalled(tools=(a.Placeholder(name="golden"),)),
        a.Called(tool=tool("t"), args=a.Placeholder(name="args")),
        a.Called(tool=tool("t"), count=a.Count(form="times", n=a.Placeholder(name="n"))),
    ],
)
def test_unfilled_placeholders_are_compile_problems(node: Any) -> None:
    with pytest.raises(CompileProblem) as caught:
        compile_calls(node)
    assert isinstance(caught.value.node, a.Placeholder)
