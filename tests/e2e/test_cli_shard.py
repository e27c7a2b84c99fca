"""`evaldsl run --shard I/N` and `evaldsl merge`, as a CI matrix uses them: subprocesses, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

AGENT = '''
from evaldsl import RunArtifacts

def agent(prompt):
    if prompt == "boom":
        raise RuntimeError("kaput")
    return RunArtifacts(final_text=prompt, tokens=len(prompt))

def other(prompt):
    return agent(prompt)
'''

SUITE = '''
case "passes"
  prompt "hello"
  expect final text contains "hello"

case "fails"
  prompt "bye"
  expect final text contains "hello"

case "crashes"
  prompt "boom"
  expect no error

case "row {{ x }}"
  examples
    | x |
    | 1 |
    | 2 |
    | 3 |
  prompt "hello {{ x }}"
  expect final text contains "hello"
'''


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "shard_agent.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    (tmp_path / "suites" / "more").mkdir(parents=True)
    (tmp_path / "suites" / "a.evl").write_text(textwrap.dedent(SUITE).lstrip(), encoding="utf-8")
    (tmp_path / "suites" / "more" / "b.evl").write_text(textwrap.dedent(SUITE).lstrip(), encoding="utf-8")
    return tmp_path


def evaldsl(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evaldsl", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"})


def record(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def outcome(rec: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["file"], c["name"], c["status"]) for c in rec["cases"]]


@pytest.mark.parametrize(("value", "message"), [
    ("0/3", "I/N needs 1 <= I <= N"), ("4/3", "I/N needs 1 <= I <= N"), ("a/b", "expected I/N"), ("3", "expected I/N"),
])
def test_a_bad_shard_is_a_usage_error(work: Path, value: str, message: str) -> None:
    proc = evaldsl(work, "run", "suites", "--agent", "shard_agent:agent", "--shard", value)
    assert proc.returncode == 4
    assert f"argument --shard: {message}" in proc.stderr and "Traceback" not in proc.stderr


def test_a_matrix_of_shards_merges_into_the_unsharded_record(work: Path) -> None:
    whole = evaldsl(work, "run", "suites", "--agent", "shard_agent:agent", "--json", "whole.json", "-q")
    assert whole.returncode == 1
    codes = []
    for i in range(1, 4):
        proc = evaldsl(work, "run", "suites", "--agent", "shard_agent:agent", "--shard", f"{i}/3",
                       "--json", f"shard-{i}.json", "-q")
        codes.append(proc.returncode)
        assert record(work / f"shard-{i}.json")["meta"]["shard"] == f"{i}/3"
    assert 1 in codes  # the failing cases fail their own shard's job
    merged = evaldsl(work, "merge", "shard-3.json", "shard-1.json", "shard-2.json", "-o", "merged.json")
    assert merged.returncode == 0, merged.stderr
    assert "3 record(s), 12 case(s) -> merged.json" in merged.stderr
    assert "2 failed, 8 passed, 2 errors" in merged.stdout  # the whole run's report
    a, b = record(work / "whole.json"), record(work / "merged.json")
    assert outcome(b) == outcome(a) and len(outcome(a)) == 12
    for key in ("total", "passed", "failed", "errors", "runs", "accuracy", "average_score", "tokens_total"):
        assert b["summary"][key] == a["summary"][key]
    assert b["meta"]["shard"] is None and b["meta"]["complete"] is True
    assert b["meta"]["suite_version"] == a["meta"]["suite_version"]
    assert b["meta"]["command"] == "evaldsl merge shard-3.json shard-1.json shard-2.json -o merged.json"


def test_an_empty_shard_exits_0_and_still_writes_its_record(work: Path) -> None:
    proc = evaldsl(work, "run", "suites/a.evl", "--agent", "shard_agent:agent", "-k", "passes",
                   "--shard", "2/2", "--json", "empty.json")
    assert proc.returncode == 0, proc.stderr
    assert "shard 2/2 holds none of the 1 selected case(s); nothing to run" in proc.stderr
    rec = record(work / "empty.json")
    assert rec["cases"] == [] and rec["meta"]["shard"] == "2/2" and rec["meta"]["complete"] is True
    none = evaldsl(work, "run", "suites/a.evl", "--agent", "shard_agent:agent", "-k", "nothing", "--shard", "1/2")
    assert none.returncode == 5  # nothing selected at all is still exit 5


def test_merge_refuses_records_of_other_agents_in_one_line(work: Path) -> None:
    for i, spec in ((1, "shard_agent:agent"), (2, "shard_agent:other")):
        evaldsl(work, "run", "suites", "--agent", spec, "--shard", f"{i}/2", "--json", f"s{i}.json", "-q")
    proc = evaldsl(work, "merge", "s1.json", "s2.json", "-o", "m.json")
    assert proc.returncode == 4
    assert proc.stderr.strip() == ("evaldsl merge: the records are not of one run: different agents "
                                   "(s1.json: 'agent', s2.json: 'other')")
    assert not (work / "m.json").exists()
    missing = evaldsl(work, "merge", "s1.json", "nope.json", "-o", "m.json")
    assert missing.returncode == 4 and "cannot read record nope.json" in missing.stderr


def test_a_shard_resumes_only_with_the_same_shard(work: Path) -> None:
    evaldsl(work, "run", "suites", "--agent", "shard_agent:agent", "--shard", "1/2", "--json", "s1.json", "-q")
    other = evaldsl(work, "run", "suites", "--agent", "shard_agent:agent", "--shard", "2/2", "--resume", "s1.json")
    assert other.returncode == 4
    assert "the record is of shard 1/2, this run of 2/2; resume a shard with the same --shard" in other.stderr
    whole = evaldsl(work, "run", "suites", "--agent", "shard_agent:agent", "--resume", "s1.json")
    assert whole.returncode == 4 and "this run of all cases" in whole.stderr
    same = evaldsl(work, "run", "suites", "--agent", "shard_agent:agent", "--shard", "1/2", "--resume", "s1.json")
    assert "6 case(s) done, 0 to run" in same.stderr and same.returncode == 1


def test_executor_ray_refuses_a_model_run_before_any_request(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    proc = evaldsl(work, "run", "suites", "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
                   "--executor", "ray", "--no-cache")
    assert proc.returncode == 4, proc.stderr
    assert "--executor ray runs an --agent or a --harness" in proc.stderr and "Traceback" not in proc.stderr
