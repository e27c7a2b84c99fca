"""`merge_records`: shards merged are the record of one unsharded run; what it refuses and warns about."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl import EvalReport, MergeError, RunArtifacts, ScriptedAgent, load, merge_records, run_suite

FIRST = '''
suite "first"

case "passes"
  prompt "hello"
  expect final text contains "hello"

case "fails"
  prompt "bye"
  expect final text contains "hello"

case "crashes"
  prompt "boom"
  expect no error

case "later"
  skip "not yet"
  prompt "hello"
  expect no error

case "known bug"
  xfail
  prompt "bye"
  expect final text contains "hello"

case "flaky"
  repeat 3
  pass rate at least 0.5
  prompt "hello"
  expect final text contains "hello"
'''

ROWS = '''
suite "rows"

case "row {{ x }}"
  examples
    | x |
    | 1 |
    | 2 |
    | 3 |
    | 4 |
    | 5 |
    | 6 |
    | 7 |
  prompt "hello {{ x }}"
  expect final text contains "hello"
'''


def boom(prompt: str) -> Any:
    raise RuntimeError("kaput")


def agent() -> ScriptedAgent:
    replies: dict[str, Any] = {"hello": RunArtifacts(final_text="hello", tokens=7), "bye": "bye", "boom": boom}
    replies.update({f"hello {i}": RunArtifacts(final_text="hello", tokens=i) for i in range(1, 8)})
    return ScriptedAgent(replies)


@pytest.fixture
def suites(tmp_path: Path) -> list[Any]:
    (tmp_path / "a.evl").write_text(textwrap.dedent(FIRST).lstrip(), encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "rows.evl").write_text(textwrap.dedent(ROWS).lstrip(), encoding="utf-8")
    return load(tmp_path / "a.evl") + load(tmp_path / "sub" / "rows.evl")


TIMING = {"latency_s", "latency_mean_s", "latency_p50_s", "latency_p95_s", "duration_s", "started_at",
          "finished_at", "command", "shard"}


def comparable(report: EvalReport) -> Any:
    """The record without what must differ between two runs: timings, the command, the shard."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in TIMING and k != "traceback"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(report.model_dump(mode="json"))


@pytest.mark.parametrize("count", [1, 2, 3, 5, 20])
def test_shards_merged_are_the_record_of_one_unsharded_run(suites: list[Any], count: int) -> None:
    whole = run_suite(agent(), suites)
    shuffled = list(reversed(suites))  # the shards' machines found the files in another order
    shards = [run_suite(agent(), suites if i % 2 else shuffled, shard=f"{i}/{count}") for i in range(1, count + 1)]
    assert [r.meta.shard for r in shards] == [f"{i}/{count}" for i in range(1, count + 1)]
    assert sum(len(r.cases) for r in shards) == len(whole.cases) == 13
    inputs = [shards[i] for i in random.Random(count).sample(range(count), count)]  # given in any order
    warnings: list[str] = []
    merged = merge_records([r for r in inputs if r.meta.suites == whole.meta.suites] +
                           [r for r in inputs if r.meta.suites != whole.meta.suites], warn=warnings.append)
    assert warnings == []
    assert comparable(merged) == comparable(whole)
    assert merged.meta.complete and merged.meta.shard is None
    assert [c.status for c in merged.cases][:6] == ["passed", "failed", "error", "skipped", "xfailed", "passed"]
    assert merged.summary.tokens_total == whole.summary.tokens_total == 7 * 3 + 7 + sum(range(1, 8))
    runs = [r.latency_s for c in merged.cases for r in c.runs]
    assert merged.summary.latency_p95_s in runs and merged.summary.latency_mean_s == pytest.approx(sum(runs) / 14)


def test_records_of_different_agents_or_suites_are_refused(suites: list[Any]) -> None:
    one, two = run_suite(agent(), suites, shard="1/2"), run_suite(agent(), suites, shard="2/2")
    other = two.model_copy(update={"meta": two.meta.model_copy(update={"agent": "gpt-other"})})
    with pytest.raises(MergeError, match="different agents.*'scripted'.*'gpt-other'"):
        merge_records([one, other], names=["a.json", "b.json"])
    changed = two.model_copy(update={"meta": two.meta.model_copy(update={"suite_version": "sha256:0"})})
    with pytest.raises(MergeError, match="different suite versions"):
        merge_records([one, changed])
    old = two.model_copy(update={"meta": two.meta.model_copy(update={"suite_version": None})})
    with pytest.raises(MergeError, match="b.json has no suite version"):
        merge_records([one, old], names=["a.json", "b.json"])


