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

Robustness (issue 26): the message loop (:mod:`tiletune.lint.lsp_io`) logs
and skips a malformed header or body and keeps serving; a URI that was never
opened gets empty results; linting runs in one spawned worker process (a
thread would not do: parsing a 1 MB document holds the GIL for seconds), off
the request loop, at most one analysis per document at a time, and only the newest
version is analysed next (a burst of changes never queues stale work); a
``codeAction`` waits at most ``ANSWER_WITHIN_S`` for the current version's
findings and otherwise answers with none.  Every analysis is logged to the
client (``window/logMessage``, type Log: ``tiletune: analysing URI version N``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from typing import Any, Callable, Optional

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
#: Longest a code action waits for the current version's findings before answering with none.
ANSWER_WITHIN_S = 1.5


class TiletuneLanguageServer(LanguageServer):
    """The language server, holding the lint options."""

    def __init__(self, target: str = DEFAULT_TARGET, codes: Optional[frozenset[str]] = None):
        super().__init__(name="tiletune", version=__version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.target = target
        self.codes = codes if codes is not None else select_codes()
        self._cache: dict[str, tuple[tuple, list[Diagnostic]]] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._running: dict[str, Any] = {}  # uri -> the future of its analysis in a worker thread
        self.answer_within_s = ANSWER_WITHIN_S
        self._pool: Any = None  # the worker process that lints (started on first use)
        self.exit_code = 0  # the process's exit status once the client sent `exit`

    def configure(self, options: Any) -> None:
        """Apply ``initializationOptions`` (a dict; unknown keys ignored)."""
        if not isinstance(options, dict):
            return
        if isinstance(options.get("target"), str):
            self.target = options["target"]
        wait = options.get("answer_within_s")
        if isinstance(wait, (int, float)) and not isinstance(wait, bool) and 0 <= wait <= 60:
            self.answer_within_s = float(wait)
        select, ignore = options.get("select"), options.get("ignore")
        if select is not None or ignore is not None:
            try:
                self.codes = select_codes(_as_list(select), _as_list(ignore))
            except UsageError as exc:
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=f"tiletune: {exc}"))

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve over stdio with :func:`tiletune.lint.lsp_io.serve` (survives malformed messages)."""
        from threading import Event

        from pygls.io_ import StdoutWriter

        from .lsp_io import ChunkReader, serve

        self._stop_event = Event()
        reader = ChunkReader(stdin or sys.stdin.buffer, self.thread_pool)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(serve(self._stop_event, reader, self.protocol, log, self.report_server_error))
        except BrokenPipeError:
            log.error("Connection to the client is lost! Shutting down the server.")
        except KeyboardInterrupt:
            pass
        except SystemExit as exc:  # `exit`: 0 after `shutdown`, 1 without (the LSP's rule); run_lsp returns it
            self.exit_code = exc.code if isinstance(exc.code, int) else 1
        finally:
            self.shutdown()
            self._stop_pool()

    def _worker_pool(self) -> Any:
        """The one worker process analyses run in (spawned: a 1 MB parse holds a thread's GIL for seconds,
        so only another process keeps the request loop answering)."""
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_exit_with_parent)
        return self._pool

    def _stop_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        processes = list(getattr(pool, "_processes", {}).values())  # a running analysis must not delay exit
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.kill()

    def _open_document(self, uri: str) -> Any:
        """The open document ``uri`` (None for a URI the client never opened: never read from disk)."""
        try:
            return self.workspace.text_documents.get(uri)
        except Exception:  # noqa: BLE001 - a workspace not initialised yet
            return None

    def _key(self, doc: Any) -> tuple:
        return (doc.version, doc.source, self.target, self.codes)

    def cached(self, uri: str) -> tuple[Any, Optional[list[Diagnostic]]]:
        """The open document and its findings when they are known for its current version, else None."""
        doc = self._open_document(uri)
        if doc is None:
            return None, None
        hit = self._cache.get(uri)
        return doc, (hit[1] if hit is not None and hit[0] == self._key(doc) else None)

    def lint_document(self, uri: str) -> tuple[Any, list[Diagnostic]]:
        """The document and its tiletune diagnostics, computed here and now (cached per version);
        ``(None, [])`` for a URI that was never opened."""
        doc, diags = self.cached(uri)
        if doc is None or diags is not None:
            return doc, diags or []
        key = self._key(doc)
        diags = _lint(doc.source, doc.path or uri, self.target, self.codes)
        self._cache[uri] = (key, diags)
        return doc, diags

    def analyse(self, uri: str) -> None:
        """Lint the current version of ``uri`` in the worker thread and publish it (on the loop).

        At most one analysis per document runs; a newer version arriving
        meanwhile is analysed once that one ends (never the versions between).
        """
        doc, diags = self.cached(uri)
        if doc is None:
            return
        if diags is not None:
            self._publish(uri, doc, diags)
            return
        if uri in self._running:
            return  # _finished starts the newest version
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (direct calls): lint here
            self.publish(uri)
            return
        key = self._key(doc)
        self._say(f"tiletune: analysing {uri} version {doc.version}")
        try:
            future = loop.run_in_executor(self._worker_pool(), _lint, doc.source, doc.path or uri, self.target,
                                          self.codes)
        except Exception as exc:  # noqa: BLE001 - no worker process (a broken pool): lint in a thread instead
            log.warning("tiletune lsp: no lint worker process (%s); linting in a thread", exc)
            self._stop_pool()
            future = _in_thread(loop, _lint, doc.source, doc.path or uri, self.target, self.codes)
        self._running[uri] = future
        future.add_done_callback(lambda f: self._finished(uri, key, f))

    def _finished(self, uri: str, key: tuple, future: Any) -> None:
        self._running.pop(uri, None)
        try:
            diags = future.result()
        except Exception as exc:  # noqa: BLE001 - lint_source reports its own failures; anything else is logged
            log.error("tiletune lsp: linting %s failed: %s", uri, exc)
            from concurrent.futures.process import BrokenProcessPool

            if isinstance(exc, BrokenProcessPool):
                self._stop_pool()  # the worker died (a crash in a parser): the next analysis starts another
            return
        self._cache[uri] = (key, diags)
        doc = self._open_document(uri)
        if doc is None:
            return
        if self._key(doc) == key:
            self._publish(uri, doc, diags)
        else:
            self.analyse(uri)  # the document changed meanwhile: its newest version, once

    def _say(self, message: str) -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Log, message=message))
        except Exception:  # noqa: BLE001 - no client attached (direct calls)
            log.debug(message)

    def _publish(self, uri: str, doc: Any, diags: list[Diagnostic]) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=doc.version, diagnostics=[to_lsp(doc, d) for d in diags])
        )

    def publish(self, uri: str) -> None:
        """Lint ``uri`` here and now and publish the result (nothing for a URI never opened)."""
        doc, diags = self.lint_document(uri)
        if doc is not None:
            self._publish(uri, doc, diags)

    async def findings(self, uri: str, wait_s: Optional[float] = None) -> tuple[Any, list[Diagnostic]]:
        """The open document and its current findings, waiting at most ``wait_s`` (default
        ``answer_within_s``) for the analysis; ``(doc, [])`` when it is not done by then,
        ``(None, [])`` for a URI never opened."""
        wait_s = self.answer_within_s if wait_s is None else wait_s
        doc, diags = self.cached(uri)
        if doc is None or diags is not None:
            return doc, diags or []
        self.analyse(uri)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while loop.time() < deadline:
            await asyncio.sleep(0.02)
            doc, diags = self.cached(uri)
            if doc is None or diags is not None:
                return doc, diags or []
        return doc, []

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
            self.analyse(uri)

        self._pending[uri] = loop.call_later(delay, fire)

    def forget(self, uri: str) -> None:
        """Drop the cache and any pending publish of a closed document."""
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self._cache.pop(uri, None)


def _exit_with_parent() -> None:
    """In the lint worker: end this process as soon as the server's process ends, however it ends.

    A killed server (an editor's SIGKILL) closes nothing the worker waits on (the
    worker holds both ends of its task queue), so without this the worker and
    its resource tracker ran on forever, orphaned, holding the editor's stderr.
    The parent's sentinel becomes ready when the parent exits: no polling.
    """
    import multiprocessing
    from multiprocessing.connection import wait

    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="tiletune-parent-watch", daemon=True).start()


def _in_thread(loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> "asyncio.Future[Any]":
    """``fn(*args)`` in a daemon thread (an analysis never holds up the server's exit), as a future of ``loop``."""
    future: asyncio.Future = loop.create_future()

    def settle(result: Any, error: Optional[BaseException]) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def work() -> None:
        try:
            outcome: tuple = (fn(*args), None)
        except BaseException as exc:  # noqa: BLE001 - handed to the loop
            outcome = (None, exc)
        try:
            loop.call_soon_threadsafe(settle, *outcome)
        except RuntimeError:  # the loop is closed: the server is exiting
            pass

    threading.Thread(target=work, name="tiletune-lint", daemon=True).start()
    return future


def _lint(source: str, path: str, target: str, codes: Any) -> list[Diagnostic]:
    """Lint one document's text (runs in the worker thread; reads other modules only from disk)."""
    # project=True: rules may read this kernel's launches in the package's other
    # modules (from disk), as `tiletune lint` does; this document is read from the buffer.
    return lint_source(source, path, target=target, codes=codes, project=os.path.isfile(path))


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


async def code_actions(ls: TiletuneLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Quick fixes for the fixable tiletune diagnostics in the requested range (none for a URI never
    opened, or while the current version's analysis has not ended within ``ANSWER_WITHIN_S``)."""
    only = params.context.only
    if only and not any(str(k).startswith(types.CodeActionKind.QuickFix.value) for k in only):
        return []
    uri = params.text_document.uri
    doc, diags = await ls.findings(uri)
    if doc is None:
        return []
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
        ls.analyse(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def _did_change(ls: TiletuneLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.publish_later(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def _did_save(ls: TiletuneLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.analyse(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def _did_close(ls: TiletuneLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=False),
    )
    async def _code_action(ls: TiletuneLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return await code_actions(ls, params)

    return server
