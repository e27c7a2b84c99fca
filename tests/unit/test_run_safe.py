

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
