"""A run's models: the model under test (``--model``), the judge, the simulated user and the reply cache.

`make_backend` builds the endpoints, `ModelAgent`, `LLMJudge` and `SimulatedUser` do the work; this
module only decides which to build from `ModelOptions` (`run` and `rescore` share it). `run_request`
calls `model_setup` once per ``--model`` value (and once for an agent or harness run, which may name
a judge).

Choices written down (docs/models.md):

- ``--base-url`` is the endpoint of every ``--model`` (they must then share
  a provider) and of the judge, unless ``--judge-base-url`` names the
  judge's own; without it, each provider's environment variable or public URL.
- ``--judge`` defaults to the model under test; an agent or harness run has
  no judge unless ``--judge`` names one.
- One `ResponseCache` per model run, shared by its model and its judge, so
  the summary line counts every call the cache served in that run.
- Several ``--model`` values: one record per model under ``--out``;
  ``--json``, ``--resume`` and ``--model-name`` hold one record or name, and
  ``--html``, ``--junit-xml`` and ``--markdown`` one run, so they are usage
  errors with several models (`evaldsl report` renders the records of ``--out``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._request import ModelOptions, PlanUsage, RunRequest


@dataclass
class ModelSetup:
    """What one run needs beyond an agent: its model (if any), judge, cache and what to close."""

    agent: Any = None
    """The `ModelAgent`, or None for an agent or harness run."""
    judge: Any = None
    user: Any = None
    """The `SimulatedUser` (``--user-model``), or None."""
    cache: Any = None
    meta: dict[str, Any] = field(default_factory=dict)
    """Extra `RunMeta` fields: model, judge."""
    backends: list[Any] = field(default_factory=list)

    async def aclose(self) -> None:
        for backend in self.backends:
            await backend.aclose()

    def down(self) -> str | None:
        """Why the run's model (or judge) endpoint is down, when one refused every connection before
        it ever answered; None while every endpoint may yet answer."""
        return next((b.down for b in self.backends if getattr(b, "down", None)), None)

    def cache_note(self) -> str | None:
        """The summary's line about the cache; None when nothing could use it."""
        if not [b for b in self.backends if not getattr(b, "offline", False)]:
            return None
        if self.cache is None:
            return "cache off (--no-cache): every model call was sent"
        hits, total = self.cache.hits, self.cache.hits + self.cache.misses
        return f"cache: {hits} of {total} model call(s) served from {self.cache.directory}"


def check_model_options(request: RunRequest) -> None:
    """Refuse option combinations that cannot work, before anything is loaded.

    Raises:
        PlanUsage: naming the option and what to do instead.
    """
    m, outputs = request.models, request.outputs
    if len(m.models) > 1:
        resume = request.resume if request.resume and not Path(request.resume).is_dir() else None
        for option, value in (("--json", outputs.json), ("--resume", resume), ("--model-name", request.model_name)):
            if value:
                raise PlanUsage(f"{option} holds one record; with several --model values use --out DIR "
                                "(one record per model; --resume DIR finishes them)")
        for option, value in (("--html", outputs.html), ("--junit-xml", outputs.junit_xml),
                              ("--markdown", outputs.markdown)):
            if value:
                raise PlanUsage(f"{option} holds one run; with several --model values write the records with "
                                f"--out DIR, then `evaldsl report DIR/*.json` (--format html, junit or markdown)")
    for option, value in (("--user-base-url", m.user_base_url), ("--user-template", m.user_template)):
        if value is not None and not m.user_model:
            raise PlanUsage(f"{option} applies to the simulated user's model (--user-model)")
    if not m.models and not m.judge and not m.user_model:
        given = {"--base-url": m.base_url, "--temperature": m.temperature, "--max-tokens": m.max_tokens,
                 "--seed": m.seed, "--judge-template": m.judge_template, "--judge-base-url": m.judge_base_url}
        for option, setting in given.items():
            if setting is not None:
                raise PlanUsage(f"{option} applies to a model run (--model) or a judge (--judge)")
        return
    from ..models._backends import parse_spec

    providers = set()
    for spec in [*m.models, *([m.judge] if m.judge else []), *([m.user_model] if m.user_model else [])]:
        try:
            provider, _ = parse_spec(spec)
        except ValueError as exc:
            raise PlanUsage(str(exc)) from None
        if spec in m.models:
            providers.add(provider)
    if m.base_url and len(providers) > 1:
        raise PlanUsage(f"--base-url is one endpoint, but the models use {len(providers)} providers "
                        f"({', '.join(sorted(providers))}); run them separately, or set each provider's "
                        "base URL in its environment variable")


def model_setup(options: ModelOptions, spec: str | None) -> ModelSetup:
    """The backends of one run: the model ``spec`` (None: an agent run), the judge and the simulated user.

    Raises:
        PlanUsage: a spec or base URL that no request could use, or a bad judge or user template.
    """
    try:
        return _model_setup(options, spec)
    except ValueError as exc:  # make_backend's one-line reasons (a TemplateError is already one)
        raise PlanUsage(str(exc)) from None


