"""End to end: ``python -m tiletune.lint lsp`` driven by a real LSP client
(pytest-lsp): open a document, receive the diagnostics, request a quick fix,
apply it, and see the diagnostics go."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).resolve().parent.parent

SOURCE = '''\
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE": 1024}, num_warps=4), triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)],
    key=["n_elements"],
)
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_N: tl.constexpr = 1024):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    v = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(v, axis=0))


def add(x, y, out):
    n = out.numel()
    BLOCK_SIZE = 1024
    add_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n, BLOCK_SIZE=1024)


def row_sum(x, out):
    row_sum_kernel[(x.shape[0],)](x, out, x.shape[1])
'''

# configs=[] in a module that never enables tiletune: TT005, which has no fix.
NO_TILETUNE = SOURCE.replace(
    '''configs=[triton.Config({"BLOCK_SIZE": 1024}, num_warps=4), triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)]''',
    "configs=[]",
)

URI = "file:///tmp/tiletune_lsp_test/add.py"


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "tiletune.lint", "lsp"], server_env=None),
)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri="file:///tmp/tiletune_lsp_test",
            initialization_options={"target": "h100"},
        )
    )
    yield
    await lsp_client.shutdown_session()


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (ASCII text: UTF-16 units == characters)."""
    lines = text.splitlines(keepends=True)

    def offset(p: types.Position) -> int:
        return sum(len(line) for line in lines[: p.line]) + p.character

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
        lines = text.splitlines(keepends=True)
    return text


async def open_and_wait(client: LanguageClient, text: str, version: int = 1) -> list[types.Diagnostic]:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=URI, language_id="python", version=version, text=text)
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[URI]


async def change_and_wait(client: LanguageClient, text: str, version: int) -> list[types.Diagnostic]:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[URI]


async def quick_fixes(client: LanguageClient, diag: types.Diagnostic) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag], only=[types.CodeActionKind.QuickFix]),
        )
    )
    return [a for a in (result or []) if isinstance(a, types.CodeAction)]


@pytest.mark.asyncio
async def test_diagnostics_then_quick_fixes(client: LanguageClient):
    from tiletune.lint import lint_source
    from tiletune.lint.fixes import apply_fix

    diags = await open_and_wait(client, SOURCE)
    by_code = {d.code: d for d in diags}
    assert set(by_code) == {"TT001", "TT002"}
    assert all(d.source == "tiletune" for d in diags)
    tt001 = by_code["TT001"]
    assert tt001.range.start.line == 19  # 0-based: line 20 of the file
    assert SOURCE.splitlines()[19][tt001.range.start.character:tt001.range.end.character] == "BLOCK_N"
    assert "row_sum_kernel" in tt001.message and "BLOCK_N" in tt001.message
    assert await quick_fixes(client, tt001) == []  # dropping a default could change what runs

    # One fix after another, each re-published by the server after the change;
    # each quick fix is exactly the fix `tiletune lint --fix` makes.
    text, version = SOURCE, 1
    for code in ("TT002", "TT003"):
        diag = next(d for d in client.diagnostics[URI] if d.code == code)
        actions = await quick_fixes(client, diag)
        assert len(actions) == 1, actions
        action = actions[0]
        assert action.kind == types.CodeActionKind.QuickFix and code in action.title
        assert action.diagnostics and action.diagnostics[0].code == code
        edits = action.edit.changes[URI]
        new_text = apply_edits(text, edits)
        (cli_diag,) = [d for d in lint_source(text, "add.py") if d.code == code]
        assert new_text == apply_fix(text, cli_diag)
        text = new_text
        ast.parse(text)
        version += 1
        remaining = await change_and_wait(client, text, version)
        assert code not in {d.code for d in remaining}

    assert [d.code for d in client.diagnostics[URI]] == ["TT001"]
    assert 'add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)' in text


@pytest.mark.asyncio
async def test_no_actions_outside_the_range_and_for_unfixable(client: LanguageClient):
    diags = await open_and_wait(client, NO_TILETUNE)
    tt005 = next(d for d in diags if d.code == "TT005")
    assert tt005.severity == types.DiagnosticSeverity.Error
    assert await quick_fixes(client, tt005) == []
    far = types.Diagnostic(range=types.Range(start=types.Position(0, 0), end=types.Position(0, 3)), message="")
    assert await quick_fixes(client, far) == []


@pytest.mark.asyncio
async def test_lsp_reports_what_the_cli_reports(client: LanguageClient):
    """The same rules, the same precision: the server's findings on a fixture
    equal ``lint_source``'s (codes, positions, messages)."""
    from tiletune.lint import lint_source

    for path in sorted((ROOT / "fixtures").glob("*.py"))[:6] + [None]:
        text = SOURCE if path is None else path.read_text()
        version = getattr(test_lsp_reports_what_the_cli_reports, "_v", 0) + 1
        test_lsp_reports_what_the_cli_reports._v = version
        if version == 1:
            diags = await open_and_wait(client, text)
        else:
            diags = await change_and_wait(client, text, version)
        want = [(d.code, d.line - 1, d.column, d.message) for d in lint_source(text, "add.py")]
        got = [(d.code, d.range.start.line, d.range.start.character, d.message) for d in diags]
        assert got == want, path


@pytest.mark.asyncio
async def test_syntax_error_then_fixed(client: LanguageClient):
    diags = await open_and_wait(client, "import triton\n@triton.jit\ndef k(:\n")
    assert [d.code for d in diags] == ["TT000"]
    diags = await change_and_wait(client, (ROOT / "fixtures" / "vector_add.py").read_text(), 2)
    assert list(diags) == []


@pytest.mark.asyncio
async def test_save_republishes_and_close_clears(client: LanguageClient):
    await open_and_wait(client, SOURCE)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert {d.code for d in client.diagnostics[URI]} == {"TT001", "TT002"}
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[URI]) == []


@pytest.mark.asyncio
async def test_burst_of_changes_publishes_the_last(client: LanguageClient):
    await open_and_wait(client, SOURCE)
    clean = (ROOT / "fixtures" / "vector_add.py").read_text()
    for version, text in ((2, clean), (3, SOURCE), (4, NO_TILETUNE)):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert "TT005" in {d.code for d in client.diagnostics[URI]}


def test_ranges_are_in_utf16_units():
    from pygls.workspace import TextDocument

    from tiletune.lint import lint_source
    from tiletune.lint.server import to_lsp

    text = SOURCE.replace(
        "add_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n, BLOCK_SIZE=1024)",
        'add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, "\U0001F600", BLOCK_SIZE=1024)',
    )
    (d,) = [d for d in lint_source(text, "t.py") if d.code == "TT002"]
    doc = TextDocument(URI, text)
    r = to_lsp(doc, d).range
    line = text.splitlines()[d.line - 1]
    assert d.column == line.index("BLOCK_SIZE=")
    assert r.start.character == d.column + 1  # the emoji is two UTF-16 code units
    assert r.end.character - r.start.character == len("BLOCK_SIZE=1024")
