"""The pytest plugin: every case of a `.evl` file is a pytest item, when asked for.

`pytest suites/` collects `file.evl::case name` items (located at the case's
line), runs each against the agent that `--evl-agent module:attr` (or
`--evl-harness`) names, or that an `evl_agent` fixture in a conftest
returns, and shows each failed expectation with its detail. Because the
items are ordinary pytest functions, `-k`, `-m TAG`, `-x`, `--lf` and
`--junitxml` work as pytest users expect. `skip` cases are skipped; `xfail`
cases carry a non-strict xfail mark.

Installing evaldsl installs this plugin into every pytest run, so it must not
take over a project that merely holds `.evl` files: they are collected only
when the run asks for them (`_wanted`), and otherwise left alone, silently,
as pytest leaves any file it does not know. The agent is imported and made
once, at session start, so a bad `--evl-agent` is one usage error (exit 4),
as `evaldsl run` makes it, not a traceback per item.

This module is imported by every pytest run that has evaldsl installed, so
it imports nothing of evaldsl until it is asked to.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

_SUBJECT = pytest.StashKey[Any]()
"""The agent or harness the command line (or ini file) names, resolved once per session."""

_SPECS = (("evl_agent", "--evl-agent"), ("evl_harness", "--evl-harness"), ("evl_model", "--evl-model"),
          ("evl_agent_cmd", "--evl-agent-cmd"), ("evl_agent_url", "--evl-agent-url"))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evaldsl", "evaldsl: .evl case files")
    group.addoption("--evl", action="store_true", default=None,
                    help="collect .evl files (implied by --evl-agent, --evl-harness, --evl-model, "
                         "or an evl_agent fixture)")
    group.addoption("--evl-agent", metavar="MODULE:ATTR",
                    help="the agent to run .evl cases against (an object with run(), a class or a function)")
    group.addoption("--evl-harness", metavar="MODULE:ATTR",
                    help="a harness (setup + run(instruction, world)) to run .evl cases against")
    group.addoption("--evl-agent-cmd", metavar="COMMAND",
                    help='a program as the agent: "cmd {prompt}" one-shot, else JSON Lines (docs/agents.md)')
    group.addoption("--evl-agent-url", metavar="URL", help="an agent behind an HTTP endpoint (docs/agents.md)")
    group.addoption("--evl-root", metavar="DIR",
                    help="refuse `use` and `examples from` paths outside DIR (for suites you did not write; "
                         "ini: evl_root, relative to the rootdir)")
    parser.addini("evl", type="bool", default=False, help="collect .evl files (as --evl)")
    parser.addini("evl_root", "as --evl-root, a folder relative to the rootdir", default="")
    parser.addini("evl_agent", help="as --evl-agent, MODULE:ATTR")
    parser.addini("evl_harness", help="as --evl-harness, MODULE:ATTR")
    parser.addini("evl_agent_cmd", help="as --evl-agent-cmd, COMMAND")
    parser.addini("evl_agent_url", help="as --evl-agent-url, URL")
    _add_model_options(parser, group)


def _given(config: pytest.Config) -> list[tuple[str, str]]:
    """(option, value) of each of --evl-agent, --evl-harness, --evl-model given on the
    command line; when none is, of each set in the ini file (the command line wins)."""
    given = [(option, str(value)) for _, option in _SPECS if (value := config.getoption(option))]
    return given or [(option, str(value)) for ini, option in _SPECS if (value := config.getini(ini))]


def _requested(config: pytest.Config) -> bool:
    """True when the command line or ini file asks for .evl files (an opt-in, agent, harness or model)."""
    return bool(config.getoption("--evl") or config.getini("evl") or _given(config))


def _wanted(file: pytest.File) -> bool:
    """Collect this .evl file? When the run asks for .evl files, when the file was named
    on the command line, or when a conftest above it defines its own `evl_agent` fixture.

    Decided when the file is collected, not in `pytest_collect_file`: pytest reads a
    directory's conftest fixtures only once the directory's own collection is done.
    """
    return _requested(file.config) or file.session.isinitpath(file.path) or _has_own_agent_fixture(file)


def _has_own_agent_fixture(node: pytest.File) -> bool:
    manager = node.session._fixturemanager
    try:
        defs = manager.getfixturedefs("evl_agent", node)
    except (TypeError, AttributeError):  # pytest < 8.1 took the node's id
        defs = manager.getfixturedefs("evl_agent", node.nodeid)  # type: ignore[arg-type]
    if not defs:
        return False
    return defs[-1].func is not _default_agent_fixture


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Import and make the agent (or harness) once; anything wrong with it is one usage error."""
    config = session.config
    given = _given(config)
    if not given:
        return
    if len(given) > 1:
        raise pytest.UsageError(f"evaldsl: give one of {', '.join(o for o, _ in given)}, not several")
    option, spec = given[0]
    if option == "--evl-model":
        config.stash[_SUBJECT] = _model_subject(config, spec)
        return
    from .run._protocols import agent_subject, harness_subject, import_object

    if option in ("--evl-agent-cmd", "--evl-agent-url"):
        config.stash[_SUBJECT] = _bridge_subject(option, spec)
        return
    make = agent_subject if option == "--evl-agent" else harness_subject
    try:
        config.stash[_SUBJECT] = make(import_object(spec))
    except (ImportError, TypeError) as exc:
        raise pytest.UsageError(f"evaldsl: {option} {spec}: {exc}") from None


