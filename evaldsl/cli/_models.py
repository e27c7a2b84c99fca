"""`evaldsl run`'s model options: `--model`, the judge, sampling and the cache.

Argument parsing and wiring only: `make_backend` builds the endpoints,
`ModelAgent` and `LLMJudge` do the work. Registered by `_run.py`, which
calls `model_setup` once per `--model` value (and once for an agent or
harness run, which may name a judge).

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

import argparse
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._types import positive_int


class ModelUsage(ValueError):
    """A model option that cannot work: one line, exit 4."""


def add_model_options(p: argparse.ArgumentParser, who: Any) -> None:
    """Add the model options; ``--model`` joins ``who``, the --agent/--harness group."""
    who.add_argument("--model", action="append", metavar="PROVIDER:MODEL",
                     help="drive a model with the suites' mock tools instead of an agent "
                          "(openai:MODEL, anthropic:MODEL; repeatable: one record per model and a comparison)")
    g = p.add_argument_group("model runs")
    g.add_argument("--base-url", metavar="URL",
                   help="the API's base URL (default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL, or the public API)")
    g.add_argument("--temperature", type=float, metavar="T", help="sampling temperature (default: the API's)")
    g.add_argument("--max-tokens", type=positive_int, metavar="N", help="bound on each reply's tokens")
    g.add_argument("--seed", type=int, metavar="N", help="sampling seed, where the API has one")
    g.add_argument("--judge", metavar="PROVIDER:MODEL",
                   help="the model that grades `judge` expectations (default: the model under test)")
    g.add_argument("--judge-base-url", metavar="URL", help="the judge's base URL (default: --base-url)")
    g.add_argument("--judge-template", metavar="FILE", help="a jinja2 template replacing the judge's prompt")
    g.add_argument("--user-model", metavar="PROVIDER:MODEL",
                   help="the model that plays a case's `simulated user` (required by such cases)")
    g.add_argument("--user-base-url", metavar="URL", help="the user model's base URL (default: --base-url)")
    g.add_argument("--user-template", metavar="FILE",
                   help="a jinja2 template replacing the simulated user's instructions")
    g.add_argument("--no-cache", action="store_true", help="send every request; keep no replies")
    g.add_argument("--cache-dir", metavar="DIR", help="where replies are kept (default .evaldsl/cache)")


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


def check_model_args(args: argparse.Namespace) -> None:
    """Refuse option combinations that cannot work, before anything is loaded."""
    models = args.model or []
    if len(models) > 1:
        resume = args.resume if args.resume and not Path(args.resume).is_dir() else None
        for option, value in (("--json", args.json), ("--resume", resume), ("--model-name", args.model_name)):
            if value:
                raise ModelUsage(f"{option} holds one record; with several --model values use --out DIR "
                                 "(one record per model; --resume DIR finishes them)")
        for option in ("--html", "--junit-xml", "--markdown"):
            if getattr(args, option[2:].replace("-", "_"), None):
                raise ModelUsage(f"{option} holds one run; with several --model values write the records with "
                                 f"--out DIR, then `evaldsl report DIR/*.json` (--format html, junit or markdown)")
    for option in ("user_base_url", "user_template"):
        if getattr(args, option, None) is not None and not getattr(args, "user_model", None):
            raise ModelUsage(f"--{option.replace('_', '-')} applies to the simulated user's model (--user-model)")
    user = [args.user_model] if getattr(args, "user_model", None) else []
    if not models and not args.judge and not user:
        for option in ("base_url", "temperature", "max_tokens", "seed", "judge_template", "judge_base_url"):
            if getattr(args, option) is not None:
                raise ModelUsage(f"--{option.replace('_', '-')} applies to a model run (--model) or a judge (--judge)")
        return
    from ..models._backends import parse_spec

    providers = set()
    for spec in [*models, *([args.judge] if args.judge else []), *user]:
        try:
            provider, _ = parse_spec(spec)
        except ValueError as exc:
            raise ModelUsage(str(exc)) from None
        if spec in models:
            providers.add(provider)
    if args.base_url and len(providers) > 1:
        raise ModelUsage(f"--base-url is one endpoint, but the models use {len(providers)} providers "
                         f"({', '.join(sorted(providers))}); run them separately, or set each provider's "
                         "base URL in its environment variable")


def model_setup(args: argparse.Namespace, spec: str | None) -> ModelSetup:
    """The backends of one run: the model ``spec`` (None: an agent run) and the judge.

    Raises:
        ModelUsage: a spec or base URL that no request could use, or a bad judge template.
    """
    try:
        return _model_setup(args, spec)
    except ValueError as exc:  # make_backend's one-line reasons (a TemplateError is already one)
        raise ModelUsage(str(exc)) from None


def _model_setup(args: argparse.Namespace, spec: str | None) -> ModelSetup:
    setup = ModelSetup()
    if spec is None and not args.judge and not getattr(args, "user_model", None):
        return setup  # an agent run without a judge: no HTTP code is imported
    from ..models._backends import make_backend
    from ..models._cache import DEFAULT_CACHE_DIR, ResponseCache
    from ..models._chat import Sampling
    from ..models._transport import SharedClient

    setup.cache = None if args.no_cache else ResponseCache(args.cache_dir or DEFAULT_CACHE_DIR)
    client = SharedClient()
    if spec is not None:
        from ..models._loop import ModelAgent

        sampling = Sampling(temperature=args.temperature, max_tokens=args.max_tokens, seed=args.seed)
        backend = make_backend(spec, base_url=args.base_url, cache=setup.cache, client=client)
        setup.backends.append(backend)
        setup.agent = ModelAgent(backend, sampling)
        setup.meta["model"] = {**backend.describe(), "sampling": _sampling(sampling)}
    if getattr(args, "user_model", None):
        _user_setup(setup, args, spec, client)
    judge_spec = args.judge or spec
    if judge_spec is None:
        return setup  # an agent run with a simulated user and no judge
    base = _helper_base_url(args, spec, judge_spec, args.judge_base_url)
    if judge_spec == spec and base == args.base_url:
        judge_backend = setup.backends[0]
    else:
        judge_backend = make_backend(judge_spec, base_url=base, cache=setup.cache, client=client)
        setup.backends.append(judge_backend)
    setup.judge = _judge(judge_backend, args)
    setup.meta["judge"] = {**judge_backend.describe(), "template": args.judge_template}
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


def _judge(backend: Any, args: argparse.Namespace) -> Any:
    if args.judge_template is None:
        return _LazyJudge(backend)  # most runs have no `judge` line: jinja2 is never imported
    from ..models._judge import LLMJudge, TemplateError

    try:
        return LLMJudge(backend, template=args.judge_template)
    except TemplateError as exc:
        raise ModelUsage(f"--judge-template: {exc}") from None


class _LazyJudge:
    """The shipped judge, built on its first call: a run without `expect judge` never pays for jinja2."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self._judge: Any = None
        self._lock = threading.Lock()

    def __call__(self, **kwargs: Any) -> Any:
        with self._lock:  # called from worker threads
            if self._judge is None:
                from ..models._judge import LLMJudge

                self._judge = LLMJudge(self.backend)
        return self._judge(**kwargs)


