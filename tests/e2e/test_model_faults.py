"""Faults on the model path, each reproduced against a hostile scripted server on 127.0.0.1.

A key echoed with JSON ``\\u`` escapes, a password in ``--base-url``, a lone
surrogate in a reply with the cache on, ``usage`` of the wrong types, tool
arguments nested far too deep, a 200 reply that cannot be read, a judge reply
that cannot be read: none may leak a secret, crash the run, lose a case, or be
cached and replayed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from servers._script import RawBody, always, text
from servers._server import ScriptedServer

from evaldsl.cli import main

SUITE = '''suite "Faults"

case "one"
  prompt "say ok"
  expect final text contains "ok"
'''
SENTINEL = "sk-SENTINEL-escaped-0123456789abcdef"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.evl").write_text(SUITE)
    return tmp_path


def raw_reply(content_json: str, usage: str = '{"prompt_tokens": 3, "completion_tokens": 2}') -> RawBody:
    """A chat-completions reply whose message content is ``content_json`` (JSON text, escapes as written)."""
    return RawBody('{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", '
                   f'"message": {{"role": "assistant", "content": {content_json}}}}}], "usage": {usage}}}')


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["run", "f.evl", "--json", "r.json", "-q", *argv])
    out, err = capsys.readouterr()
    return code, out + err


def written(tmp_path: Path) -> list[str]:
    return [p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*") if p.is_file()]


def test_a_key_echoed_with_unicode_escapes_is_written_nowhere(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    escaped = "".join(f"\\u{ord(c):04x}" for c in SENTINEL)
    openai_server.reply = always(raw_reply(f'"ok, your key is {escaped}"'))
    code, out = run(capsys, "--model", "openai:m", "--base-url", openai_server.base_url, "--html", "r.html")
    assert code == 0, out
    files = written(tmp_path)
    assert any("<redacted>" in f for f in files)  # the reply was kept, the key in it replaced
    for shown in [out, *files]:  # record, HTML, .evaldsl/last.json, the cache
        assert SENTINEL not in shown and SENTINEL[-8:] not in shown


def test_a_password_in_the_base_url_is_never_written(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    password = "pw-SENTINEL-0123456789"
    openai_server.reply = always(text("ok"))
    url = openai_server.base_url.replace("http://", f"http://user:{password}@")
    code, out = run(capsys, "--model", "openai:m", "--base-url", url, "--judge", "openai:j",
                    "--judge-base-url", url, "--html", "r.html")
    assert code == 0, out
    meta = json.loads((tmp_path / "r.json").read_text())["meta"]
    assert meta["model"]["base_url"].startswith("http://user:***@127.0.0.1")
    assert meta["judge"]["base_url"].startswith("http://user:***@127.0.0.1")
    for shown in [out, *written(tmp_path)]:
        assert password not in shown


def test_a_lone_surrogate_is_kept_with_a_warning_and_the_cached_rerun_keeps_the_case(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    openai_server.reply = always(raw_reply('"ok \\ud800 done"'))
    for attempt in (1, 2):  # the second run is served from the cache
        code, out = run(capsys, "--model", "openai:m", "--base-url", openai_server.base_url)
        assert code == 0, out
        record = json.loads((tmp_path / "r.json").read_text())
        assert [c["status"] for c in record["cases"]] == ["passed"], attempt
        run_ = record["cases"][0]["runs"][0]
        assert run_["artifacts"]["final_text"] == "ok \\ud800 done"  # visible, not dropped
        assert any("surrogate" in w for w in run_["warnings"])
    assert len(openai_server.requests) == 1


@pytest.mark.parametrize("usage, why", [
    ('{"prompt_tokens": "many", "completion_tokens": 2}', "usage.prompt_tokens"),
    ('{"prompt_tokens": 3, "completion_tokens": -2}', "usage.completion_tokens"),
    ('"lots"', "`usage` is a str"),
])
def test_usage_of_the_wrong_type_is_a_backend_error_never_cached(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path, usage: str, why: str
) -> None:
    openai_server.reply = always(raw_reply('"ok"', usage))
    for _ in (1, 2):
        code, out = run(capsys, "--model", "openai:m", "--base-url", openai_server.base_url)
        assert code == 1 and "TypeError" not in out
        error = json.loads((tmp_path / "r.json").read_text())["cases"][0]["runs"][0]["error"]
        assert "cannot read" in error["message"] and why in error["message"]
        assert error["kind"] == "backend_protocol"
    assert len(openai_server.requests) == 2  # asked again: the unreadable reply was not cached


def test_arguments_nested_far_too_deep_are_a_backend_error(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    body = ('{"choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": '
            '[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": ' + json.dumps(deep)
            + '}}]}}]}')
    openai_server.reply = always(RawBody(body))
    code, out = run(capsys, "--model", "openai:m", "--base-url", openai_server.base_url)
    assert code == 1 and "RecursionError" not in out
    error = json.loads((tmp_path / "r.json").read_text())["cases"][0]["runs"][0]["error"]
    assert "nested too deep" in error["message"]
    run(capsys, "--model", "openai:m", "--base-url", openai_server.base_url)
    assert len(openai_server.requests) == 2


def test_a_200_reply_that_cannot_be_read_is_never_cached(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    openai_server.reply = always(RawBody({"choices": []}))
    for _ in (1, 2):
        code, out = run(capsys, "--model", "openai:m", "--base-url", openai_server.base_url)
        assert code == 1
    assert len(openai_server.requests) == 2
    assert not list((tmp_path / ".evaldsl" / "cache").rglob("*.json"))


def test_an_unreadable_judge_reply_is_never_cached_and_a_readable_one_is(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "f.evl").write_text(SUITE + '  expect judge "says ok"\n')
    verdict = {"reply": "not a verdict"}

    def script(request: dict[str, Any], index: int) -> Any:
        if "grading one run" in json.dumps(request.get("messages")):
            return text(verdict["reply"])
        return text("ok")

    openai_server.reply = script
    judged = ("--model", "openai:m", "--base-url", openai_server.base_url, "--judge", "openai:j")
    for _ in (1, 2):
        code, out = run(capsys, *judged)
        assert code == 1 and "could not be read" in out
        error = json.loads((tmp_path / "r.json").read_text())["cases"][0]["runs"][0]["error"]
        assert error["kind"] == "judge_unreadable"
    judge_calls = [r for r in openai_server.requests if r.json["model"] == "j"]
    assert len(judge_calls) == 4  # each run asked twice (one retry), none served from the cache
    verdict["reply"] = '{"score": 1, "reasoning": "it says ok"}'
    assert run(capsys, *judged)[0] == 0
    before = len(openai_server.requests)
    assert run(capsys, *judged)[0] == 0
    assert len(openai_server.requests) == before  # the readable verdict was cached


def test_a_catastrophic_when_pattern_fails_only_its_run_and_the_loop_goes_on(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from servers._script import call, tool_calls

    (tmp_path / "f.evl").write_text('''suite "Regex"
timeout 20s
tool lookup "Look a word up"
  param q: string
  when <q: matches /^(a+)+$/> returns "found"
  otherwise returns "nothing"

case "hostile"
  prompt "look up the hostile word"
  expect final text contains "done"

case "calm"
  prompt "look up calm"
  expect final text contains "done"
''')

    def script(request: dict[str, Any], index: int) -> Any:
        said = json.dumps(request["messages"])
        if '"role": "tool"' in said:
            return text("done")
        word = "a" * 40 + "!" if "hostile" in said else "calm"
        return tool_calls(call("lookup", {"q": word}))

    openai_server.reply = script
    code, out = run(capsys, "--model", "openai:m", "--base-url", openai_server.base_url, "-j", "2", "--no-cache")
    cases = {c["name"]: c for c in json.loads((tmp_path / "r.json").read_text())["cases"]}
    assert cases["calm"]["status"] == "passed", out
    hostile = cases["hostile"]["runs"][0]
    assert cases["hostile"]["status"] == "error"
    assert "lookup" in hostile["error"]["message"] and "(a+)+" in hostile["error"]["message"]
    assert "took longer than" in hostile["error"]["message"] and hostile["error"]["kind"] == "regex_timeout"
    assert hostile["artifacts"]["transcript"]  # what the run did before is kept
