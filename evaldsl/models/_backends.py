"""`make_backend`: a ``provider:MODEL`` spec to a ready `ChatBackend`.

The one place that knows the providers, so the CLI, the pytest plugin and
user code name a model the same way (``openai:gpt-4o-mini``,
``anthropic:claude-sonnet-4-5``, ``openai:llama3.1:8b`` against Ollama: the
model is everything after the first colon).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._cache import ResponseCache
    from ._retry import RetryPolicy
    from ._transport import SharedClient

PROVIDERS: dict[str, tuple[str, str]] = {"openai": ("._openai", "OpenAIBackend"),
                                         "anthropic": ("._anthropic", "AnthropicBackend"),
                                         "demo": ("._demo", "DemoBackend")}
"""Each provider's backend class, as (module, name): a run imports only the one it names. ``demo`` is
offline and rule-based (`_demo`): the simulated customer of suites/examples/shop."""


def parse_spec(spec: str) -> tuple[str, str]:
    """(provider, model) of ``provider:MODEL``; ValueError with a one-line message otherwise."""
    provider, sep, model = spec.partition(":")
    known = ", ".join(f"{name}:MODEL" for name in PROVIDERS)
    if not sep or not model.strip() or provider not in PROVIDERS:
        what = f"unknown provider {provider!r}" if sep and provider not in PROVIDERS else "expected provider:MODEL"
        raise ValueError(f"bad model {spec!r}: {what}; use one of {known}")
    return provider, model


def make_backend(
    spec: str,
    *,
    base_url: str | None = None,
    cache: ResponseCache | None = None,
    retry: RetryPolicy | None = None,
    client: SharedClient | None = None,
) -> Any:
    """The backend a spec names (an `HttpBackend`, or the offline `DemoBackend`); its ``label`` is the spec.

    Args:
        spec: ``openai:MODEL``, ``anthropic:MODEL`` or ``demo:customer`` (offline, rule-based).
        base_url: the API's base URL; default from the provider's env var, then its public URL.
        cache: where replies are kept (None: no cache).
        retry: retry policy (default `RetryPolicy()`).
        client: share one HTTP client between backends of a run (default: a client of its own).

    Raises:
        ValueError: the spec names no known provider or no model.
    """
    provider, model = parse_spec(spec)
    module, name = PROVIDERS[provider]
    backend_class = getattr(importlib.import_module(module, __package__), name)
    backend = backend_class(model, base_url=base_url, cache=cache, retry=retry, client=client)
    backend.label = spec
    return backend