def _model_setup(o: ModelOptions, spec: str | None) -> ModelSetup:
    setup = ModelSetup()
    if spec is None and not o.judge and not o.user_model:
        return setup  # an agent run without a judge: no HTTP code is imported
    from ..models._backends import make_backend
    from ..models._cache import DEFAULT_CACHE_DIR, ResponseCache
    from ..models._chat import Sampling
    from ..models._transport import SharedClient

    setup.cache = ResponseCache(o.cache_dir or DEFAULT_CACHE_DIR) if o.cache else None
    client = SharedClient()
    client.import_ahead()  # aiohttp's import on a thread of its own, beside the compile
    if spec is not None:
        from ..models._loop import ModelAgent

        sampling = Sampling(temperature=o.temperature, max_tokens=o.max_tokens, seed=o.seed)
        backend = make_backend(spec, base_url=o.base_url, cache=setup.cache, client=client)
        setup.backends.append(backend)
        setup.agent = ModelAgent(backend, sampling)
        setup.meta["model"] = {**backend.describe(), "sampling": _sampling(sampling)}
    if o.user_model:
        _user_setup(setup, o, spec, client)
    judge_spec = o.judge or spec
    if judge_spec is None:
        return setup  # an agent run with a simulated user and no judge
    base = _helper_base_url(o, spec, judge_spec, o.judge_base_url)
    if judge_spec == spec and base == o.base_url:
        judge_backend = setup.backends[0]
    else:
        judge_backend = make_backend(judge_spec, base_url=base, cache=setup.cache, client=client)
        setup.backends.append(judge_backend)
    setup.judge = _judge(judge_backend, o.judge_template)
    setup.meta["judge"] = {**judge_backend.describe(), "template": o.judge_template}
    return setup


def unreached_dropped(previous: Any, setup: ModelSetup) -> Any:
    """The record ``--resume`` finishes (`report._journal.Unfinished`), without the cases whose
    runs failed because the endpoint could not be reached, nor those that ``-x`` cancelled in flight
    (so they run again); for an agent's run, without the cancelled ones only.

    A run that loses its endpoint half-way records the cases it could not reach as errors
    ("connection error ... (after 5 attempts)"); resuming once the endpoint is back finishes them.
    The cases are read back one at a time, as `Unfinished.results` does.
    """
    if previous is None:
        return previous
    if not setup.backends:  # an agent's run: only the cases -x cancelled in flight run again
        previous.cases = [entry for entry, case in zip(previous.cases, previous.results())
                          if not any(r.error is not None and r.error.kind == "cancelled" for r in case.runs)]
        return previous
    previous.cases = [entry for entry, case in zip(previous.cases, previous.results())
                      if not any(r.error is not None and _unreached(r.error) for r in case.runs)]
    return previous


def _unreached(error: Any) -> bool:
    """A run error that says the endpoint was not reached: by its kind (records of version 2 on);
    a record of version 1 has no kinds, and its message is all there is to go by."""
    if error.kind is not None:
        return error.kind in ("backend_connection", "backend_overloaded", "cancelled")
    from ..models._retry import endpoint_failed

    return endpoint_failed(error.message)


def _judge(backend: Any, template: str | None) -> Any:
    if template is None:
        return _LazyJudge(backend)  # most runs have no `judge` line: jinja2 is never imported
    from ..models._judge import LLMJudge, TemplateError

    try:
        return LLMJudge(backend, template=template)
    except TemplateError as exc:
        raise PlanUsage(f"--judge-template: {exc}") from None


class _LazyJudge:
    """The shipped judge, built on its first call: a run without `expect judge` never pays for jinja2."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self._judge: Any = None
        self._lock = threading.Lock()

    def __reduce__(self) -> Any:  # `--executor ray` sends it to each worker: its backend, and a lock of its own
        return _LazyJudge, (self.backend,)

    def __call__(self, **kwargs: Any) -> Any:
        with self._lock:  # called from worker threads
            if self._judge is None:
                from ..models._judge import LLMJudge

                self._judge = LLMJudge(self.backend)
        return self._judge(**kwargs)


def _user_setup(setup: ModelSetup, o: ModelOptions, spec: str | None, client: Any) -> None:
    """The simulated user's model (``--user-model``), sharing the run's cache and HTTP client."""
    from ..models._backends import make_backend
    from ..models._judge import TemplateError
    from ..models._user import SimulatedUser

    assert o.user_model is not None
    base = _helper_base_url(o, spec, o.user_model, o.user_base_url)
    backend = next((b for b in setup.backends if b.label == o.user_model and base == o.base_url), None)
    if backend is None:
        backend = make_backend(o.user_model, base_url=base, cache=setup.cache, client=client)
        setup.backends.append(backend)
    try:
        setup.user = SimulatedUser(backend, template=o.user_template)
    except TemplateError as exc:
        raise PlanUsage(f"--user-template: {exc}") from None
    setup.meta["user_model"] = {**backend.describe(), "template": o.user_template}


def _helper_base_url(o: ModelOptions, spec: str | None, helper_spec: str, own: str | None) -> str | None:
    """A helper model's base URL (the judge's, the simulated user's): its own option's value (``own``); else
    --base-url when there is no model under test or the helper shares its provider."""
    from ..models._backends import parse_spec

    if own:
        return str(own)
    if spec is None or parse_spec(helper_spec)[0] == parse_spec(spec)[0]:
        return o.base_url
    return None


def _sampling(sampling: Any) -> dict[str, Any]:
    import dataclasses

    return dataclasses.asdict(sampling)
