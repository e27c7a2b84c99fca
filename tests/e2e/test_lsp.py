"""The language server, driven over stdio by a real LSP client (pygls's), as an editor drives it.

One server process serves the module's tests; a loop thread runs the client.
Every wait is bounded (a hung server fails the test instead of hanging it),
and no test measures time.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls")
from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from evaldsl.cli import main as cli  # noqa: E402

WAIT = 60.0

LIB = '''\
tool get_weather "Current weather for a city"
  param city: string "The city"
  param unit?: one of [c, f]
  otherwise returns "sunny"
'''

SUITE = '''\
suite "Weather"
use "lib.evl"

tool send_email "Send an email"
  param to: string
  param body: string

case "asks the weather"
  prompt "weather in {{city}}, {{temp}} degrees?"
  expect called get_weather with <city: $city>
  expect caled send_email
  examples
    | city  | temp |
    | Paris | 20   |
'''


class Session:
    def __init__(self, *args: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = LanguageClient("evaldsl-tests", "1")
        self.diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.changed = threading.Condition()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            with self.changed:
                self.diagnostics[params.uri] = list(params.diagnostics)
                self.changed.notify_all()

        self.call(self.client.start_io(sys.executable, "-m", "evaldsl", "lsp", *args))
        self.call(self.client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities())))
        self.client.initialized(types.InitializedParams())
        self.version = 0

    def call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(WAIT)

    def open(self, path: Path, text: str) -> str:
        uri = from_fs_path(str(path))
        with self.changed:
            self.diagnostics.pop(uri, None)
        self.version += 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="evl", version=self.version, text=text)))
        return uri

    def change(self, uri: str, text: str) -> None:
        with self.changed:
            self.diagnostics.pop(uri, None)
        self.version += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))

    def wait_diagnostics(self, uri: str) -> list[types.Diagnostic]:
        with self.changed:
            assert self.changed.wait_for(lambda: uri in self.diagnostics, WAIT), f"no diagnostics for {uri}"
            return self.diagnostics[uri]

    def request(self, method: str, params: Any) -> Any:
        async def send() -> Any:
            return await self.client.protocol.send_request_async(method, params)

        return self.call(send())

    def forget(self, uri: str) -> None:
        with self.changed:
            self.diagnostics.pop(uri, None)

    def close(self) -> None:
        try:
            self.call(self.client.shutdown_async(None))
            self.client.exit(None)
            self.call(self.client.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)


@pytest.fixture(scope="module")
def lsp() -> Iterator[Session]:
    session = Session()
    yield session
    session.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "lib.evl").write_text(LIB)
    (tmp_path / "suite.evl").write_text(SUITE)
    return tmp_path


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def test_diagnostics_are_checks_own(lsp: Session, project: Path, capsys) -> None:
    uri = lsp.open(project / "suite.evl", SUITE)
    found = lsp.wait_diagnostics(uri)
    assert cli(["check", "--error-format", "short", str(project / "suite.evl")]) == 1
    short = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    expected = [(int(line.split(":")[1]), int(line.split(":")[2]), line.split("[")[1].split("]")[0])
                for line in short]
    assert [(d.range.start.line + 1, d.range.start.character + 1, d.code) for d in found] == expected
    (typo,) = [d for d in found if d.code == "E101"]
    assert typo.range == types.Range(start=pos(10, 9), end=pos(10, 14))  # covers `caled`
    assert "unknown predicate `caled`" in typo.message and "did you mean `called`" in typo.message
    assert typo.severity == types.DiagnosticSeverity.Error

    lsp.change(uri, SUITE.replace("caled", "called"))
    assert lsp.wait_diagnostics(uri) == []


def test_a_half_typed_file_keeps_the_server_answering(lsp: Session, project: Path) -> None:
    half = SUITE + "case \"new\n  expect called get_weather with <ci"
    uri = lsp.open(project / "suite.evl", half)
    assert any(d.severity == types.DiagnosticSeverity.Error for d in lsp.wait_diagnostics(uri))
    last = half.count("\n")
    items = lsp.request(types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(
        text_document=doc(uri), position=pos(last, len(half.split("\n")[-1]))))
    assert {"city", "unit"} <= {i.label for i in items.items}
    assert lsp.request(types.TEXT_DOCUMENT_FORMATTING, types.DocumentFormattingParams(
        text_document=doc(uri), options=types.FormattingOptions(tab_size=2, insert_spaces=True))) is None
    symbols = lsp.request(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, types.DocumentSymbolParams(text_document=doc(uri)))
    assert [c.name for c in symbols[0].children] == ["send_email", "asks the weather"]
    lsp.change(uri, "\x00 <<<< \"\"\" ((( $")  # garbage: still diagnosed, still alive
    assert lsp.wait_diagnostics(uri)


@pytest.mark.parametrize(("line_text", "expected"), [
    ("  expect ", {"called", "final text", "no tool calls", "judge", "not"}),
    ("  expect final ", {"text", "number", "json"}),
    ("  expect final text ", {"contains", "matches", "is empty"}),
    ("  expect called ", {"get_weather", "send_email", "any tool"}),
    ("  expect called send_email then ", {"get_weather", "send_email"}),
    ("  expect first call ", {"get_weather", "send_email"}),
    ("  expect not called ", {"get_weather", "send_email"}),
    ("  expect called send_email with <", {"to", "body"}),
    ("  expect called send_email with <to: \"a\", ", {"to", "body"}),
    ("  expect called get_weather with <city: $", {"$city", "$temp"}),
    ("  prompt \"in {{ ", {"city", "temp"}),
    ("  ", {"prompt", "expect", "examples", "repeat", "case"}),
    ("  mode ", {"agent", "single-turn"}),
    # v2: precise matching
    ("  tools ", {"get_weather", "send_email"}),
    ("  tools send_email, ", {"get_weather", "send_email"}),
    ("  expect called [", {"get_weather", "send_email", "any tool"}),
    ("  expect called [send_email, ", {"get_weather", "send_email", "any tool"}),
    ("  expect called [send_email, get_weather] ", {"in any order"}),
    ("  expect called send_email with ", {"only"}),
    ("  expect ", {"valid arguments"}),
])
def test_completion_by_context(lsp: Session, project: Path, line_text: str, expected: set[str]) -> None:
    text = SUITE.replace("  expect caled send_email\n", line_text + "\n")
    uri = lsp.open(project / "suite.evl", text)
    line = text.split("\n").index(line_text)
    items = lsp.request(types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(
        text_document=doc(uri), position=pos(line, len(line_text))))
    labels = {i.label for i in items.items}
    if "$city" in expected:
        expected = {"city", "temp"}
    assert expected <= labels, labels
    if line_text.endswith(("<", ", ")):
        assert "city" not in labels  # send_email's params only


def test_keywords_in_a_tool_block_and_in_the_head(lsp: Session, project: Path) -> None:
    text = "suite \"x\"\n\ntool t\n  param a: string\n  \n\ncase \"c\"\n  prompt \"p\"\n  expect no error\n"
    uri = lsp.open(project / "blocks.evl", text)
    in_tool = lsp.request(types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(text_document=doc(uri),
                                                                                    position=pos(4, 2)))
    assert {"param", "when"} <= {i.label for i in in_tool.items}
    head = lsp.request(types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(text_document=doc(uri),
                                                                                 position=pos(1, 0)))
    assert {"use", "description", "suite"} <= {i.label for i in head.items}
    assert "prompt" not in {i.label for i in head.items}
    when = text.replace("  param a: string\n  \n", "  param a: string\n  param b?: number\n  when <\n")
    uri = lsp.open(project / "blocks.evl", when)
    in_when = lsp.request(types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(text_document=doc(uri),
                                                                                   position=pos(5, 8)))
    assert {i.label for i in in_when.items} == {"a", "b"}  # the enclosing tool's params


def test_hover_explains_predicates_and_shows_tool_declarations(lsp: Session, project: Path) -> None:
    uri = lsp.open(project / "suite.evl", SUITE)
    lines = SUITE.split("\n")
    line = next(i for i, t in enumerate(lines) if "called get_weather" in t)
    on_called = lsp.request(types.TEXT_DOCUMENT_HOVER, types.HoverParams(
        text_document=doc(uri), position=pos(line, lines[line].index("called") + 2)))
    assert "`called T" in on_called.contents.value
    on_tool = lsp.request(types.TEXT_DOCUMENT_HOVER, types.HoverParams(
        text_document=doc(uri), position=pos(line, lines[line].index("get_weather") + 3)))
    assert 'tool get_weather "Current weather for a city"' in on_tool.contents.value
    assert "param city: string" in on_tool.contents.value and "lib.evl" in on_tool.contents.value


def test_hover_explains_the_precise_matching_words(lsp: Session, project: Path) -> None:
    text = SUITE.replace("  expect caled send_email\n",
                         '  expect called get_weather with only <city: "Paris" loosely> or <c: absent or 1>\n')
    uri = lsp.open(project / "suite.evl", text)
    lines = text.split("\n")
    line = next(i for i, t in enumerate(lines) if "loosely" in t)
    for word, meant in (("loosely", "casefolded"), ("only", "no key besides"), ("absent", "optional parameter")):
        hover = lsp.request(types.TEXT_DOCUMENT_HOVER, types.HoverParams(
            text_document=doc(uri), position=pos(line, lines[line].index(word) + 1)))
        assert meant in hover.contents.value, word


def test_go_to_definition_through_use(lsp: Session, project: Path) -> None:
    uri = lsp.open(project / "suite.evl", SUITE)
    lines = SUITE.split("\n")
    line = next(i for i, t in enumerate(lines) if "called get_weather" in t)
    where = lsp.request(types.TEXT_DOCUMENT_DEFINITION, types.DefinitionParams(
        text_document=doc(uri), position=pos(line, lines[line].index("get_weather"))))
    assert where.uri == from_fs_path(str(project / "lib.evl"))
    assert where.range == types.Range(start=pos(0, 5), end=pos(0, 16))
    local = lsp.request(types.TEXT_DOCUMENT_DEFINITION, types.DefinitionParams(
        text_document=doc(uri), position=pos(10, 16)))
    assert local.uri == uri and local.range.start == pos(3, 5)
    on_its_own_line = lsp.request(types.TEXT_DOCUMENT_HOVER, types.HoverParams(
        text_document=doc(uri), position=pos(3, 7)))
    assert 'tool send_email "Send an email"' in on_its_own_line.contents.value


def test_formatting_is_fmts(lsp: Session, project: Path) -> None:
    messy = 'case "a"\n      prompt   "x"\n  expect no tool calls   # kept\n'
    uri = lsp.open(project / "messy.evl", messy)
    (edit,) = lsp.request(types.TEXT_DOCUMENT_FORMATTING, types.DocumentFormattingParams(
        text_document=doc(uri), options=types.FormattingOptions(tab_size=2, insert_spaces=True)))
    import evaldsl

    assert edit.new_text == evaldsl.format(messy)
    assert edit.range.start == pos(0, 0)


def test_a_change_to_a_used_file_refreshes_its_users(lsp: Session, project: Path) -> None:
    suite_uri = lsp.open(project / "suite.evl", SUITE.replace("caled", "called"))
    assert lsp.wait_diagnostics(suite_uri) == []
    (project / "lib.evl").write_text(LIB.replace("get_weather", "get_forecast"))
    lsp.forget(suite_uri)
    lib_uri = lsp.open(project / "lib.evl", LIB.replace("get_weather", "get_forecast"))
    lsp.wait_diagnostics(lib_uri)
    found = lsp.wait_diagnostics(suite_uri)
    assert any(d.code == "E218" for d in found), found  # get_weather is no longer declared anywhere


MANY_ERRORS = SUITE.replace("  expect caled send_email\n", """  expect called send_email with <too: "a">
  expect called get_wether
  expect final number is 4 within -1
  expect final text contains $nope
