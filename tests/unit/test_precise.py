"""Precise call matching (issue 26, LANGUAGE.md v2): `only`, `absent or P`, `loosely`, `(P)`, object
patterns after `with`, `[...] in any order`, `valid arguments`, the `tools` setting, the one type rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _fakechat import FakeChat, reply

import evaldsl
from evaldsl import CaseContext, EvlError, ModelAgent, RunArtifacts, ScriptedAgent, ToolCall, run_suite
from evaldsl.compile._model import EvalContext
from evaldsl.compile._validate import arg_problems, decoded, is_integer, type_error
from evaldsl.syntax import _ast as a

ROOT = Path(__file__).resolve().parents[2]
TOOLS = '''
tool get_stock "A quote"
  param symbol?: string
  param ticker?: string
  param days?: integer
  otherwise returns "187.3"
tool get_weather
  param city: string
  param unit?: one of [c, f]
  otherwise returns "sunny"
tool send_email
  param to: string
  otherwise returns "sent"
'''


def case_of(expect: str, extra: str = "", tools: str = TOOLS) -> Any:
    return evaldsl.compile(f'{tools}case "c"\n  prompt "p"\n{extra}  expect {expect}\n').cases[0]


def verdict(expect: str, calls: list[tuple[str, Any]], extra: str = "", tools: str = TOOLS) -> str | None:
    """None when the expectation holds on these calls, else its detail."""
    case = case_of(expect, extra, tools)
    ctx = EvalContext(artifacts=RunArtifacts(tool_calls=[ToolCall(name=n, args=v) for n, v in calls]),
                      tools=case.tools)
    outcome = case.expectations[-1](ctx)
    return None if outcome.passed else (outcome.detail or "failed")


def expr(text: str) -> Any:
    return evaldsl.parse(f'case "c"\n  expect {text}\n').cases[0].body[0].expectation.expr


# ------------------------------------------------------------- parsing --


def test_or_after_with_joins_object_patterns_but_not_predicates() -> None:
    node = expr("called get_stock with <symbol: AAPL> or <ticker: AAPL>")
    assert isinstance(node, a.Called) and isinstance(node.args, a.PatternOr)
    both = expr("called get_stock with <symbol: AAPL> or called send_email")
    assert isinstance(both, a.OrExpr) and [type(x) for x in both.items] == [a.Called, a.Called]
    mixed = expr("not called t with <a: 1> and not <b: 2> or final text contains \"x\"")
    assert isinstance(mixed, a.OrExpr)
    assert isinstance(mixed.items[0].expr.args, a.PatternAnd)  # not (called t with (<a> and not <b>))


def test_a_v1_file_keeps_its_meaning() -> None:
    # `only` and `valid` stay a word and a custom predicate where version 1 had them
    node = expr("called t with <mode: only> and valid(x: 1)")
    assert node.items[0].args.entries[0].pattern.value == a.Word(value="only")
    assert node.items[1] == a.CustomPredicate(name="valid", args=(a.Entry(key="x", value=a.Number(value=1, raw="1")),))


def test_step_lists_parse_with_their_steps() -> None:
    node = expr("called [get_stock with <symbol: AAPL> or <ticker: AAPL>, any tool, send_email] in any order")
    assert isinstance(node, a.CalledAnyOrder) and len(node.steps) == 3
    assert node.steps[1].tool is None and isinstance(node.steps[0].args, a.PatternOr)
    assert isinstance(expr("calls are [a, b] in any order"), a.CallsAreAnyOrder)


def test_parentheses_group_patterns() -> None:
    node = expr('final json <c: not ("a" or "b")>')
    inner = node.pattern.entries[0].pattern
    assert isinstance(inner, a.PatternNegation) and isinstance(inner.pattern, a.PatternOr)


# ------------------------------------------------------------ patterns --


@pytest.mark.parametrize("args, holds", [
    ({"symbol": "AAPL"}, True),
    ({"symbol": "AAPL", "days": 3}, False),
    ({}, False),
])
def test_only_closes_an_object(args: dict, holds: bool) -> None:
    assert (verdict("called get_stock with only <symbol: AAPL>", [("get_stock", args)]) is None) is holds


def test_only_closes_its_own_level() -> None:
    pattern = "called t with <o: only <x: 1>>"
    assert verdict(pattern, [("t", {"o": {"x": 1}, "other": 2})], tools="") is None
    assert "o.y: unexpected key" in (verdict(pattern, [("t", {"o": {"x": 1, "y": 2}})], tools="") or "")


@pytest.mark.parametrize("args, holds", [({}, True), ({"days": 5}, True), ({"days": 50}, False), ({"days": None}, False)])
def test_absent_or_p_is_an_optional_key(args: dict, holds: bool) -> None:
    assert (verdict("called get_stock with <days: absent or between 1 and 30>", [("get_stock", args)]) is None) is holds


@pytest.mark.parametrize("written", ["new york ny", "NewYork-NY", "  NEW YORK, NY!", "New\tYork\nNY"])
def test_loosely_forgives_case_spaces_punctuation_and_symbols(written: str) -> None:
    assert verdict('called get_weather with <city: "New York, NY" loosely>', [("get_weather", {"city": written})]) is None


@pytest.mark.parametrize("written", ["New York", "new york nj", 3, None])
def test_loosely_still_tells_other_values_apart(written: Any) -> None:
    assert verdict('called get_weather with <city: "New York, NY" loosely>', [("get_weather", {"city": written})])


def test_loosely_inside_arrays_one_of_or_and_contains() -> None:
    calls = [("t", {"c": "new-york", "tags": ["U.S.A."], "d": "I live in New York!"})]
    assert verdict('called t with <c: one of ["New York" loosely, "NYC"]>', calls, tools="") is None
    assert verdict('called t with <tags: ["usa" loosely]>', calls, tools="") is None
    assert verdict('called t with <c: "Paris" loosely or "new york" loosely>', calls, tools="") is None
    assert verdict('called t with <d: contains "newyork" loosely>', calls, tools="") is None
    assert verdict('called t with <tags: contains "usa" loosely>', calls, tools="") is None


def test_an_or_of_objects_after_with_and_in_steps() -> None:
    expect = "called get_stock with <symbol: AAPL> or <ticker: AAPL>"
    assert verdict(expect, [("get_stock", '{"ticker": "AAPL"}')]) is None
    assert "closest: expected <symbol: AAPL> or <ticker: AAPL>" in (verdict(expect, [("get_stock", {"t": 1})]) or "")
    chain = "called get_stock with <symbol: AAPL> or <ticker: AAPL> then send_email"
    assert verdict(chain, [("get_stock", {"ticker": "AAPL"}), ("send_email", {"to": "x"})]) is None
    assert verdict("called get_stock with not <symbol: MSFT>", [("get_stock", {"symbol": "AAPL"})]) is None


def test_final_json_joins_object_patterns_too() -> None:
    case = case_of("final json <a: 1> or <b: 2>", tools="")
    assert case.expectations[0](EvalContext(artifacts=RunArtifacts(final_text='{"b": 2}'))).passed
    assert not case.expectations[0](EvalContext(artifacts=RunArtifacts(final_text='{"c": 2}'))).passed


# ----------------------------------------------------------- any order --


def test_any_order_is_a_matching_not_a_greedy_scan() -> None:
    expect = 'called [search, search with <q: "paris">] in any order'
    paris, lyon = ("search", {"q": "paris"}), ("search", {"q": "lyon"})
    assert verdict(expect, [paris, lyon], tools="") is None
    assert verdict(expect, [lyon, paris], tools="") is None
    assert verdict(expect, [paris], tools="") == (
        "step 2 (search with <q: \"paris\">) found no call of its own; calls: search; "
        "the calls that fit it went to step 1; no unmatched call of search")


def test_any_order_names_the_step_and_the_closest_unmatched_call() -> None:
    detail = verdict('called [search with <q: "paris">, search with <q: "rome">] in any order',
                     [("search", {"q": "paris"}), ("search", {"q": "lyon"})], tools="")
    assert detail == ('step 2 (search with <q: "rome">) found no call of its own; calls: search, search; '
                      'closest unmatched call: search({"q": "lyon"}): q: expected "rome", got "lyon"')


def test_calls_are_in_any_order_allows_no_other_call() -> None:
    expect = "calls are [search, send_email] in any order"
    assert verdict(expect, [("send_email", {}), ("search", {})], tools="") is None
    assert verdict(expect, [("send_email", {}), ("search", {}), ("x", {})], tools="") == (
        "expected exactly 2 calls, got 3; no step for x({}) (call 3)")
    assert "step 1 (search) found no call of its own" in (verdict(expect, [("send_email", {})], tools="") or "")


def test_an_augmenting_path_longer_than_the_recursion_limit() -> None:
    from evaldsl.compile._any_order import _augment

    n = 5000  # step i fits calls i and i+1, and holds call i+1; the last step's path runs back to call 0
    fits = [[i, i + 1] for i in range(n - 1)] + [[n - 1]]
    call_of: list[int | None] = [i + 1 for i in range(n - 1)] + [None]
    step_of: list[int | None] = [None] + list(range(n - 1))
    assert _augment(n - 1, fits, call_of, step_of, [False] * n)
    assert call_of == list(range(n)) and step_of == list(range(n))


@pytest.mark.parametrize("text, code", [
    ("called [] in any order", "E253"),
    ("called [a, a] in any order twice", "E204"),
    ('called t with <a: only "x">', "E250"),
    ("called t with <a: 5 loosely>", "E252"),
    ("called t with (any)", "E255"),
    ("called t with <a: [absent or 1]>", "E203"),
])
def test_bad_input_is_a_positioned_error(text: str, code: str) -> None:
    with pytest.raises(EvlError) as info:
        evaldsl.compile(f'case "c"\n  prompt "p"\n  expect {text}\n')
    (diag,) = info.value.diagnostics
    assert diag.code == code and diag.span is not None and diag.span.line == 3 and diag.help


# ------------------------------------------------------- the type rule --


@pytest.mark.parametrize("value, integer, number", [
    (20, True, True), (20.0, False, True), (True, False, False), ("20", False, False), (float("nan"), False, False),
    (-0, True, True), (2**70, True, True),
])
def test_the_type_rule_on_native_values(value: Any, integer: bool, number: bool) -> None:
    assert (type_error({"type": "integer"}, value) is None) is integer
    assert (type_error({"type": "number"}, value) is None) is number


@pytest.mark.parametrize("text, integer", [("20", True), ("20.0", False), ("2e1", False), ("-3", True), ("1E0", False)])
def test_the_type_rule_decides_text_by_the_token(text: str, integer: bool) -> None:
    values, why = decoded('{"n": %s}' % text)
    assert why is None and is_integer(values["n"]) is integer


def test_the_mock_tools_apply_the_same_rule() -> None:
    tool = next(t for t in evaldsl.compile(TOOLS).tools if t.name == "get_stock")
    assert tool.answer({"days": 20}).ok
    assert tool.answer('{"days": 20.0}').text == "Error: get_stock: parameter `days` must be an integer"
    assert tool.answer({"days": 20.0}).text == "Error: get_stock: parameter `days` must be an integer"
    assert tool.answer({"days": 2, "unknown": 1}).ok  # the mock accepts other keys, as version 1 did


def test_arg_problems_lists_every_problem_in_order() -> None:
    params = {"properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["b"]}
    assert arg_problems(params, {"a": 1.5, "c": 1, "aa": 2}, unknown=True) == [
        "missing required parameter `b`", "parameter `a` must be an integer", "unknown parameter `c`",
        "unknown parameter `aa` (did you mean `a`?)"]
    assert arg_problems(params, {"a": 1.5, "c": 1}, unknown=False) == [
        "missing required parameter `b`", "parameter `a` must be an integer"]


# ------------------------------------------------------ valid arguments --


def test_valid_arguments_holds_for_valid_calls_and_no_calls() -> None:
    calls = [("get_weather", {"city": "Paris", "unit": "c"}), ("get_stock", '{"symbol": "AAPL", "days": 3}')]
    assert verdict("valid arguments", calls) is None
    assert verdict("valid arguments", []) is None


@pytest.mark.parametrize("call, problem", [
    (("get_weather", {"unit": "c"}), "missing required parameter `city`"),
    (("get_weather", {"city": "Paris", "citty": 1}), "unknown parameter `citty`"),
    (("get_stock", {"days": 2.0}), "parameter `days` must be an integer"),
    (("get_stock", "days=2"), "arguments are not valid JSON: days=2"),
    (("get_stock", "[1]"), "arguments are not a JSON object: [1]"),
    (("get_wether", {}), "`get_wether` is not an offered tool (did you mean `get_weather`?)"),
])
def test_valid_arguments_fails_with_what_is_wrong(call: tuple[str, Any], problem: str) -> None:
    detail = verdict("valid arguments", [("get_weather", {"city": "Lyon"}), call])
    assert detail is not None and detail.startswith("1 of 2 calls had invalid arguments; call 2 ")
    assert problem in detail


def test_valid_arguments_checks_against_the_offered_tools() -> None:
    assert verdict("valid arguments", [("send_email", {"to": "x"})]) is None
    detail = verdict("valid arguments", [("send_email", {"to": "x"})], extra="  tools get_stock\n")
    assert detail is not None and "`send_email` is not an offered tool" in detail


def test_valid_arguments_without_known_tools_fails_saying_so() -> None:
    case = case_of("valid arguments")
    outcome = case.expectations[0](EvalContext(artifacts=RunArtifacts()))
    assert not outcome.passed and "not known" in (outcome.detail or "")


def test_valid_arguments_without_declared_tools_is_a_warning() -> None:
    suite = evaldsl.compile('case "c"\n  prompt "p"\n  expect valid arguments\n')
    assert [w.code for w in suite.warnings] == ["W308"]


# ------------------------------------------------------- tools setting --


def test_tools_setting_offers_a_subset_in_the_order_named() -> None:
    suite = evaldsl.compile(TOOLS + 'tools get_weather, get_stock\ncase "a"\n  prompt "p"\n  expect no error\n'
                            'case "b"\n  tools send_email, send_email\n  prompt "p"\n  expect no error\n'
                            'case "c"\n  prompt "p"\n  expect no error\n')
    assert [[t.name for t in c.tools] for c in suite.cases] == [
        ["get_weather", "get_stock"], ["send_email"], ["get_weather", "get_stock"]]
    assert suite.cases[0].tools is suite.cases[2].tools  # one tuple shared by cases offering the same
    assert [t.name for t in suite.tools] == ["get_stock", "get_weather", "send_email"]


def test_tools_setting_names_are_checked_with_a_did_you_mean() -> None:
    with pytest.raises(EvlError) as info:
        evaldsl.compile(TOOLS + 'case "c"\n  tools get_stok\n  prompt "p"\n  expect no error\n')
    (diag,) = info.value.diagnostics
    assert diag.code == "E256" and diag.suggestion == "get_stock" and diag.span.line == 15


def test_tools_setting_takes_placeholders_from_rows() -> None:
    suite = evaldsl.compile(TOOLS + 'case "c {{t}}"\n  tools $t\n  prompt "p"\n  expect no error\n'
                            '  examples\n    | t |\n    | get_stock |\n    | send_email |\n')
    assert [[t.name for t in c.tools] for c in suite.cases] == [["get_stock"], ["send_email"]]


def test_a_model_run_is_offered_only_the_case_tools_and_the_record_says_so() -> None:
    backend = FakeChat(reply(None, ("get_weather", {"city": "Paris"})), reply("done"))
    suite = evaldsl.compile(TOOLS + 'case "c"\n  tools send_email, get_stock\n  prompt "p"\n'
                            '  expect valid arguments\n')
    report = run_suite(ModelAgent(backend), suite, concurrency=1)
    assert [t["function"]["name"] for t in backend.requests[0]["tools"]] == ["send_email", "get_stock"]
    case = report.cases[0]
    assert case.runs[0].artifacts.tool_calls[0].result.startswith("Error: no tool named `get_weather`")
    assert case.status == "failed" and "`get_weather` is not an offered tool" in case.runs[0].expectations[0].detail
    assert case.tools == ["send_email", "get_stock"]
    assert json.loads(report.model_dump_json())["cases"][0]["tools"] == ["send_email", "get_stock"]


def test_the_case_context_exposes_the_offered_tools() -> None:
    suite = evaldsl.compile(TOOLS + 'case "c"\n  tools get_weather\n  prompt "p"\n  expect no error\n')
    ctx = CaseContext.for_case(suite.cases[0])
    assert [t["function"]["name"] for t in ctx.tools_openai()] == ["get_weather"]
    assert ctx.call("get_weather", {"city": "Paris"}).text == "sunny"
    assert not ctx.call("get_stock", {}).ok


def test_a_scripted_run_is_scored_against_its_tools() -> None:
    suite = evaldsl.compile(TOOLS + 'case "c"\n  prompt "p"\n  expect valid arguments\n')
    agent = ScriptedAgent({"p": RunArtifacts(tool_calls=[ToolCall(name="get_stock", args={"days": 1.5})])})
    report = run_suite(agent, suite)
    assert report.cases[0].status == "failed"
    assert "parameter `days` must be an integer" in report.cases[0].runs[0].expectations[0].detail
    assert report.cases[0].tools == ["get_stock", "get_weather", "send_email"]


def test_a_suite_without_tools_records_none() -> None:
    suite = evaldsl.compile('case "c"\n  prompt "p"\n  expect no error\n')
    report = run_suite(ScriptedAgent({"p": RunArtifacts(final_text="x")}), suite)
    assert report.cases[0].tools is None


def test_rescoring_knows_the_tools() -> None:
    from evaldsl.run._rescore import rescore

    suite = evaldsl.compile(TOOLS + 'case "c"\n  prompt "p"\n  expect no error\n')
    agent = ScriptedAgent({"p": RunArtifacts(tool_calls=[ToolCall(name="get_stock", args={"days": 2.0})])})
    record = run_suite(agent, suite)
    new = evaldsl.compile(TOOLS + 'case "c"\n  prompt "p"\n  expect valid arguments\n')
    report = rescore(record, [new]).report
    assert "must be an integer" in report.cases[0].runs[0].expectations[0].detail


def test_the_ast_json_schema_covers_the_new_forms() -> None:
    text = (ROOT / "tests" / "golden" / "ast" / "precise.evl").read_text(encoding="utf-8")
    suite = evaldsl.parse(text)
    assert a.Suite.model_validate_json(suite.model_dump_json()) == suite  # the schema's models read it back
    defs = a.Suite.model_json_schema()["$defs"]
    for name in ("OnlyPattern", "LooselyPattern", "CalledAnyOrder", "CallsAreAnyOrder", "ValidArguments", "ToolsStmt"):
        assert name in defs


def test_when_and_given_take_the_patterns_with_takes() -> None:
    tools = ('tool t\n  when <a: 1> or <b: 1> returns "x"\n  when not <a: 2> and only <a: any> returns "y"\n'
             '  otherwise returns "z"\n')
    tool = evaldsl.compile(tools).tools[0]
    assert [tool.answer(v).text for v in ({"b": 1}, {"a": 3}, {"a": 3, "c": 1}, {"a": 2})] == ["x", "y", "z", "z"]
    suite = evaldsl.compile(tools + 'case "c"\n  prompt "p"\n  given t with only <a: 5> or <c: 5> returns "g"\n'
                            '  expect no error\n')
    ctx = CaseContext.for_case(suite.cases[0])
    assert [ctx.call("t", v).text for v in ({"a": 5}, {"c": 5, "d": 1}, {"a": 5, "d": 1})] == ["g", "g", "z"]
