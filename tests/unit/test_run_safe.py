

def test_what_an_agent_changes_after_its_run_ended_changes_nothing_in_that_run() -> None:
    from evaldsl import RunArtifacts, ToolCall, compile, parse, run_suite

    class Agent:  # keeps one list of calls and one transcript across runs, and returns them each time
        def __init__(self) -> None:
            self.calls: list[ToolCall] = []
            self.transcript: list[dict[str, object]] = []

        def run(self, prompt: str) -> RunArtifacts:
            self.calls.append(ToolCall(name="search", args={"q": prompt, "seen": []}))
            self.transcript.append({"role": "user", "content": prompt})
            art = RunArtifacts(tool_calls=self.calls, transcript=self.transcript, final_text=prompt)
            return art

    suite = compile(parse('case "a"\n  prompt "one"\n  repeat 3\n  expect called search\n'))
    agent = Agent()
    report = run_suite(agent, suite, concurrency=1)
    agent.calls[0].args["seen"].append("later")  # after the run: must not reach the record
    runs = report.cases[0].runs
    assert [len(r.artifacts.tool_calls) for r in runs] == [1, 2, 3]
    assert [len(r.artifacts.transcript) for r in runs] == [1, 2, 3]
    assert runs[0].artifacts.tool_calls[0].args == {"q": "one", "seen": []}


def test_arguments_given_as_json_text_are_decoded_once_and_other_text_kept() -> None:
    from evaldsl import RunArtifacts, ToolCall
    from evaldsl.run._safe import make_safe

    art = RunArtifacts(final_text="ok", tool_calls=[
        ToolCall(name="a", args='{"q": "paris", "n": 2}'), ToolCall(name="b", args="q=paris"),
        ToolCall(name="c", args="[1, 2]"), ToolCall(name="d", args={"q": "x"})])
    safe, _ = make_safe(art)
    assert [c.args for c in safe.tool_calls] == [{"q": "paris", "n": 2}, "q=paris", "[1, 2]", {"q": "x"}]
    odd = RunArtifacts(final_text="\ud800", tool_calls=[ToolCall(name="a", args='{"q": 1}')])  # the slow path
    assert make_safe(odd)[0].tool_calls[0].args == {"q": 1}
