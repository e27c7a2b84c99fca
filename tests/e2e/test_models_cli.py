"""`evaldsl run --model` end to end, against the scripted OpenAI and Anthropic servers on loopback.

Runs the CLI in-process (`evaldsl.cli.main`) in a temporary directory, with
the provider environment variables cleared so that a developer's keys or
base URL can never leak in. Covers: the loop over HTTP, several models and
the comparison table, the cache (a second run sends nothing; `repeat 3`
makes three calls), the judge (`--judge` on another provider, and for an
`--agent` run), a backend error that fails one case only, `--resume` with
another model, usage errors, the system-prompt warning, the pytest plugin.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from servers._script import always, call, sequence, text, tool_calls, tool_then_text
from servers._server import ScriptedServer

import evaldsl.models._backends
import evaldsl.models._http
import evaldsl.models._judge
import evaldsl.models._loop  # noqa: F401 (imported here once: pytester's inner runs then reuse them)
from evaldsl.cli import main

SUITE = '''suite "Weather"
system "Be brief."
tool weather "The weather in a city"
  param city: string
  when <city: "Paris"> returns "sunny"
  otherwise fails "unknown city"

case "paris"
  prompt "weather in Paris?"
  expect called weather with <city: "Paris">
  expect final text contains "sunny"
'''
JUDGED = SUITE + '''  expect judge "mentions the weather" at least 0.8
'''


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.evl").write_text(SUITE)
    return tmp_path


def weather_script(judge_reply: str = '{"score": 0.9, "reasoning": "says sunny"}') -> Any:
    loop = tool_then_text("weather", {"city": "Paris"}, "It is sunny.")

    def script(request: dict[str, Any], index: int) -> Any:
        if "grading one run" in json.dumps(request.get("messages")):
            return text(judge_reply)
        return loop(request, index)

    return script


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv, "-q"])
    out, err = capsys.readouterr()
    return code, out, err


def test_several_models_one_record_each_and_a_comparison(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    openai_server.reply = weather_script()
    code, out, err = run(capsys, "w.evl", "--model", "openai:small", "--model", "openai:large",
                         "--base-url", openai_server.base_url, "--out", "recs", "--temperature", "0.3",
                         "--max-tokens", "64", "--seed", "3")
    assert code == 0, out + err
    assert {r.json["model"] for r in openai_server.requests} == {"small", "large"}
    assert all((r.json["temperature"], r.json["max_tokens"], r.json["seed"]) == (0.3, 64, 3)
               for r in openai_server.requests)
    first, second = out.index(" model openai:small (1 of 2) "), out.index(" model openai:large (2 of 2) ")
    assert first < second < out.index("models compared")  # each model's block is headed by its name
    table = out[out.index("models compared"):].splitlines()
    assert table[1].split() == ["model", "accuracy", "score", "passed", "failed", "errors", "p50", "p95",
                                "tokens", "cached"]
    assert table[2].split()[:6] == ["openai:small", "100.0%", "1.00", "1", "0", "0"]
    assert table[3].split()[0] == "openai:large" and table[3].split()[-1] == "0/2"
    records = sorted((tmp_path / "recs").glob("*.json"))
    assert [p.name.split("_2")[0] for p in records] == ["openai_large", "openai_small"]
    meta = json.loads(records[1].read_text())["meta"]
    assert meta["backend"] == "model" and meta["agent"] == "openai:small"
    assert meta["model"] == {"provider": "openai", "model": "small", "base_url": openai_server.base_url,
                             "sampling": {"temperature": 0.3, "max_tokens": 64, "seed": 3}}
    assert meta["cache"]["misses"] == 2


def test_the_cache_serves_a_second_run_and_repeats_are_distinct_calls(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "w.evl").write_text(SUITE.replace('case "paris"\n', 'case "paris"\n  repeat 3\n'))
    openai_server.reply = weather_script()
    argv = ("w.evl", "--model", "openai:m", "--base-url", openai_server.base_url)
    code, out, _ = run(capsys, *argv)
    assert code == 0 and len(openai_server.requests) == 6  # 3 runs x 2 turns, none shared
    assert "cache: 0 of 6 model call(s) served from .evaldsl/cache" in out
    code, out, _ = run(capsys, *argv)
    assert code == 0 and len(openai_server.requests) == 6  # nothing new reached the server
    assert "cache: 6 of 6 model call(s) served from .evaldsl/cache" in out
    code, out, _ = run(capsys, *argv, "--no-cache")
    assert code == 0 and len(openai_server.requests) == 12 and "cache off" in out


def test_a_judge_on_another_provider_grades_with_reasoning_in_the_record(
    openai_server: ScriptedServer, anthropic_server: ScriptedServer,
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "w.evl").write_text(JUDGED)
    openai_server.reply = weather_script()
    anthropic_server.reply = always(text('{"score": 0.5, "reasoning": "Too curt."}'))
    code, out, _ = run(capsys, "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url,
                       "--judge", "anthropic:judge", "--judge-base-url", anthropic_server.base_url,
                       "--json", "r.json", "--no-cache")
    assert code == 1, out
    assert len(anthropic_server.requests) == 1 and anthropic_server.requests[0].json["temperature"] == 0
    assert "judge scored 0.50, below 0.8" in out and "Too curt." in out
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["meta"]["judge"]["provider"] == "anthropic"
    assert record["cases"][0]["runs"][0]["expectations"][2]["detail"].endswith("reasoning: Too curt.")


def test_an_agent_run_can_name_a_judge(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "ctx_agent.py").write_text(
        "from evaldsl import RunArtifacts\n"
        "def agent(prompt, ctx):\n"
        "    answer = ctx.call('weather', {'city': 'Paris'})\n"
        "    return RunArtifacts(final_text=f'It is {answer.text}.')\n")
    (tmp_path / "w.evl").write_text(JUDGED)
    openai_server.reply = weather_script()
    code, out, err = run(capsys, "w.evl", "--agent", "ctx_agent:agent", "--judge", "openai:judge",
                         "--base-url", openai_server.base_url)
    assert code == 0, out + err
    assert [r.json["model"] for r in openai_server.requests] == ["judge"]
    assert "warning" not in err


def test_a_backend_error_fails_that_run_and_the_others_go_on(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "w.evl").write_text(SUITE + '\ncase "hello"\n  prompt "hi"\n  expect final text contains "hello"\n')
    from servers._script import HttpError

    def script(request: dict[str, Any], index: int) -> Any:
        if "weather" in json.dumps(request["messages"]):
            return HttpError(400, {"error": {"message": "bad request here", "type": "invalid_request_error"}})
        return text("hello there")

    openai_server.reply = script
    code, out, _ = run(capsys, "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url, "--no-cache")
    assert code == 1
    assert "1 passed" in out and "1 error" in out
    assert "HTTP 400" in out and "bad request here" in out


def test_single_turn_and_max_turns_over_http(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "w.evl").write_text(SUITE.replace('case "paris"\n', 'case "paris"\n  max turns 2\n')
                                    + 'case "pick"\n  mode single-turn\n  prompt "which tool?"\n'
                                      '  expect first call weather with <city: "Paris">\n')
    openai_server.reply = always(tool_calls(call("weather", {"city": "Paris"})))
    code, out, _ = run(capsys, "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url,
                       "--json", "r.json", "--no-cache")
    assert code == 1 and len(openai_server.requests) == 3  # 2 turns + 1 single turn
    cases = {c["name"]: c for c in json.loads((tmp_path / "r.json").read_text())["cases"]}
    assert cases["pick"]["status"] == "passed"
    assert "max turns reached" in cases["paris"]["runs"][0]["error"]["message"]
    assert len(cases["paris"]["runs"][0]["artifacts"]["tool_calls"]) == 2


def test_resume_is_refused_for_another_model(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    openai_server.reply = weather_script()
    assert run(capsys, "w.evl", "--model", "openai:a", "--base-url", openai_server.base_url, "--json", "r.json")[0] == 0
    code, _, err = run(capsys, "w.evl", "--model", "openai:b", "--base-url", openai_server.base_url,
                       "--resume", "r.json")
    assert code == 4 and "'openai:a', not 'openai:b'" in err
    code, _, err = run(capsys, "w.evl", "--model", "openai:a", "--base-url", openai_server.base_url,
                       "--resume", "r.json")
    assert code == 0 and "1 case(s) done, 0 to run" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["--model", "openai:a", "--model", "openai:b", "--json", "x.json"], "--json holds one record"),
    (["--model", "openai:a", "--model", "openai:b", "--html", "x.html"], "--html holds one run"),
    (["--model", "openai:a", "--model", "openai:b", "--junit-xml", "x.xml"], "--junit-xml holds one run"),
    (["--model", "openai:a", "--model", "openai:b", "--markdown", "x.md"], "--markdown holds one run"),
    (["--model", "openai:a", "--agent", "x:y"], "not allowed with argument"),
    (["--model", "gpt-4o"], "bad model 'gpt-4o'"),
    (["--model", "openai:a", "--model", "anthropic:b", "--base-url", "http://127.0.0.1:9/v1"],
     "--base-url is one endpoint"),
    (["--agent", "evaldsl.demo:agent", "--temperature", "0"], "--temperature applies to a model run"),
    (["--model", "openai:a", "--judge-template", "missing.j2"], "cannot read judge template"),
    (["--model", "openai:a", "--base-url", "localhost:11434"], "bad base URL 'localhost:11434"),
])
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "w.evl", *argv)
    assert code == 4 and message in err


def test_a_one_argument_agent_is_warned_about_the_system_prompt(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "french_agent.py").write_text(
        "from evaldsl import RunArtifacts\ndef agent(prompt):\n    return RunArtifacts(final_text='Bonjour')\n")
    (tmp_path / "fr.evl").write_text('suite "French"\nsystem "Always answer in French."\n'
                                     'case "greets"\n  prompt "say hello"\n  expect final text contains "Bonjour"\n')
    code, _, err = run(capsys, "fr.evl", "--agent", "french_agent:agent")
    assert code == 0
    assert err.count("warning") == 1
    assert "suite 'French' sets `system` (case 'greets')" in err and "agent 'agent'" in err
    code = main(["check", "fr.evl", "--agent", "french_agent:agent"])
    _, err = capsys.readouterr()
    assert code == 0 and "sets `system`" in err and "1 warning(s)" in err
    assert main(["check", "fr.evl", "--agent", "french_agent:agent", "--strict"]) == 1
    capsys.readouterr()
    assert main(["check", "fr.evl"]) == 0
    assert "sets `system`" not in capsys.readouterr().err


def test_the_anthropic_backend_runs_the_loop(
    anthropic_server: ScriptedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    anthropic_server.reply = sequence(tool_calls(call("weather", {"city": "Paris"})), text("It is sunny."))
    code, out, err = run(capsys, "w.evl", "--model", "anthropic:claude", "--base-url", anthropic_server.base_url,
                         "--no-cache")
    assert code == 0, out + err
    second = anthropic_server.requests[1].json
    assert second["system"] == "Be brief." if isinstance(second.get("system"), str) else True
    assert any(b.get("type") == "tool_result" for m in second["messages"] if isinstance(m["content"], list)
               for b in m["content"])


def test_the_pytest_plugin_runs_a_model_and_its_judge(
    pytester: pytest.Pytester, openai_server: ScriptedServer
) -> None:
    openai_server.reply = weather_script()
    pytester.makefile(".evl", weather=JUDGED)
    result = pytester.runpytest("-p", "no:cacheprovider", "--evl-model", "openai:m",
                                "--evl-base-url", openai_server.base_url, "-q")
    result.assert_outcomes(passed=1)
    assert {r.json["model"] for r in openai_server.requests} == {"m"}
    assert len(openai_server.requests) == 3  # two turns and the judge
    openai_server.reset(always(text('{"score": 0.1, "reasoning": "no"}')))
    result = pytester.runpytest("-p", "no:cacheprovider", "--evl-model", "openai:m", "--evl-judge", "openai:j",
                                "--evl-base-url", openai_server.base_url, "-q")
    result.assert_outcomes(failed=1)  # the model's replies come from the cache; only the judge is asked
    assert [r.json["model"] for r in openai_server.requests] == ["j"]


def test_the_key_reaches_the_server_and_nothing_else(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    from _receiver import Reply, receiver

    sentinel = "sk-SENTINEL-modelrun-0123456789"
    upload_token, url_token = "up-SENTINEL-0123456789", "q-SENTINEL-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", sentinel)
    monkeypatch.setenv("EVALDSL_UPLOAD_TOKEN", upload_token)
    openai_server.reply = weather_script()
    (tmp_path / "w.evl").write_text(JUDGED)
    with receiver(Reply(201)) as server:
        upload = server.url + f"?token={url_token}#{url_token}"
        argv = ["run", "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url,
                "--json", "r.json", "--html", "report.html", "--junit-xml", "junit.xml", "--markdown", "s.md",
                f"--upload={upload}"]
        monkeypatch.setattr("sys.argv", ["evaldsl", *argv])
        code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert all(r.sent_secret("authorization", f"Bearer {sentinel}") for r in openai_server.requests)
    assert server.received[0].headers["authorization"] == f"Bearer {upload_token}"  # sent where it was named
    written = {p.name: p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()}  # cache: binary
    assert {"r.json", "report.html", "junit.xml", "s.md"} <= set(written)
    for secret in (sentinel, upload_token, url_token):  # no key, token or URL credential kept or shown
        assert not any(secret in text for text in [out, err, *written.values()]), secret
    command = json.loads(written["r.json"])["meta"]["command"]
    assert f"--upload={server.url}" in command and "--base-url " + openai_server.base_url in command


def test_a_slow_endpoint_is_a_backend_error_within_the_case_timeout_with_the_transcript_kept(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from servers._script import Delay

    (tmp_path / "w.evl").write_text(SUITE.replace('case "paris"\n', 'case "paris"\n  timeout 1s\n'))
    openai_server.reply = sequence(tool_calls(call("weather", {"city": "Paris"})), Delay(30, text("late")))
    code, out, _ = run(capsys, "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url,
                       "--json", "r.json", "--no-cache")
    assert code == 1
    run_ = json.loads((tmp_path / "r.json").read_text())["cases"][0]["runs"][0]
    assert run_["error"]["type"] == "AgentError" and "timed out" in run_["error"]["message"]
    assert run_["artifacts"]["tool_calls"][0]["result"] == "sunny"  # the first turn is kept


def test_an_endpoint_lost_half_way_keeps_the_finished_cases_and_resume_finishes_the_rest(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    from servers._script import Drop

    from evaldsl.models._retry import RetryPolicy

    monkeypatch.setattr(evaldsl.models._http, "RetryPolicy", lambda: RetryPolicy(attempts=2, base_delay_s=0.001))
    (tmp_path / "w.evl").write_text('suite "Lost"\n' + "".join(
        f'case "c{i}"\n  prompt "say ok {i}"\n  expect final text contains "ok"\n' for i in range(4)))
    openai_server.reply = lambda request, index: text("ok") if index == 0 else Drop()  # gone after one reply
    code, out, _ = run(capsys, "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url,
                       "-j", "1", "--json", "r.json", "--no-cache")
    assert code == 1 and "1 passed" in out and "3 error" in out
    cases = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert [c["status"] for c in cases] == ["passed", "error", "error", "error"]
    assert "connection error" in cases[1]["runs"][0]["error"]["message"]
    assert cases[1]["runs"][0]["error"]["kind"] == "backend_connection"
    assert cases[0]["runs"][0]["error"] is None
    openai_server.reset(always(text("ok")))  # the endpoint is back
    code, out, err = run(capsys, "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url,
                         "--resume", "r.json", "--no-cache")
    assert code == 0, out + err
    assert "1 case(s) done, 3 to run" in err and len(openai_server.requests) == 3
    record = json.loads((tmp_path / "r.json").read_text())
    assert [c["status"] for c in record["cases"]] == ["passed"] * 4 and record["meta"]["complete"]
    code, _, err = run(capsys, "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url,
                       "--resume", "r.json", "--no-cache")
    assert code == 0 and "4 case(s) done, 0 to run" in err


def test_resume_goes_by_the_error_kind_and_reads_a_version_1_record_by_its_message(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    from servers._script import Drop, HttpError

    from evaldsl.models._retry import RetryPolicy

    monkeypatch.setattr(evaldsl.models._http, "RetryPolicy", lambda: RetryPolicy(attempts=2, base_delay_s=0.001))
    (tmp_path / "w.evl").write_text('suite "Kinds"\n' + "".join(
        f'case "c{i}"\n  prompt "say ok {i}"\n  expect final text contains "ok"\n' for i in range(3)))

    def script(request: dict[str, Any], index: int) -> Any:
        said = json.dumps(request["messages"])
        if "ok 0" in said:  # a message that looks like a lost endpoint, but a 400 is not one
            return HttpError(400, {"error": {"message": "bad request (after 2 attempts)"}})
        return Drop() if "ok 1" in said else text("ok")

    openai_server.reply = script
    run(capsys, "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url, "--json", "r.json", "--no-cache")
    record = json.loads((tmp_path / "r.json").read_text())
    assert [c["runs"][0]["error"] and c["runs"][0]["error"]["kind"] for c in record["cases"]] == [
        "backend_http", "backend_connection", None]
    openai_server.reset(always(text("ok")))
    code, _, err = run(capsys, "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url,
                       "--resume", "r.json", "--no-cache")
    assert "2 case(s) done, 1 to run" in err  # only the unreached case runs again, by its kind
    # the same record as version 1 wrote it: no kinds; its messages are all there is to go by
    record["schema_version"] = 1
    for case in record["cases"]:
        for run_ in case["runs"]:
            if run_["error"]:
                del run_["error"]["kind"]
            if run_["artifacts"]:
                del run_["artifacts"]["error_kind"]
    record["cases"][1]["status"] = "error"
    record["cases"][1]["runs"][0]["error"] = {"type": "AgentError", "message":
                                              "openai:m: connection error (refused) (after 2 attempts)"}
    (tmp_path / "r.json").write_text(json.dumps(record))
    code, _, err = run(capsys, "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url,
                       "--resume", "r.json", "--no-cache")
    assert "1 case(s) done, 2 to run" in err  # by message: c0's text matches too, as it did then


def test_an_endpoint_that_refuses_from_the_start_stops_the_run_with_one_message(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import socket

    with socket.socket() as sock:  # a port that nothing listens on: bound, never listened, then closed
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    (tmp_path / "w.evl").write_text('suite "Dead"\n' + "".join(
        f'case "c{i}"\n  prompt "say ok {i}"\n  expect final text contains "ok"\n  expect final number is {i}\n'
        for i in range(40)))
    code, out, err = run(capsys, "w.evl", "--model", "openai:m", "--base-url", dead, "-j", "2",
                         "--json", "r.json", "--no-cache")
    assert code == 2
    assert err.count("the endpoint is down") == 1 and f"{dead}/chat/completions refused the connection" in err
    assert "Check --base-url" in err and f"--base-url {dead} -j 2 --no-cache -q --resume r.json" in err
    assert "(after" not in out  # refused before it ever answered: not retried
    assert "x expect" not in out  # one error a case, not one more per expectation
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["meta"]["complete"] is False and 0 < len(record["cases"]) <= 4
    assert {c["runs"][0]["error"]["kind"] for c in record["cases"]} == {"backend_connection"}
    openai_server.reply = always(text("ok 1"))
    code, out, err = run(capsys, "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url,
                         "--resume", "r.json", "--no-cache")
    assert "0 case(s) done, 40 to run" in err  # the refused ones run again, with the rest
    assert len(json.loads((tmp_path / "r.json").read_text())["cases"]) == 40


def test_the_key_never_shows_on_error_paths_in_records_output_or_logs(
    openai_server: ScriptedServer, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from servers._script import Drop, HttpError

    from evaldsl.models._retry import RetryPolicy

    sentinel = "sk-SENTINEL-errors-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", sentinel)
    monkeypatch.setattr(evaldsl.models._http, "RetryPolicy", lambda: RetryPolicy(attempts=2, base_delay_s=0.001))
    caplog.set_level(logging.DEBUG)
    (tmp_path / "w.evl").write_text(JUDGED + '\ncase "drop"\n  prompt "drop me"\n  expect final text contains "x"\n'
                                    '\ncase "echo"\n  prompt "echo me"\n  expect final text contains "x"\n')

    def script(request: dict[str, Any], index: int) -> Any:
        said = json.dumps(request["messages"])
        if "drop me" in said:
            return Drop()
        if "echo me" in said:  # OpenAI's 401 echoes the key's end; an odd proxy might echo all of it
            return HttpError(401, {"error": {"message": f"Incorrect API key provided: {sentinel} (...{sentinel[-8:]})",
                                             "type": "invalid_request_error"}})
        if "grading one run" in said:
            return text(f"not a verdict {sentinel}")
        return weather_script()(request, index)

    openai_server.reply = script
    code, out, err = run(capsys, "w.evl", "--model", "openai:m", "--base-url", openai_server.base_url,
                         "--json", "r.json", "--out", "recs", "--junit-xml", "j.xml", "--no-cache")
    assert code == 1
    assert "HTTP 401" in out and "connection error" in out and "judge" in out
    assert all(r.sent_secret("authorization", f"Bearer {sentinel}") for r in openai_server.requests)
    written = [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".py"]
    logged = [r.getMessage() + str(r.args) for r in caplog.records]
    for shown in [out, err, *written, *logged]:
        assert sentinel not in shown and sentinel[-8:] not in shown


def test_a_model_run_sends_through_aiohttp_and_never_imports_httpx(
    openai_server: ScriptedServer, tmp_path: Path
) -> None:
    import subprocess
    import sys

    openai_server.reply = weather_script()
    program = (
        "import sys\nfrom evaldsl.cli import main\n"
        f"code = main(['run', 'w.evl', '--model', 'openai:m', '--base-url', {openai_server.base_url!r}, '-q'])\n"
        "print(code, sorted(m for m in ('aiohttp', 'httpx') if m in sys.modules))\n"
    )
    root = str(Path(evaldsl.models._http.__file__).parents[2])
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": root}, timeout=120)
    assert done.stdout.splitlines()[-1] == "0 ['aiohttp']", done.stdout + done.stderr
    assert len(openai_server.requests) == 2


def test_an_interrupted_run_of_several_models_resumes_from_the_printed_command(
    openai_server: ScriptedServer, tmp_path: Path
) -> None:
    import os
    import shlex
    import signal
    import subprocess
    import sys
    import time

    from servers._script import Delay

    (tmp_path / "long.evl").write_text('suite "Long"\n' + "".join(
        f'case "c{i}"\n  prompt "say ok {i}"\n  expect final text contains "ok"\n' for i in range(3)))
    held = {"on": True}

    def script(request: dict[str, Any], index: int) -> Any:
        if held["on"] and request["model"] == "a" and "ok 1" in json.dumps(request["messages"]):
            return Delay(60, text("ok"))
        return text("ok")

    openai_server.reply = script
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    argv = ["run", "long.evl", "--model", "openai:a", "--model", "openai:b", "--base-url",
            openai_server.base_url, "--out", "runs", "-j", "1", "--no-cache"]
    proc = subprocess.Popen([sys.executable, "-m", "evaldsl", *argv], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(openai_server.requests) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, out + err
    hint = "finish it with: "
    command = out[out.index(hint) + len(hint):].splitlines()[0]
    assert command.endswith("--resume runs") and "--out" not in command
    held["on"] = False
    done = subprocess.run([sys.executable, "-m", "evaldsl", *shlex.split(command)[1:]], cwd=tmp_path, env=env,
                          text=True, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "models compared" in done.stdout
    records = [json.loads(p.read_text()) for p in sorted((tmp_path / "runs").glob("*.json"))]
    assert sorted(r["meta"]["agent"] for r in records) == ["openai:a", "openai:b"]
    for record in records:
        assert record["meta"]["complete"] is True and [c["name"] for c in record["cases"]] == ["c0", "c1", "c2"]
    asked = [(r.json["model"], r.json["messages"][-1]["content"]) for r in openai_server.requests]
    assert asked.count(("a", "say ok 0")) == 1  # each case once: c0 of model a was kept, not asked again


def test_a_dead_judge_endpoint_under_a_sync_agent_stops_the_run_cleanly(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket
    import sys

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    (tmp_path / "sync_agent_mod.py").write_text("def agent(prompt):\n    return {'final_text': prompt}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "j.evl").write_text('suite "J"\n' + "".join(
        f'case "c{i}"\n  prompt "x{i}"\n  expect final text contains "x"\n'
        + ('  expect judge "fine"\n' if i % 3 == 0 else "") for i in range(60)))
    code, out, err = run(capsys, "j.evl", "--agent", "sync_agent_mod:agent", "--judge", "openai:j",
                         "--base-url", dead, "--json", "r.json", "--no-cache")
    sys.modules.pop("sync_agent_mod", None)
    assert code in (1, 2)  # 2 when the stop came before the last case, 1 when every case had finished
    assert "Traceback" not in out + err and "never retrieved" not in out + err
    record = json.loads((tmp_path / "r.json").read_text())
    kinds = {r["error"]["kind"] for c in record["cases"] for r in c["runs"] if r["error"]}
    assert kinds <= {"backend_connection", "cancelled"}
    if code == 1:  # every case finished: the judged ones failed on the endpoint
        assert "backend_connection" in kinds
    if code == 2:  # stopped as at Ctrl-C: a judged case in flight then is not recorded (a loaded machine's race)
        assert err.count("the endpoint is down") == 1 and record["meta"]["complete"] is False


def test_a_model_run_compiled_ahead_in_a_second_process_is_the_run_compiled_in_its_own(
    openai_server: ScriptedServer, tmp_path: Path
) -> None:
    """The command line as a user runs it (a process of its own, one thread: `plan/_ahead.py` forks a child
    that compiles), against the same run with ``EVALDSL_COMPILE_AHEAD=off``: the same record, the same
    errors for a file that does not compile, and the same suite cache entries written."""
    import os
    import subprocess
    import sys

    openai_server.reply = weather_script()
    (tmp_path / "bad.evl").write_text('case "x"\n  prompt "hi"\n  expect final text contains\n')
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "EVALDSL_COMPILE_AHEAD"}
    env["PYTHONPATH"] = str(root)

    def cli(*argv: str, off: bool) -> subprocess.CompletedProcess[str]:
        switch = {"EVALDSL_COMPILE_AHEAD": "off"} if off else {}
        return subprocess.run([sys.executable, "-m", "evaldsl", "run", *argv, "--model", "openai:m", "--base-url",
                               openai_server.base_url, "--no-cache", "-q"], capture_output=True, text=True,
                              cwd=tmp_path, timeout=120, env={**env, **switch})

    records = []
    for off in (False, True):
        done = cli("w.evl", "--json", f"r{off}.json", "--suite-cache-dir", f"cache{off}", off=off)
        assert done.returncode == 0, done.stderr
        record = json.loads((tmp_path / f"r{off}.json").read_text())
        calls = [[[(t["name"], t["args"]) for t in r["artifacts"]["tool_calls"]] for r in c["runs"]]
                 for c in record["cases"]]
        records.append((record["meta"]["suite_version"], [(c["name"], c["status"]) for c in record["cases"]], calls))
    assert records[0] == records[1] and records[0][1] == [("paris", "passed")]
    assert len(list((tmp_path / "cacheFalse" / "suites").glob("*.bin"))) == 1  # the suite cache as usual
    broken = [cli("bad.evl", off=off) for off in (False, True)]
    assert [b.returncode for b in broken] == [4, 4] and broken[0].stderr == broken[1].stderr
    assert "E100" in broken[0].stderr
