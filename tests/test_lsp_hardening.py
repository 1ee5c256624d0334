"""The language server under hostile and heavy input (issue 26), driven by real clients: a raw byte
stream for malformed messages, pytest-lsp for the rest."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.test_lsp import SOURCE

ROOT = Path(__file__).resolve().parent.parent
URI = "file:///tmp/tiletune_lsp_hardening/big.py"
SMALL_URI = "file:///tmp/tiletune_lsp_hardening/small.py"
#: A document whose analysis takes seconds (many kernels): what a request must not wait behind.
SLOW = "import triton\nimport triton.language as tl\n" + "".join(
    SOURCE.replace("import triton\nimport triton.language as tl\n", "")
    .replace("add_kernel", f"add_kernel_{i}").replace("row_sum_kernel", f"row_sum_kernel_{i}")
    .replace("def add(", f"def add_{i}(").replace("def row_sum(", f"def row_sum_{i}(")
    for i in range(6))


# ----- a raw client: malformed headers and bodies -------------------------------------------------------
def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _request(id_: int, method: str, params: dict) -> bytes:
    return _frame(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode())


def _read_response(proc: subprocess.Popen, want_id: int, limit_s: float = 120) -> dict:
    """The server's response with ``want_id`` (notifications skipped); fails instead of hanging."""
    out = proc.stdout
    buf = b""
    fd = out.fileno()
    while True:
        while b"\r\n\r\n" not in buf:
            ready, _, _ = select.select([fd], [], [], limit_s)
            assert ready, f"no answer to request {want_id} within {limit_s} s: the server stopped serving"
            chunk = os.read(fd, 65536)
            assert chunk, "the server exited"
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
        while len(buf) < length:
            ready, _, _ = select.select([fd], [], [], limit_s)
            assert ready, "the server stopped mid-message"
            buf += os.read(fd, 65536)
        message, buf = json.loads(buf[:length]), buf[length:]
        if message.get("id") == want_id:
            return message


def test_server_survives_malformed_headers_and_bodies_and_keeps_serving():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "tiletune.lint", "lsp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    try:
        proc.stdin.write(_request(1, "initialize", {"capabilities": {}, "processId": None, "rootUri": None}))
        proc.stdin.flush()
        assert "capabilities" in _read_response(proc, 1)["result"]
        junk = [
            b"Content-Length: abc\r\n\r\n" + json.dumps({"jsonrpc": "2.0", "id": 50, "method": "shutdown"}).encode(),
            b"Content-Length: -5\r\n\r\n{}",
            b"Content-Length: 99999999999999999999\r\n\r\n{}",
            _frame(b"{not json"),
            _frame(b"[1, 2, 3]"),
            _frame("\udcff".encode("utf-8", "surrogatepass")),
        ]
        for piece in junk:
            proc.stdin.write(piece)
        params = {"textDocument": {"uri": "file:///never/opened.py"},
                  "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                  "context": {"diagnostics": []}}
        proc.stdin.write(_request(2, "textDocument/codeAction", params))
        proc.stdin.flush()
        answer = _read_response(proc, 2)
        assert answer.get("result") == [] and "error" not in answer, answer
        proc.stdin.write(_request(3, "shutdown", {}))
        proc.stdin.flush()
        assert "error" not in _read_response(proc, 3)
    finally:
        proc.kill()
        proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()
        proc.stdin.close()


# ----- a real LSP client: unknown URIs, analysis off the loop, newest version wins --------------------------
@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "tiletune.lint", "lsp"], server_env=None),
)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri="file:///tmp/tiletune_lsp_hardening",
            initialization_options={"target": "h100", "answer_within_s": 0},
        )
    )
    yield
    await lsp_client.shutdown_session()


def _code_action(client: LanguageClient, uri: str):
    return client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(0, 0), end=types.Position(400, 0)),
        context=types.CodeActionContext(diagnostics=[]),
    ))


def _open(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))


def _analysed(client: LanguageClient, uri: str) -> list[int]:
    prefix = f"tiletune: analysing {uri} version "
    return [int(m.message[len(prefix):]) for m in client.log_messages if m.message.startswith(prefix)]


@pytest.mark.asyncio
async def test_unknown_uri_gets_empty_results_not_an_error(client: LanguageClient):
    assert list(await _code_action(client, "file:///never/opened/anywhere.py")) == []


@pytest.mark.asyncio
async def test_a_request_is_answered_while_a_slow_analysis_is_pending(client: LanguageClient):
    _open(client, URI, SLOW)
    answer = await _code_action(client, URI)
    assert list(answer) == []  # the analysis has not ended: no findings yet, but an answer
    assert URI not in client.diagnostics  # ... and it was answered before the analysis ended
    _open(client, SMALL_URI, "x = 1\n")
    assert list(await _code_action(client, SMALL_URI)) == []  # another document is served meanwhile too
    assert _analysed(client, URI) == [1]


@pytest.mark.asyncio
async def test_a_change_storm_never_queues_stale_versions(client: LanguageClient):
    _open(client, URI, SLOW)  # version 1: seconds of analysis, during which the storm arrives
    clean = (ROOT / "fixtures" / "vector_add.py").read_text()
    for version in range(2, 22):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=clean + f"# edit {version}\n")],
        ))
    published = []
    while not published or published[-1] != 21:
        result = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if result.uri == URI:
            published.append(result.version)
    assert published == [21]  # version 1's findings were stale when they came: never published
    assert _analysed(client, URI) == [1, 21]  # no version between was analysed
