"""``tiletune lsp``: a pygls language server over the tiletune lint rules.

* publishes diagnostics when a document is opened or saved, and
  ``DEBOUNCE_S`` after the last of a burst of changes (clears them when it is
  closed);
* offers quick fixes (``textDocument/codeAction``, kind ``quickfix``): the
  same safe fixes ``tiletune lint --fix`` makes (each rule's ``Rule.fix``,
  offered only on findings that carry one), each a ``WorkspaceEdit``
  replacing the changed lines.

Options come from the command line (``--target``, ``--select``,
``--ignore``) or the client's ``initializationOptions``:
``{"target": "h100", "select": ["TT"], "ignore": []}``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any, Optional

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from tiletune.version import __version__

from .diagnostic import Diagnostic
from .fixes import FixError, apply_fix, minimal_edit
from .registry import DEFAULT_TARGET, UsageError, lint_source, select_codes

__all__ = ["TiletuneLanguageServer", "create_server", "SOURCE"]

log = logging.getLogger(__name__)

SOURCE = "tiletune"
#: Seconds without a change before a changed document is linted again.
DEBOUNCE_S = 0.2


class TiletuneLanguageServer(LanguageServer):
    """The language server, holding the lint options."""

    def __init__(self, target: str = DEFAULT_TARGET, codes: Optional[frozenset[str]] = None):
        super().__init__(name="tiletune", version=__version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.target = target
        self.codes = codes if codes is not None else select_codes()
        self._cache: dict[str, tuple[tuple, list[Diagnostic]]] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}

    def configure(self, options: Any) -> None:
        """Apply ``initializationOptions`` (a dict; unknown keys ignored)."""
        if not isinstance(options, dict):
            return
        if isinstance(options.get("target"), str):
            self.target = options["target"]
        select, ignore = options.get("select"), options.get("ignore")
        if select is not None or ignore is not None:
            try:
                self.codes = select_codes(_as_list(select), _as_list(ignore))
            except UsageError as exc:
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=f"tiletune: {exc}"))

    def lint_document(self, uri: str) -> tuple[Any, list[Diagnostic]]:
        """The document and its tiletune diagnostics (cached per document version)."""
        doc = self.workspace.get_text_document(uri)
        source = doc.source
        key = (doc.version, source, self.target, self.codes)
        cached = self._cache.get(uri)
        if cached is not None and cached[0] == key:
            return doc, cached[1]
        path = doc.path or uri
        # project=True: rules may read this kernel's launches in the package's other
        # modules (from disk), as `tiletune lint` does; this document is read from the buffer.
        diags = lint_source(source, path, target=self.target, codes=self.codes, project=os.path.isfile(path))
        self._cache[uri] = (key, diags)
        return doc, diags

    def publish(self, uri: str) -> None:
        """Lint ``uri`` and publish the result."""
        doc, diags = self.lint_document(uri)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=doc.version, diagnostics=[to_lsp(doc, d) for d in diags])
        )

    def publish_later(self, uri: str, delay: float = DEBOUNCE_S) -> None:
        """Publish after ``delay`` seconds without a newer change (typing
        produces a change per keystroke; linting each one would lag)."""
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.publish(uri)
            return

        def fire() -> None:
            self._pending.pop(uri, None)
            if uri in self.workspace.text_documents:
                self.publish(uri)

        self._pending[uri] = loop.call_later(delay, fire)

    def forget(self, uri: str) -> None:
        """Drop the cache and any pending publish of a closed document."""
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self._cache.pop(uri, None)


def _as_list(value: Any) -> Optional[list[str]]:
    if value is None:
        return None
    if isinstance(value, str):
        return [c for c in value.split(",") if c.strip()]
    return [str(c) for c in value]


def _clamp(doc: Any, line: int, column: int) -> ServerTextPosition:
    lines = doc.lines
    line = max(0, min(line, len(lines)))
    text = lines[line] if line < len(lines) else ""
    return ServerTextPosition(line=line, character=max(0, min(column, len(text.rstrip("\r\n")))))


def _range(doc: Any, d: Diagnostic) -> types.Range:
    start = _clamp(doc, d.line - 1, d.column)
    end = _clamp(doc, d.end_line - 1, d.end_column)
    if end < start:
        end = start
    return doc.range_to_client_units(ServerTextRange(start=start, end=end))


def to_lsp(doc: Any, d: Diagnostic) -> types.Diagnostic:
    """An LSP diagnostic (positions in the client's units)."""
    return types.Diagnostic(
        range=_range(doc, d),
        message=d.message,
        severity=types.DiagnosticSeverity.Error if d.severity == "error" else types.DiagnosticSeverity.Warning,
        code=d.code,
        source=SOURCE,
        data={"kernel": d.kernel, "param": d.param, "fix": d.fix},
    )


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def code_actions(ls: TiletuneLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Quick fixes for the fixable tiletune diagnostics in the requested range."""
    only = params.context.only
    if only and not any(str(k).startswith(types.CodeActionKind.QuickFix.value) for k in only):
        return []
    uri = params.text_document.uri
    doc, diags = ls.lint_document(uri)
    source = doc.source
    actions = []
    for d in diags:
        if not d.fixable:
            continue
        lsp_diag = to_lsp(doc, d)
        if not _overlaps(lsp_diag.range, params.range):
            continue
        try:
            new = apply_fix(source, d)
        except FixError as exc:
            log.info("no fix for %s: %s", d.code, exc)
            continue
        first, end, text = minimal_edit(source, new)
        n_lines = len(source.splitlines(keepends=True))
        start_pos = types.Position(line=first, character=0)
        if end >= n_lines and not source.endswith(("\n", "\r")) and n_lines:
            # The last line has no line end: the range ends at its end.
            last = _clamp(doc, n_lines - 1, len(doc.lines[-1]))
            end_pos = doc.position_to_client_units(last)
        else:
            end_pos = types.Position(line=end, character=0)
        edit = types.TextEdit(range=types.Range(start=start_pos, end=end_pos), new_text=text)
        actions.append(
            types.CodeAction(
                title=f"{d.fix} ({d.code})",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[lsp_diag],
                is_preferred=True,
                edit=types.WorkspaceEdit(changes={uri: [edit]}),
            )
        )
    return actions


def create_server(target: str = DEFAULT_TARGET, codes: Optional[frozenset[str]] = None) -> TiletuneLanguageServer:
    """A server with every feature registered (not started)."""
    server = TiletuneLanguageServer(target=target, codes=codes)

    @server.feature(types.INITIALIZE)
    def _initialize(ls: TiletuneLanguageServer, params: types.InitializeParams) -> None:
        ls.configure(params.initialization_options)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def _did_open(ls: TiletuneLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def _did_change(ls: TiletuneLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.publish_later(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def _did_save(ls: TiletuneLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def _did_close(ls: TiletuneLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=False),
    )
    def _code_action(ls: TiletuneLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return code_actions(ls, params)

    return server