""")


def test_every_range_is_the_compilers_span_and_covers_a_token(lsp: Session, project: Path) -> None:
    import evaldsl

    uri = lsp.open(project / "suite.evl", MANY_ERRORS)
    found = lsp.wait_diagnostics(uri)
    try:
        evaldsl.compile(MANY_ERRORS, str(project / "suite.evl"))
        raise AssertionError("the text compiled")
    except evaldsl.EvlError as exc:
        spans = [(d.code, d.span.line, d.span.column, d.span.end_line, d.span.end_column) for d in exc.diagnostics]
    assert len(found) >= 4
    assert [(d.code, d.range.start.line + 1, d.range.start.character + 1, d.range.end.line + 1,
             d.range.end.character + 1) for d in found] == spans
    lines = MANY_ERRORS.split("\n")
    for d in found:
        assert d.range.start.line == d.range.end.line
        covered = lines[d.range.start.line][d.range.start.character:d.range.end.character]
        assert covered and covered == covered.strip(), (d.code, covered)


def test_saving_a_used_file_refreshes_its_users(lsp: Session, project: Path) -> None:
    suite_uri = lsp.open(project / "suite.evl", SUITE.replace("caled", "called"))
    assert lsp.wait_diagnostics(suite_uri) == []
    lib_uri = lsp.open(project / "lib.evl", LIB)
    lsp.wait_diagnostics(lib_uri)
    lsp.forget(suite_uri)
    lsp.client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=doc(lib_uri)))
    assert lsp.wait_diagnostics(suite_uri) == []  # published again on the save alone
    lsp.client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc(lib_uri)))


def test_an_unsaved_edit_of_a_used_file_reaches_its_users_until_it_is_closed(lsp: Session, project: Path) -> None:
    suite_uri = lsp.open(project / "suite.evl", SUITE.replace("caled", "called"))
    assert lsp.wait_diagnostics(suite_uri) == []
    lib_uri = lsp.open(project / "lib.evl", LIB)
    lsp.wait_diagnostics(lib_uri)  # published after its users'
    lsp.forget(suite_uri)
    lsp.change(lib_uri, LIB.replace("get_weather", "get_forecast"))  # typed, not saved
    assert any(d.code == "E218" for d in lsp.wait_diagnostics(suite_uri))
    lines = SUITE.split("\n")
    line = next(i for i, t in enumerate(lines) if "called get_weather" in t)
    lsp.change(lib_uri, "\n" + LIB)  # the declaration moved a line down in the buffer
    where = lsp.request(types.TEXT_DOCUMENT_DEFINITION, types.DefinitionParams(
        text_document=doc(suite_uri), position=pos(line, lines[line].index("get_weather"))))
    assert where.uri == lib_uri and where.range.start == pos(1, 5)
    lsp.forget(suite_uri)
    lsp.client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc(lib_uri)))
    assert lsp.wait_diagnostics(suite_uri) == []  # closed unsaved: the file on disk again
    assert (project / "lib.evl").read_text() == LIB


def test_hover_on_settings_and_requests_on_a_file_that_does_not_parse(lsp: Session, project: Path) -> None:
    text = 'suite "x"\ntimeout 30s\n\ncase "a\n  repeat 3\n  expect called get_weather with <ci'
    uri = lsp.open(project / "broken.evl", 'use "lib.evl"\n' + text)
    assert lsp.wait_diagnostics(uri)
    timeout = lsp.request(types.TEXT_DOCUMENT_HOVER, types.HoverParams(text_document=doc(uri), position=pos(2, 2)))
    assert "`timeout" in timeout.contents.value
    repeat = lsp.request(types.TEXT_DOCUMENT_HOVER, types.HoverParams(text_document=doc(uri), position=pos(5, 4)))
    assert "`repeat" in repeat.contents.value
    on_tool = lsp.request(types.TEXT_DOCUMENT_HOVER, types.HoverParams(text_document=doc(uri), position=pos(6, 20)))
    assert "tool get_weather" in on_tool.contents.value
    where = lsp.request(types.TEXT_DOCUMENT_DEFINITION, types.DefinitionParams(
        text_document=doc(uri), position=pos(6, 20)))
    assert where.uri == from_fs_path(str(project / "lib.evl"))


def test_document_symbols_outline_the_suite_its_tools_and_cases(lsp: Session, project: Path) -> None:
    text = SUITE + '\ncase "second"\n  prompt "p"\n  expect no error\n'
    uri = lsp.open(project / "suite.evl", text)
    (suite,) = lsp.request(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, types.DocumentSymbolParams(text_document=doc(uri)))
    assert (suite.name, suite.kind, suite.detail) == ("Weather", types.SymbolKind.Module, "suite")
    assert [(c.name, c.detail, c.range.start.line) for c in suite.children] == [
        ("send_email", "tool", 3), ("asks the weather", "case", 7), ("second", "case", 15)]
    assert suite.children[0].kind == types.SymbolKind.Interface
    assert all(c.kind == types.SymbolKind.Function for c in suite.children[1:])


def test_every_prefix_of_a_shipped_suite_is_diagnosed_and_answered(lsp: Session, tmp_path: Path) -> None:
    """Typing a whole file, cut at many points (mid-word, mid-string, inside `< >`): the server keeps up."""
    import random

    shipped = Path(__file__).resolve().parents[2] / "suites" / "baseline"
    source = (shipped / "tool_use.evl").read_text()
    (tmp_path / "tools.evl").write_text((shipped / "tools.evl").read_text())  # what it `use`s
    cuts = sorted(random.Random(8).sample(range(1, len(source)), 40)) + [len(source)]
    uri = lsp.open(tmp_path / "typing.evl", "")
    lsp.wait_diagnostics(uri)
    for cut in cuts:
        text = source[:cut]
        lsp.change(uri, text)
        found = lsp.wait_diagnostics(uri)
        assert all(d.range.start.line <= text.count("\n") for d in found)
        end = pos(text.count("\n"), len(text.split("\n")[-1]))
        items = lsp.request(types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(text_document=doc(uri),
                                                                                    position=end))
        assert items is not None
        lsp.request(types.TEXT_DOCUMENT_HOVER, types.HoverParams(text_document=doc(uri), position=pos(0, 1)))
        symbols = lsp.request(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, types.DocumentSymbolParams(text_document=doc(uri)))
        assert symbols is not None and symbols[0].detail == "suite"
    assert found == []  # the whole file: clean, as `check` says


def test_a_root_keeps_the_server_from_reading_outside_it(tmp_path: Path) -> None:
    """`evaldsl lsp --root DIR`, as `check --root`: a `use` or examples file outside DIR is E230 at its
    line, and its tools and columns are not offered (the file is not read)."""
    (tmp_path / "outside.evl").write_text('tool secret "Not to be read"\n')
    (tmp_path / "rows.csv").write_text("hidden\n1\n")
    inner = tmp_path / "suites"
    inner.mkdir()
    (inner / "lib.evl").write_text('tool search "Inside the root"\n')
    whole = ('use "lib.evl"\nuse "../outside.evl"\ncase "a"\n  prompt "p"\n  examples from "../rows.csv"\n'
             '  expect called search\n')
    text = whole.replace('"p"', '"p {{ "').replace("called search", "called ")  # being typed: completions
    session = Session("--root", str(inner))
    try:
        uri = session.open(inner / "s.evl", whole)
        e230 = [(d.range.start.line, d.message) for d in session.wait_diagnostics(uri) if d.code == "E230"]
        assert [line for line, _ in e230] == [1, 4] and all("outside the root" in m for _, m in e230)
        session.change(uri, text)
        tools = session.request(types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(
            text_document=doc(uri), position=pos(5, len("  expect called "))))
        labels = {i.label for i in tools.items}
        assert "search" in labels and "secret" not in labels
        columns = session.request(types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(
            text_document=doc(uri), position=pos(3, len('  prompt "p {{ '))))
        assert "hidden" not in {i.label for i in columns.items}
    finally:
        session.close()
    unconfined = Session()  # without a root, both are read
    try:
        uri = unconfined.open(inner / "s.evl", whole)
        assert not [d for d in unconfined.wait_diagnostics(uri) if d.code == "E230"]
        unconfined.change(uri, text)
        tools = unconfined.request(types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(
            text_document=doc(uri), position=pos(5, len("  expect called "))))
        assert {"search", "secret"} <= {i.label for i in tools.items}
        columns = unconfined.request(types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(
            text_document=doc(uri), position=pos(3, len('  prompt "p {{ '))))
        assert "hidden" in {i.label for i in columns.items}
    finally:
        unconfined.close()


def test_document_symbols_show_a_conversations_turns_under_its_case(lsp: Session, project: Path) -> None:
    text = ('case "refund"\n  expect no error\n  user "I want a refund"\n    expect no tool calls\n'
            '  user "Yes"\n  simulated user """\n    You are Mia.\n    """\n\ncase "plain"\n  prompt "p"\n'
            '  expect no error\n')
    uri = lsp.open(project / "conversation.evl", text)
    assert lsp.wait_diagnostics(uri) == []
    (suite,) = lsp.request(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, types.DocumentSymbolParams(text_document=doc(uri)))
    refund, plain = suite.children
    assert [(t.name, t.detail, t.range.start.line) for t in refund.children] == [
        ('turn 1: I want a refund', "user", 2), ("turn 2: Yes", "user", 4),
        ("simulated user: You are Mia.", "simulated user", 5)]
    assert refund.range.end.line == 7  # the case's range holds its turns (the long string's end too)
    assert not plain.children
