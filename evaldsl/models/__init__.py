"""Model-driven runs: backends over httpx, the mock-tool loop, the LLM judge, the response cache."""