def _user_setup(setup: ModelSetup, args: argparse.Namespace, spec: str | None, client: Any) -> None:
    """The simulated user's model (``--user-model``), sharing the run's cache and HTTP client."""
    from ..models._backends import make_backend
    from ..models._judge import TemplateError
    from ..models._user import SimulatedUser

    base = _helper_base_url(args, spec, args.user_model, args.user_base_url)
    backend = next((b for b in setup.backends if b.label == args.user_model and base == args.base_url), None)
    if backend is None:
        backend = make_backend(args.user_model, base_url=base, cache=setup.cache, client=client)
        setup.backends.append(backend)
    try:
        setup.user = SimulatedUser(backend, template=args.user_template)
    except TemplateError as exc:
        raise ModelUsage(f"--user-template: {exc}") from None
    setup.meta["user_model"] = {**backend.describe(), "template": args.user_template}


def _helper_base_url(args: argparse.Namespace, spec: str | None, helper_spec: str, own: str | None) -> str | None:
    """A helper model's base URL (the judge's, the simulated user's): its own option's value (``own``); else
    --base-url when there is no model under test or the helper shares its provider."""
    from ..models._backends import parse_spec

    if own:
        return str(own)
    if spec is None or parse_spec(helper_spec)[0] == parse_spec(spec)[0]:
        return args.base_url  # type: ignore[no-any-return]
    return None


def _sampling(sampling: Any) -> dict[str, Any]:
    import dataclasses

    return dataclasses.asdict(sampling)
