"""How long ``tiletune lsp`` takes to answer ``codeAction`` on a 1 MB document right after ``didOpen``.

``python bench/lsp_latency.py`` (from the repository root) builds a ~1 MB
document of copies of the LSP test's kernels, starts the server, opens the
document and sends three code actions one after the other; it prints each
answer's latency.  The server answers within ``answer_within_s`` (1.5 s)
whatever the analysis takes.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_lsp import SOURCE  # noqa: E402
from tests.test_lsp_hardening import _frame, _read_response, _request  # noqa: E402


def big_document(size: int = 1 << 20) -> str:
    """Copies of the LSP test's kernels (renamed) until ``size`` characters."""
    head = "import triton\nimport triton.language as tl\n"
    body = SOURCE.replace(head, "")
    parts, i = [head], 0
    while sum(map(len, parts)) < size:
        parts.append(body.replace("add_kernel", f"add_kernel_{i}").replace("row_sum_kernel", f"row_sum_kernel_{i}")
                     .replace("def add(", f"def add_{i}(").replace("def row_sum(", f"def row_sum_{i}("))
        i += 1
    return "".join(parts)


def main() -> int:
    text = big_document()
    proc = subprocess.Popen([sys.executable, "-m", "tiletune.lint", "lsp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        proc.stdin.write(_request(1, "initialize", {"capabilities": {}, "processId": None, "rootUri": None}))
        proc.stdin.flush()
        _read_response(proc, 1)
        uri = "file:///tmp/lsp_latency/big_doc.py"
        opened = time.perf_counter()
        proc.stdin.write(_frame(json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}}).encode()))
        params = {"textDocument": {"uri": uri}, "context": {"diagnostics": []},
                  "range": {"start": {"line": 0, "character": 0}, "end": {"line": 10, "character": 0}}}
        for i in range(2, 5):
            t0 = time.perf_counter()
            proc.stdin.write(_request(i, "textDocument/codeAction", params))
            proc.stdin.flush()
            answer = _read_response(proc, i)
            print(f"codeAction {i - 1} on a {len(text) / 1e6:.2f} MB document: answered in "
                  f"{time.perf_counter() - t0:.2f} s ({len(answer.get('result') or [])} actions), "
                  f"{time.perf_counter() - opened:.2f} s after didOpen")
    finally:
        proc.kill()
        proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
