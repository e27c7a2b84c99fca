"""The practical limit of a model run, as its own process: COUNT chat requests, JOBS in flight, aiohttp.

    python bench/bare_model_loop.py BASE_URL [COUNT] [JOBS]     (bench_models.py runs it)
"""

import asyncio
import sys

import aiohttp

BODY = {"model": "bench", "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
        "tools": [{"type": "function", "function": {
            "name": "get_weather", "description": "Current weather of a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]}


async def main(url: str, count: int, jobs: int) -> None:
    gate = asyncio.Semaphore(jobs)
    async with aiohttp.ClientSession() as session:

        async def one() -> int:
            async with gate, session.post(url + "/chat/completions", json=BODY) as response:
                return len((await response.json())["choices"][0]["message"]["tool_calls"])

        calls = sum(await asyncio.gather(*(one() for _ in range(count))))
    assert calls == count, f"{calls} tool calls for {count} requests"


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1000,
                     int(sys.argv[3]) if len(sys.argv) > 3 else 50))
