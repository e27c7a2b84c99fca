"""The floor under evaldsl's runner: a bare asyncio loop over N cases of bench_run.py's suite.

It calls the same agent as `run --agent _instant_agents:InstantAsync`, checks the cases' five
expectations by hand and writes one JSON line a case, JOBS runs at once (bench_overhead.py):

    python bench/bare_run_loop.py N OUT.jsonl [JOBS]
"""

import asyncio
import json
import re
import sys

from _instant_agents import InstantAsync

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def check(artifacts, a: int, total: int) -> list[bool]:
    calls = artifacts.tool_calls
    numbers = NUMBER.findall(artifacts.final_text or "")
    return [
        any(c.name == "calculator" and c.args == {"op": "add", "a": a, "b": 2} for c in calls),
        bool(calls) and all(c.name == "calculator" for c in calls),
        bool(numbers) and float(numbers[-1]) == total,
        "answer" in (artifacts.final_text or "").lower(),
        artifacts.error is None,
    ]


async def main(count: int, out: str, jobs: int) -> None:
    agent, gate = InstantAsync(), asyncio.Semaphore(jobs)
    with open(out, "w", encoding="utf-8") as handle:

        async def one(i: int) -> None:
            async with gate:
                artifacts = await agent.run(f"What is {i} + 2?")
            results = check(artifacts, i, i + 2)
            handle.write(json.dumps({"name": f"case {i}", "passed": all(results), "results": results}) + "\n")

        await asyncio.gather(*(one(i) for i in range(count)))


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 8))