def _bridge_subject(option: str, spec: str) -> Any:
    """--evl-agent-cmd / --evl-agent-url: a program or an endpoint as the agent (`evaldsl.agents`)."""
    from .agents import CommandAgent, HttpAgent
    from .run._protocols import agent_subject

    try:
        return agent_subject(CommandAgent(spec) if option == "--evl-agent-cmd" else HttpAgent(spec))
    except ValueError as exc:
        raise pytest.UsageError(f"evaldsl: {option} {spec}: {exc}") from None


def _model_subject(config: pytest.Config, model: str) -> Any:
    """What --evl-model runs against: the model, driven through the suites' mock tools."""
    from .models._loop import ModelAgent
    from .run._protocols import agent_subject

    return agent_subject(ModelAgent(_backend(config, model)))


def _add_model_options(parser: pytest.Parser, group: Any) -> None:
    """The model wiring (docs/models.md): a model as the agent, and the judge."""
    group.addoption("--evl-model", metavar="PROVIDER:MODEL",
                    help="run .evl cases against this model with the suites' mock tools (ini: evl_model)")
    group.addoption("--evl-judge", metavar="PROVIDER:MODEL",
                    help="the model grading `judge` expectations (ini: evl_judge; default: --evl-model)")
    group.addoption("--evl-base-url", metavar="URL", help="the model API's base URL (default: its env var)")
    group.addoption("--evl-user-model", metavar="PROVIDER:MODEL",
                    help="the model that plays a case's `simulated user` (ini: evl_user_model)")
    parser.addini("evl_model", "the model .evl cases run against (PROVIDER:MODEL)", default="")
    parser.addini("evl_judge", "the judge model for `judge` expectations (PROVIDER:MODEL)", default="")
    parser.addini("evl_user_model", "the model that plays `simulated user` cases (PROVIDER:MODEL)", default="")


def _model_spec(config: pytest.Config, name: str) -> str | None:
    return config.getoption(f"--evl-{name.replace('_', '-')}") or config.getini(f"evl_{name}") or None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Fail fast, once, when .evl cases were collected but nothing says which agent runs them, or a
    conversation case cannot be played (the agent takes one prompt; a simulated user has no model):
    a usage error (exit code 4) naming the cases, before any case runs, as `evaldsl run` does."""
    evl = [item for item in items if isinstance(item, EvlItem)]
    if not evl:
        return
    if _SUBJECT not in config.stash:
        if _fixture_is_default(evl[0], "evl_agent", _default_agent_fixture):
            raise pytest.UsageError(_NO_AGENT)
        return  # a conftest's agent: known only when its fixture runs
    from .run._conversation import refusals

    user = _model_spec(config, "user_model") or (None if _fixture_is_default(evl[0], "evl_user", _default_user_fixture)
                                                  else "a conftest's")
    found = refusals(config.stash[_SUBJECT], [item.obj.evl_case for item in evl], user=user)
    if found:
        raise pytest.UsageError("\n".join(found).replace("--user-model", "--evl-user-model"))


def _fixture_is_default(item: pytest.Item, name: str, func: Any) -> bool:
    """Whether the fixture ``name`` that ``item`` gets is the plugin's own (no conftest overrides it)."""
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {}).get(name, ())
    return bool(defs) and defs[-1].func is func


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix == ".evl":
        return EvlFile.from_parent(parent, path=file_path)
    return None