def test_suite_version_follows_the_cases_not_the_file_order(suites: list[Any], tmp_path: Path) -> None:
    a = run_suite(agent(), suites).meta.suite_version
    assert a == run_suite(agent(), list(reversed(suites))).meta.suite_version
    path = tmp_path / "a.evl"
    path.write_text(path.read_text().replace('prompt "bye"', 'prompt "bye now"', 1))
    changed = load(path) + load(tmp_path / "sub" / "rows.evl")
    assert run_suite(ScriptedAgent(default="x"), changed).meta.suite_version != a


def test_shards_of_different_splits_or_a_shard_twice_are_refused(suites: list[Any]) -> None:
    with pytest.raises(MergeError, match="not shards of one split"):
        merge_records([run_suite(agent(), suites, shard="1/2"), run_suite(agent(), suites, shard="2/3")])
    with pytest.raises(MergeError, match="not shards of one split"):
        merge_records([run_suite(agent(), suites, shard="1/2"), run_suite(agent(), suites)])
    with pytest.raises(MergeError, match=r"shard 1/2 is given twice \(x and y\)"):
        merge_records([run_suite(agent(), suites, shard="1/2")] * 2, names=["x", "y"])


def test_a_case_with_two_different_results_is_refused_and_an_identical_one_kept_once(suites: list[Any]) -> None:
    first = run_suite(agent(), suites, keyword="passes or fails")
    again = run_suite(ScriptedAgent({"hello": "nope", "bye": "bye"}), suites, keyword="passes")
    with pytest.raises(MergeError, match="passes has different results in r1 and r2"):
        merge_records([first, again], names=["r1", "r2"])
    warnings: list[str] = []
    merged = merge_records([first, first], names=["r1", "r2"], warn=warnings.append)
    assert [c.name for c in merged.cases] == ["passes", "fails"]
    assert len(warnings) == 2 and all("identical: kept once" in w for w in warnings)


def test_a_missing_shard_is_a_warning_and_an_incomplete_record(suites: list[Any]) -> None:
    warnings: list[str] = []
    merged = merge_records([run_suite(agent(), suites, shard=f"{i}/3") for i in (1, 3)], warn=warnings.append)
    assert not merged.meta.complete
    assert any("shard(s) 2/3 missing" in w for w in warnings)
    assert any("ordered by file and line" in w for w in warnings)
    files = [c.file for c in merged.cases]
    assert files == sorted(files, key=lambda f: merged.meta.suites.index(f))  # still grouped by file, in run order
    assert merged.summary.total == len(merged.cases) == 13 - len(run_suite(agent(), suites, shard="2/3").cases)


def test_suite_version_tells_conversations_apart_and_keeps_a_v1_suites_fingerprint() -> None:
    from evaldsl.run._shard import suite_version

    def version(source: str) -> str:
        return suite_version(evaldsl.compile(source, filename="v.evl").cases)

    one = 'case "c"\n  user "hello"\n    expect no error\n  user "bye"\n'
    assert version(one) != version(one.replace('"bye"', '"see you"'))  # only a later message differs
    whole = 'case "c"\n  expect no error\n  user "hello"\n  user "bye"\n'
    assert version(one) != version(whole)  # the same expectation, judging the whole conversation
    given = 'tool t "t"\n  param a: string\ncase "c"\n  prompt "p"\n  given t returns "x"\n  expect called t\n'
    assert version(given) != version(given.replace('returns "x"', 'returns "y"').replace("  given", "\n  given"))
    # a v1 case's description is what version 1 wrote: the v2 settings at their defaults are left out
    from evaldsl.compile._described import settings_text as _settings_text

    case = evaldsl.compile('case "c"\n  prompt "p"\n  expect no error\n', filename="v.evl").cases[0]
    assert "user_turns" not in _settings_text(case.settings) and "tools" not in _settings_text(case.settings)
    assert _settings_text(case.settings).startswith("CaseSettings(repeat=1, pass_rate=1.0, timeout_s=60.0")
