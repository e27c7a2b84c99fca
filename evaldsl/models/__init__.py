"""Model-driven runs: backends over HTTP (aiohttp), the mock-tool loop, the LLM judge, the response cache."""