class EvlCollectError(Exception):
    """A .evl file that does not compile: shown as a collection error, with every diagnostic."""


class EvlCaseFailed(Exception):
    """Raised by an item whose case failed or errored; carries the CaseResult."""

    def __init__(self, result: Any) -> None:
        super().__init__(f"case {result.name!r} {result.status}")
        self.result = result


class EvlFile(pytest.File):
    def collect(self) -> list[pytest.Item]:
        if not _wanted(self):
            return []  # not asked for: left alone, as pytest leaves files it does not know
        from .compile._loading import compile_file
        from .syntax._diagnostics import EvlError

        try:
            shown = self.path.relative_to(self.config.rootpath)
        except ValueError:
            shown = self.path
        try:
            suite = compile_file(shown if not shown.is_absolute() else self.path, root=_root(self.config))
        except EvlError as exc:
            raise EvlCollectError(exc.render()) from None
        items: list[pytest.Item] = []
        for case in suite.cases:
            item = EvlItem.from_parent(self, name=case.name, callobj=_make_test(case))
            for tag in case.settings.tags:
                self.config.addinivalue_line("markers", f"{tag}: an evaldsl tag")
                item.add_marker(tag)
            if case.settings.skip is not None:
                item.add_marker(pytest.mark.skip(reason=case.settings.skip or "skip in .evl"))
            elif case.settings.xfail is not None:
                item.add_marker(pytest.mark.xfail(reason=case.settings.xfail or "xfail in .evl", strict=False))
            items.append(item)
        return items

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, EvlCollectError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


def _root(config: pytest.Config) -> Path | None:
    """The folder `use` and `examples from` must stay inside (`--evl-root`, else the ini's `evl_root`).

    A command-line path is read from where pytest was started, as any other; the ini's from the rootdir,
    where the ini file is."""
    given = config.getoption("--evl-root")
    if given:
        return (config.invocation_params.dir / given).resolve()
    ini = config.getini("evl_root")
    return (config.rootpath / ini).resolve() if ini else None


_LOOP = pytest.StashKey[Any]()


def _session_loop(config: pytest.Config) -> Any:
    """The one event loop every .evl item of the session runs on (made on first use, closed at the end).

    An async agent may keep a client bound to the loop it first ran on (the OpenAI SDK's, a LangGraph
    graph's): a loop per item would close it under the next item ("Event loop is closed"), while
    `evaldsl run` runs every case on one loop. So the plugin does as `evaldsl run` does."""
    import asyncio

    loop = config.stash.get(_LOOP, None)
    if loop is None or loop.is_closed():
        loop = config.stash[_LOOP] = asyncio.new_event_loop()
    return loop


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close the session's clients, then its loop."""
    loop = config.stash.get(_LOOP, None)
    if loop is None or loop.is_closed():
        return

    async def close() -> None:
        for backend in config.stash.get(_BACKENDS, []):
            await backend.aclose()

    try:
        loop.run_until_complete(close())
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()


