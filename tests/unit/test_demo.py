"""The demo agent: what it does on each baseline prompt, and that it is no oracle.

The table below pins the demo's tool calls and final text for every prompt
of suites/baseline/; a test keeps the table and the shipped files in step,
so a reworded baseline prompt fails here first, naming the prompt.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evaldsl.artifacts import RunArtifacts
from evaldsl.demo import DemoAgent, agent

BASELINE = Path(__file__).resolve().parents[2] / "suites" / "baseline"

# prompt -> (the calls as (name, args), the exact final text)
EXPECTED: dict[str, tuple[list[tuple[str, dict]], str]] = {
    # arithmetic.evl
    "What is 17 + 25?": ([("calculator", {"op": "add", "a": 17, "b": 25})], "17 + 25 = 42"),
    "What is 12 times 11?": ([("calculator", {"op": "mul", "a": 12, "b": 11})], "12 * 11 = 132"),
    "What is (6 + 4) * 3?": (
        [("calculator", {"op": "add", "a": 6, "b": 4}), ("calculator", {"op": "mul", "a": 10, "b": 3})],
        "(6 + 4) * 3 = 30",
    ),
    "What is 7 divided by 4? Give the answer as a decimal.": (
        [("calculator", {"op": "div", "a": 7, "b": 4})], "7 / 4 = 1.75"),
    "What is 15 - 40?": ([("calculator", {"op": "sub", "a": 15, "b": 40})], "15 - 40 = -25"),
    "A box holds 24 eggs. How many eggs are in 7 boxes?": (
        [("calculator", {"op": "mul", "a": 24, "b": 7})], "24 x 7 = 168, so the answer is 168."),
    # language.evl
    'Reply with exactly the word "OK" and nothing else.': ([], "OK"),
    'What is the capital of France? Begin your reply with "Answer:".': (
        [], "Answer: The capital of France is Paris."),
    "List the three primary colours of paint as a comma-separated list in lowercase, "
    "on one line, with nothing else.": ([], "red, yellow, blue"),
    'Return only a JSON object with the keys "name" and "age" for a person named Ada '
    "who is 36 years old.": ([], '{"name": "Ada", "age": 36}'),
    "What is the capital of Japan? Answer with the city name only, no punctuation.": ([], "Tokyo"),
    # tool_use.evl
    "Search the web for today's weather in Paris and tell me what it says.": (
        [("search", {"query": "today's weather in Paris"})],
        "According to my search: Paris weather today: sunny, high of 24 C, light wind from the west.",
    ),
    "Look up the latest Python release and email a short summary to bob@example.com.": (
        [("search", {"query": "latest Python release"}),
         ("send_email", {"to": "bob@example.com", "subject": "Summary: latest Python release"})],
        'I emailed bob@example.com with the subject "Summary: latest Python release".',
    ),
    'Search for "evaldsl" and email the top result to team@example.com with the subject "Top result".': (
        [("search", {"query": "evaldsl"}), ("send_email", {"to": "team@example.com", "subject": "Top result"})],
        'I emailed team@example.com with the subject "Top result".',
    ),
    "Who wrote Pride and Prejudice? Search the web to check before you answer.": (
        [("search", {"query": "Who wrote Pride and Prejudice"})],
        "According to my search: Pride and Prejudice is an 1813 novel by Jane Austen.",
    ),
    "Use a tool to work out 23 * 19.": ([("calculator", {"op": "mul", "a": 23, "b": 19})], "23 * 19 = 437"),
    "Hello there! How are you today?": (
        [], "Hello! I'm doing well, thanks for asking. How can I help you today?"),
    'Email alice@example.com with the subject "Meeting moved" and tell her the meeting is now at 3pm.': (
        [("send_email", {"to": "alice@example.com", "subject": "Meeting moved",
                         "body": "Hi,\n\nThe meeting is now at 3pm.\n"})],
        'I emailed alice@example.com with the subject "Meeting moved".',
    ),
}


def _baseline_prompts() -> list[str]:
    prompts = []
    for path in sorted(BASELINE.glob("*.evl")):
        for match in re.finditer(r'^\s*prompt ("(?:[^"\\]|\\.)*")\s*$', path.read_text(), re.MULTILINE):
            prompts.append(json.loads(match.group(1)))
    return prompts


def test_table_covers_every_baseline_prompt() -> None:
    prompts = _baseline_prompts()
    assert len(prompts) == 18
    assert sorted(prompts) == sorted(EXPECTED)


@pytest.mark.parametrize("prompt", list(EXPECTED))
def test_demo_on_baseline_prompt(prompt: str) -> None:
    calls, final = EXPECTED[prompt]
    result = agent.run(prompt)
    assert isinstance(result, RunArtifacts)
    assert [c.name for c in result.tool_calls] == [name for name, _ in calls]
    for call, (_, args) in zip(result.tool_calls, calls):
        assert args.items() <= call.args.items(), call.display()
        assert call.result, f"{call.name} reported no result"
    assert result.final_text == final
    assert result.error is None


@pytest.mark.parametrize("prompt", list(EXPECTED))
def test_transcript_is_chat_messages(prompt: str) -> None:
    result = agent.run(prompt)
    messages = result.transcript
    assert messages[0] == {"role": "user", "content": prompt}
    assert messages[-1] == {"role": "assistant", "content": result.final_text}
    requested = [m["tool_calls"][0] for m in messages if m.get("tool_calls")]
    answered = [m for m in messages if m["role"] == "tool"]
    assert [r["function"]["name"] for r in requested] == [c.name for c in result.tool_calls]
    assert [json.loads(r["function"]["arguments"]) for r in requested] == [c.args for c in result.tool_calls]
    assert [a["tool_call_id"] for a in answered] == [r["id"] for r in requested]
    assert [a["content"] for a in answered] == [c.result for c in result.tool_calls]
    assert isinstance(result.tokens, int) and result.tokens > 0


def test_deterministic() -> None:
    for prompt in EXPECTED:
        assert agent.run(prompt).model_dump() == DemoAgent().run(prompt).model_dump()


@pytest.mark.parametrize(
    ("prompt", "ops", "answer"),
    [
        ("what is 2 + 3 * 4?", ["mul", "add"], "14"),
        ("what is (2 + 3) * (4 - 1)?", ["add", "sub", "mul"], "15"),
        ("what is 10 - 4 - 3?", ["sub", "sub"], "3"),
        ("what is -3 + 4", ["add"], "1"),
        ("what is 1,250 multiplied by 8?", ["mul"], "10000"),
        ("what is 1 / 3?", ["div"], "0.3333333333"),
    ],
)
def test_arithmetic_is_computed_not_looked_up(prompt: str, ops: list[str], answer: str) -> None:
    result = agent.run(prompt)
    assert [c.args["op"] for c in result.tool_calls] == ops
    assert result.final_text is not None and result.final_text.endswith(f"= {answer}")


def test_division_by_zero_is_reported_in_text() -> None:
    result = agent.run("What is 5 / 0?")
    assert [c.result for c in result.tool_calls] == ["Error: division by zero"]
    assert result.final_text == "That divides by zero, so it has no answer."


@pytest.mark.parametrize("prompt", ["Summarise the French revolution.", "", "Translate 'cat' to German."])
def test_unknown_prompts_get_no_tools_and_an_honest_answer(prompt: str) -> None:
    result = agent.run(prompt)
    assert result.tool_calls == []
    assert result.final_text is not None and "don't know" in result.final_text


def test_search_without_a_hit_says_so() -> None:
    result = agent.run("Search the web for zebra migration routes.")
    assert [c.display() for c in result.tool_calls] == ['search({"query": "zebra migration routes"})']
    assert result.final_text == 'I searched for "zebra migration routes" but found nothing.'


def test_the_readme_tour_passes_on_the_demo_agent(tmp_path: Path) -> None:
    """The tour's suite, copied verbatim from the README, passes on the demo agent (what a newcomer tries first)."""
    from evaldsl import load, run_suite

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    tour = readme.split("**Write cases.**", 1)[1].split("```evl\n", 1)[1].split("```", 1)[0]
    (tmp_path / "tour.evl").write_text(tour, encoding="utf-8")
    report = run_suite(agent, load(tmp_path / "tour.evl"))
    assert [c.status for c in report.cases] == ["passed"] * 5, [c.name for c in report.failures()]


def test_the_demo_reads_and_lists_its_make_believe_files() -> None:
    read = agent.run("Read the Cargo.toml file")
    assert [c.name for c in read.tool_calls] == ["read_file"] and read.tool_calls[0].args == {"path": "Cargo.toml"}
    listed = agent.run("What files are in the current directory?")
    assert [c.name for c in listed.tool_calls] == ["list_files"] and "Cargo.toml" in listed.final_text
