"""`evaldsl lsp`: the language server over stdio, on pygls.

Wiring only: each LSP request is answered from `_outline` and `_features`,
and diagnostics are exactly `evaldsl check`'s (the same `evaldsl.compile`
of the same text, the same codes and messages), with ranges converted to
the client's position encoding. Diagnostics are published on open, change
and save, for the document and for every open document that `use`s it; a
problem in a file reached through `use` is published on that file. A file
reached through `use` that is open in the editor is read from its buffer,
saved or not (`evaldsl.compile(sources=...)`), so its users see the edit as
it is typed; `check` sees the same once it is saved. Every
handler catches everything: a half-typed file never stops the server.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

import evaldsl
from evaldsl import Diagnostic, EvlError

from . import _features
from ._outline import build_outline

log = logging.getLogger("evaldsl.lsp")
_KINDS = {"keyword": types.CompletionItemKind.Keyword, "tool": types.CompletionItemKind.Function,
          "param": types.CompletionItemKind.Field, "column": types.CompletionItemKind.Variable}


class EvlServer(LanguageServer):
    def __init__(self, root: Path | None = None) -> None:
        super().__init__("evaldsl", evaldsl.__version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.root = root
        """`evaldsl lsp --root`: no `use` or examples file outside it is read (E230, as `check --root`)."""
        self.published: dict[str, set[str]] = {}
        """For each document, the other files it last published diagnostics on (to clear them)."""


def check_diagnostics(text: str, path: str, sources: dict[str, str] | None = None,
                      root: Path | None = None) -> list[Diagnostic]:
    """What `evaldsl check` reports for this text as that file: errors, or the warnings of a clean compile.

    ``sources``: the open documents' texts by path, read in place of those files on disk; ``root``: as
    `check --root`."""
    try:
        # A world's file is never imported here: opening a file in an editor runs no Python.
        return list(evaldsl.compile(text, path, sources=sources, root=root, import_worlds=False).warnings)
    except EvlError as exc:
        return list(exc.diagnostics)


def to_lsp(diag: Diagnostic, lines: list[str], codec: Any) -> types.Diagnostic:
    span = diag.span
    if span is None:
        start = end = types.Position(line=0, character=0)
    else:
        start = codec.position_to_client_units(lines, types.Position(line=span.line - 1, character=span.column - 1))
        end = codec.position_to_client_units(lines, types.Position(
            line=max(span.end_line, span.line) - 1, character=max(span.end_column - 1, 0)))
        if (end.line, end.character) <= (start.line, start.character):
            end = types.Position(line=start.line, character=start.character + 1)
    message = diag.message
    if diag.label:
        message += f" ({diag.label})"
    if diag.help:
        message += f"\nhelp: {diag.help}"
    if diag.suggestion:
        message += f"\nhelp: did you mean `{diag.suggestion}`?"
    severity = types.DiagnosticSeverity.Error if diag.severity == "error" else types.DiagnosticSeverity.Warning
    return types.Diagnostic(range=types.Range(start=start, end=end), message=message, severity=severity,
                            code=diag.code, source="evaldsl")


def open_sources(ls: EvlServer) -> dict[str, str]:
    """The text of every open document, by its resolved path: what `use` reads in place of the disk."""
    out: dict[str, str] = {}
    for uri, doc in list(ls.workspace.text_documents.items()):
        path = to_fs_path(uri)
        if path:
            out[str(Path(path).resolve())] = doc.source
    return out


def publish(ls: EvlServer, uri: str) -> None:
    doc = ls.workspace.get_text_document(uri)
    path = to_fs_path(uri) or uri
    sources = open_sources(ls)
    diagnostics = check_diagnostics(doc.source, path, sources, ls.root)
    by_file: dict[str, list[Diagnostic]] = {path: []}
    for diag in diagnostics:
        by_file.setdefault(diag.file if diag.span is not None else path, []).append(diag)
    for file, found in by_file.items():
        target = uri if file == path else (from_fs_path(file) or file)
        lines = doc.lines if file == path else _lines_of(file, sources)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=target, diagnostics=[to_lsp(d, list(lines), doc.position_codec) for d in found]))
    others = {f for f in by_file if f != path}
    for stale in ls.published.get(uri, set()) - others:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=from_fs_path(stale) or stale, diagnostics=[]))
    ls.published[uri] = others


def _lines_of(path: str, sources: dict[str, str] | None = None) -> list[str]:
    try:
        text = (sources or {}).get(str(Path(path).resolve()))
        if text is not None:
            return text.splitlines(keepends=True)
        return Path(path).read_text(encoding="utf-8").splitlines(keepends=True)
    except (OSError, UnicodeDecodeError):
        return []


def refresh(ls: EvlServer, uri: str, *, itself: bool = True) -> None:
    """Diagnose ``uri`` (unless not ``itself``) and every open document that uses it (directly or not)."""
    changed = str(Path(to_fs_path(uri) or uri).resolve())
    sources = open_sources(ls)
    for other in list(ls.workspace.text_documents):
        try:
            if (other == uri and itself) or (other != uri and _uses(ls, other, changed, sources)):
                publish(ls, other)
        except Exception:  # noqa: BLE001 - a handler must never take the server down
            log.exception("diagnostics failed for %s", other)


def _uses(ls: EvlServer, uri: str, changed: str, sources: dict[str, str]) -> bool:
    doc = ls.workspace.get_text_document(uri)
    outline = build_outline(doc.source, to_fs_path(uri) or uri, sources=sources, root=ls.root)
    return (any(str(Path(tool.file).resolve()) == changed for tool in outline.tools.values())
            or Path(changed).name in doc.source)


def create_server(root: Path | None = None) -> EvlServer:
    server = EvlServer(root)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: EvlServer, params: types.DidOpenTextDocumentParams) -> None:
        refresh(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: EvlServer, params: types.DidChangeTextDocumentParams) -> None:
        refresh(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: EvlServer, params: types.DidSaveTextDocumentParams) -> None:
        refresh(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: EvlServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        refresh(ls, uri, itself=False)  # its users now read the file on disk, not the closed buffer

    @server.feature(types.TEXT_DOCUMENT_FORMATTING)
    def formatting(ls: EvlServer, params: types.DocumentFormattingParams) -> list[types.TextEdit] | None:
        return _guarded(_format, ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=["$", "<", "{", ",", " "]))
    def completion(ls: EvlServer, params: types.CompletionParams) -> types.CompletionList | None:
        return _guarded(_complete, ls, params.text_document.uri, params.position)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: EvlServer, params: types.HoverParams) -> types.Hover | None:
        return _guarded(_hover, ls, params.text_document.uri, params.position)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: EvlServer, params: types.DefinitionParams) -> types.Location | None:
        return _guarded(_definition, ls, params.text_document.uri, params.position)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def symbols(ls: EvlServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol] | None:
        return _guarded(_symbols, ls, params.text_document.uri)

    return server


def _guarded(fn: Any, ls: EvlServer, uri: str, *args: Any) -> Any:
    try:
        return fn(ls, uri, *args)
    except Exception:  # noqa: BLE001 - answer what we can: nothing, rather than a dead server
        log.exception("%s failed for %s", fn.__name__, uri)
        return None


def _document(ls: EvlServer, uri: str, position: types.Position | None = None,
              *, typing: bool = False) -> tuple[Any, Any, int, int]:
    doc = ls.workspace.get_text_document(uri)
    line = character = 0
    if position is not None:
        server_position = doc.position_codec.position_from_client_units(doc.lines, position)
        line, character = server_position.line, server_position.character
    typing_at = line if typing else None
    outline = build_outline(doc.source, to_fs_path(uri) or uri, typing_at=typing_at, sources=open_sources(ls),
                            root=ls.root)
    return doc, outline, line, character


def _format(ls: EvlServer, uri: str) -> list[types.TextEdit] | None:
    doc = ls.workspace.get_text_document(uri)
    try:
        new = evaldsl.format(doc.source, to_fs_path(uri) or uri)
    except EvlError:
        return None  # the diagnostics already say why
    if new == doc.source:
        return []
    end = types.Position(line=len(doc.lines), character=0)
    return [types.TextEdit(range=types.Range(start=types.Position(line=0, character=0), end=end), new_text=new)]


def _complete(ls: EvlServer, uri: str, position: types.Position) -> types.CompletionList:
    doc, outline, line, character = _document(ls, uri, position, typing=True)
    items = [types.CompletionItem(label=c.label, kind=_KINDS.get(c.kind), detail=c.detail or None)
             for c in _features.completions(doc.source, outline, line, character)]
    return types.CompletionList(is_incomplete=False, items=items)


def _hover(ls: EvlServer, uri: str, position: types.Position) -> types.Hover | None:
    doc, outline, line, character = _document(ls, uri, position)
    text = _features.hover(doc.source, outline, line, character)
    if text is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


def _definition(ls: EvlServer, uri: str, position: types.Position) -> types.Location | None:
    doc, outline, line, character = _document(ls, uri, position)
    tool = _features.definition(doc.source, outline, line, character)
    if tool is None:
        return None
    lines = doc.lines if tool.file == outline.file else _lines_of(tool.file, open_sources(ls))
    span = tool.span
    start = doc.position_codec.position_to_client_units(
        list(lines), types.Position(line=span.line - 1, character=span.column - 1))
    end = doc.position_codec.position_to_client_units(
        list(lines), types.Position(line=span.end_line - 1, character=span.end_column - 1))
    target = uri if tool.file == outline.file else (from_fs_path(tool.file) or tool.file)
    return types.Location(uri=target, range=types.Range(start=start, end=end))


def _symbols(ls: EvlServer, uri: str) -> list[types.DocumentSymbol]:
    doc, outline, _, _ = _document(ls, uri)
    last = types.Position(line=max(len(doc.lines) - 1, 0), character=0)

    def line_range(line: int, end_line: int | None = None) -> types.Range:
        end = types.Position(line=(end_line or line) - 1, character=len(doc.lines[line - 1]) if doc.lines else 0)
        return types.Range(start=types.Position(line=line - 1, character=0), end=end)

    children = [types.DocumentSymbol(name=c.name, kind=types.SymbolKind.Function,
                                     range=line_range(c.span.line, max(c.end_line, c.span.line)),
                                     selection_range=line_range(c.span.line), detail="case",
                                     children=_turn_symbols(c, line_range) or None)
                for c in outline.cases]
    children += [types.DocumentSymbol(name=t.name, kind=types.SymbolKind.Interface,
                                      range=line_range(t.span.line), selection_range=line_range(t.span.line),
                                      detail="tool")
                 for t in outline.local_tools]
    children.sort(key=lambda s: s.range.start.line)
    head = outline.suite_span.line if outline.suite_span else 1
    whole = types.Range(start=types.Position(line=0, character=0), end=last)
    return [types.DocumentSymbol(name=outline.suite_name, kind=types.SymbolKind.Module, range=whole,
                                 selection_range=line_range(head) if doc.lines else whole, detail="suite",
                                 children=children)]


def _turn_symbols(case: Any, line_range: Any) -> list[types.DocumentSymbol]:
    """A conversation's `user` lines and its `simulated user`, as children of its case in the outline (v2)."""
    out = []
    lines = [(f"turn {n}", message, span, "user") for n, (message, span) in enumerate(case.turns, 1)]
    if case.simulated is not None:
        lines.append(("simulated user", *case.simulated, "simulated user"))
    for title, message, span, detail in sorted(lines, key=lambda item: item[2].line):
        shown = " ".join(message.split())
        shown = shown if len(shown) <= 60 else shown[:59] + "…"
        out.append(types.DocumentSymbol(name=f"{title}: {shown}", kind=types.SymbolKind.Event,
                                        range=line_range(span.line, span.end_line),
                                        selection_range=line_range(span.line), detail=detail))
    return out


def main(root: str | None = None) -> None:
    logging.basicConfig(level=logging.WARNING, format="evaldsl lsp: %(levelname)s %(message)s")
    create_server(Path(root).resolve() if root else None).start_io()