def _make_test(case: Any) -> Any:
    def test_case(evl_agent: Any, evl_judge: Any, evl_user: Any, request: pytest.FixtureRequest) -> None:
        import asyncio

        from .run._api import _sync, arun_case

        try:
            asyncio.get_running_loop()
        except RuntimeError:  # the usual case: run on the session's loop
            loop = _session_loop(request.config)
            result = loop.run_until_complete(arun_case(evl_agent, case, judge=evl_judge, user=evl_user))
        else:  # called inside a running loop (another plugin's): a loop of its own, clients closed after
            async def run_and_close() -> Any:
                try:
                    return await arun_case(evl_agent, case, judge=evl_judge, user=evl_user)
                finally:
                    for backend in request.config.stash.get(_BACKENDS, []):
                        await backend.aclose()

            result = _sync(run_and_close())
        if result.status in ("failed", "error", "xfailed"):
            raise EvlCaseFailed(result)

    test_case.evl_case = case  # type: ignore[attr-defined]
    return test_case


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Mark the report of a case whose status is `error` (the agent raised, timed out, a judge could
    not be read), so that it is reported as ERROR, as `evaldsl run` reports it, not as FAILED."""
    outcome = yield
    excinfo = call.excinfo
    if call.when == "call" and excinfo is not None and isinstance(excinfo.value, EvlCaseFailed):
        report = outcome.get_result()
        if excinfo.value.result.status == "error" and report.failed:
            report.user_properties.append(("evl_status", "error"))


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    if report.when == "call" and report.failed and ("evl_status", "error") in report.user_properties:
        return "error", "E", "ERROR"
    return None


class EvlItem(pytest.Function):
    """One .evl case; fixtures (`evl_agent`, `evl_judge`) reach it through its test function."""

    @property
    def case(self) -> Any:
        return self.obj.evl_case

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.line - 1, f"case {self.case.name!r}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, EvlCaseFailed):
            from .report._pytest import render_failure

            return render_failure(excinfo.value.result)
        return super().repr_failure(excinfo)


_NO_AGENT = ("no agent for .evl cases: pass --evl-agent module:attr (or --evl-harness, or --evl-model PROVIDER:MODEL), "
             "or define an `evl_agent` fixture in a conftest.py")


def _default_agent_fixture(request: pytest.FixtureRequest) -> Any:
    """The agent .evl cases run against; override this fixture in a conftest to build your own.

    It is what --evl-agent (or --evl-harness) names, imported and resolved at session start:
    a class named there is instantiated once, for the whole session, as `evaldsl run` does.
    """
    if _SUBJECT not in request.config.stash:
        raise pytest.UsageError(_NO_AGENT)
    return request.config.stash[_SUBJECT]


evl_agent = pytest.fixture(scope="session", name="evl_agent")(_default_agent_fixture)


@pytest.fixture(scope="session")
def evl_judge(request: pytest.FixtureRequest) -> Any:
    """The judge for `judge "..."` expectations: --evl-judge (or ini evl_judge), else the
    --evl-model; None when neither is given, unless a conftest overrides this fixture."""
    spec = _model_spec(request.config, "judge") or _model_spec(request.config, "model")
    if not spec:
        return None
    from .models._judge import LLMJudge

    return LLMJudge(_backend(request.config, spec))


def _default_user_fixture(request: pytest.FixtureRequest) -> Any:
    """The model that plays `simulated user` cases: --evl-user-model (or ini evl_user_model); None
    when neither is given, unless a conftest overrides this fixture."""
    spec = _model_spec(request.config, "user_model")
    if not spec:
        return None
    from .models._user import SimulatedUser

    return SimulatedUser(_backend(request.config, spec))


evl_user = pytest.fixture(scope="session", name="evl_user")(_default_user_fixture)

_BACKENDS = pytest.StashKey[list]()  # type: ignore[type-arg]


def _backend(config: pytest.Config, spec: str) -> Any:
    """A backend for ``spec`` (one per spec per session), caching under <rootdir>/.evaldsl/cache."""
    from .models._backends import make_backend
    from .models._cache import DEFAULT_CACHE_DIR, ResponseCache

    made = config.stash.setdefault(_BACKENDS, [])
    for backend in made:
        if backend.label == spec:
            return backend
    try:
        backend = make_backend(spec, base_url=config.getoption("--evl-base-url"),
                               cache=ResponseCache(config.rootpath / DEFAULT_CACHE_DIR))
    except ValueError as exc:
        raise pytest.UsageError(f"--evl-model/--evl-judge: {exc}") from None
    made.append(backend)
    return backend
