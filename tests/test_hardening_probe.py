"""Hardening, second round (issue 26): the cases an adversarial probe found failing, on real files,
kernels, processes and byte streams (docs/hardening.md lists every probe case and its result)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import select
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest
import torch
import triton

import tiletune
from tiletune.errors import SynthesisError, TiletuneCacheWarning, TiletuneWarning
from tests import hardening_kernels as hk

ROOT = Path(__file__).resolve().parent.parent


def _warnings_of(category, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [str(w.message) for w in caught if issubclass(w.category, category)]


# ----- paths -------------------------------------------------------------------------------------------
def test_a_socket_named_k_py_is_called_a_socket(tmp_path):
    """``open`` of a socket fails with ENXIO ("No such device or address"); the reader says what it is."""
    from tiletune.analysis.source import read_source
    from tiletune.errors import AnalysisError
    from tiletune.files import UnreadableFileError, read_regular_bytes

    path = tmp_path / "k.py"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
        with pytest.raises(UnreadableFileError, match="is a socket, not a regular file"):
            read_regular_bytes(path)
        with pytest.raises(AnalysisError, match=r"k\.py: is a socket"):
            read_source(str(path))
    finally:
        sock.close()


# ----- explain reads only cache files ---------------------------------------------------------------------
@pytest.fixture
def tuned_cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILETUNE_ALWAYS_TUNE", raising=False)
    x = torch.arange(256, dtype=torch.float32)
    out = torch.empty(100)
    kernel = tiletune.autotune(configs=[], key=["n"])(hk.copy_even)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kernel[lambda m: (triton.cdiv(100, m["BLOCK"]),)](x, out, 100)
    return tmp_path / "cache"


@pytest.mark.parametrize("name, status, said", [
    ("/etc/passwd", 2, "is not a tiletune cache file"),
    ("../../etc/passwd", 2, "contains '..'"),
    ("no_such_kernel", 1, "no cache file for 'no_such_kernel'"),
])
def test_explain_refuses_files_outside_the_cache(tuned_cache, capsys, name, status, said):
    """`tiletune explain /etc/passwd` used to read the file and say "unreadable (invalid JSON)", exit 0."""
    from tiletune.runtime.cache_cli import run_explain

    assert run_explain(name, tuned_cache, sys.stdout) == status
    captured = capsys.readouterr()
    assert said in captured.err and captured.out == ""


def test_explain_of_a_kernel_source_explains_its_cache_entries(tuned_cache, capsys):
    from tiletune.runtime.cache_cli import run_explain

    source = ROOT / "tests" / "hardening_kernels.py"
    before = source.read_bytes()
    assert run_explain(str(source), tuned_cache, sys.stdout) == 0
    out = capsys.readouterr().out
    assert out.startswith("kernel copy_even") and "BLOCK" in out
    assert source.read_bytes() == before


# ----- a cache entry holds only what tiletune writes ---------------------------------------------------------
def test_entry_with_a_field_tiletune_never_writes_is_refused_and_retuned(tuned_cache):
    (path,) = (tuned_cache / "kernel").glob("copy_even-*.json")
    data = json.loads(path.read_text())
    (key,) = data["entries"]
    data["entries"][key]["config"]["pre_hook"] = "__import__('os').system('echo pwned')"
    path.write_text(json.dumps(data))
    x = torch.arange(256, dtype=torch.float32)
    buf = torch.full((256,), -1.0)
    kernel = tiletune.autotune(configs=[], key=["n"])(hk.copy_even)
    _, said = _warnings_of(TiletuneCacheWarning,
                           lambda: kernel[lambda m: (triton.cdiv(100, m["BLOCK"]),)](x, buf[:100], 100))
    assert len(said) == 1 and "pre_hook" in said[0] and str(path) in said[0], said
    assert kernel.configs_timings, "the entry was used instead of re-tuning"
    assert torch.equal(buf[:100], x[:100] * 2) and bool((buf[100:] == -1).all())
    assert "pre_hook" not in json.loads(path.read_text())["entries"][key]["config"]  # replaced


@pytest.mark.parametrize("extra, said", [
    ({"num_ctas": 0}, "num_ctas=0"),
    ({"num_ctas": "2"}, "num_ctas='2'"),
    ({"maxnreg": "x"}, "maxnreg='x'"),
    ({"maxnreg": 100000}, "maxnreg=100000"),
])
def test_launch_options_in_extra_are_checked(extra, said):
    from tiletune.runtime.cache_validate import config_problems

    problems = config_problems({"kwargs": {"BLOCK": 64}, "num_warps": 4, "extra": extra}, kernel_name="k",
                               arg_names=["x_ptr", "BLOCK"], spec=None)
    assert any(said in p for p in problems), problems
    assert config_problems({"kwargs": {"BLOCK": 64}, "extra": {"num_ctas": 2, "maxnreg": 128}, "pre_hook": None},
                           kernel_name="k", arg_names=["x_ptr", "BLOCK"], spec=None) == []


# ----- environment variables ------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["abc", "-5", "0", "1e3", "99999999999999999999"])
def test_retime_rounds_junk_warns_and_keeps_the_default(monkeypatch, value):
    """``TILETUNE_RETIME_ROUNDS=99999999999999999999`` used to be taken as is (that many re-timing rounds)."""
    from tiletune.runtime import env, measure

    env._warned.clear()
    monkeypatch.delenv("TILETUNE_RETIME_ROUNDS", raising=False)
    default = measure._retime_rounds()
    monkeypatch.setenv("TILETUNE_RETIME_ROUNDS", value)
    got, said = _warnings_of(TiletuneWarning, measure._retime_rounds)
    if value == "0":
        assert got == 0 and said == []
    else:
        assert got == default and len(said) == 1 and "TILETUNE_RETIME_ROUNDS" in said[0] and value in said[0]


@pytest.mark.parametrize("name, read", [
    ("TILETUNE_COMPILE_THREADS", lambda: __import__("tiletune.runtime.compile_facts", fromlist=["x"]).max_workers(4)),
    ("TILETUNE_LINT_JOBS", lambda: __import__("tiletune.lint.runner", fromlist=["x"]).default_jobs(None, 64)),
])
def test_a_count_that_is_not_a_positive_integer_warns(monkeypatch, name, read):
    from tiletune.runtime import env

    env._warned.clear()
    monkeypatch.setenv(name, "lots")
    got, said = _warnings_of(TiletuneWarning, read)
    assert got >= 1 and len(said) == 1 and f"{name}='lots'" in said[0], said


def test_a_switch_set_to_junk_warns_once_naming_it(monkeypatch):
    from tiletune.runtime import env
    from tiletune.runtime.cache import always_tune, strict_version_check

    env._warned.clear()
    monkeypatch.setenv("TILETUNE_ALWAYS_TUNE", "yess")
    monkeypatch.setenv("TILETUNE_VERSION_CHECK", "strict")
    (on, strict), said = _warnings_of(TiletuneWarning, lambda: (always_tune(), strict_version_check()))
    assert not on and strict
    assert len(said) == 1 and "TILETUNE_ALWAYS_TUNE='yess'" in said[0], said
    _, again = _warnings_of(TiletuneWarning, always_tune)
    assert again == []  # once per value


def test_a_bad_tiletune_target_names_the_variable(monkeypatch):
    from tiletune.runtime.targets import resolve_target

    monkeypatch.setenv("TILETUNE_TARGET", "garbage")
    with pytest.raises(SynthesisError, match="TILETUNE_TARGET='garbage': unknown target"):
        resolve_target()
    assert resolve_target("h100").name == "h100"  # an explicit target does not read it


# ----- the LSP message loop ----------------------------------------------------------------------------------
class _Received:
    """The protocol end of :func:`serve`: what it hands on, in order."""

    def __init__(self) -> None:
        self.messages: list = []

    @staticmethod
    def structure_message(data):
        return data

    def handle_message(self, message) -> None:
        self.messages.append(message)


def _frame(obj, length=None) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


def _serve(stream: bytes) -> list:
    from tiletune.lint.lsp_io import ChunkReader, serve

    received = _Received()
    asyncio.run(serve(threading.Event(), ChunkReader(io.BytesIO(stream)), received, logging.getLogger("probe")))
    return received.messages


@pytest.mark.parametrize("junk", [
    b"Content-Length: 10000000\r\n\r\n{}",  # a length far past the body sent
    b"Content-Length: 60\r\n\r\n{\"a\": 1}\r\n",  # a length a little past it, ending in a line break
    b"Content-Length: 2\r\nContent-Length: 5\r\n\r\n{}",  # two lengths that disagree
    b"Content-Length: 7\r\n\r\n{\"a\": ",  # a body cut short
    b"Content-Length: 9\r\n\r\n{\"a\": 1}",  # one byte too many: the next header would lose its "C"
])
def test_the_message_after_a_bad_frame_is_read(junk):
    """A body shorter than its Content-Length used to swallow the messages that followed it."""
    after = {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}
    got = _serve(_frame({"jsonrpc": "2.0", "method": "first"}) + junk + _frame(after))
    assert got[0] == {"jsonrpc": "2.0", "method": "first"} and got[-1] == after, got


def test_a_document_that_mentions_content_length_is_read_whole():
    text = "# Content-Length: 5\r\n\r\n{}\nContent-Length: 12\n"
    message = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"text": text}}
    assert _serve(_frame(message) + _frame({"jsonrpc": "2.0", "method": "x"})) == [
        message, {"jsonrpc": "2.0", "method": "x"}]


class _Server:
    """A real ``tiletune lsp`` process, driven over its stdin/stdout."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tiletune.lint", "lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT)
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, id_: int, method: str, params) -> dict:
        self.send(_frame({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}))
        return self.response(id_)

    def response(self, want: int, limit_s: float = 300) -> dict:
        fd = self.proc.stdout.fileno()
        while True:
            while b"\r\n\r\n" not in self.buf:
                assert select.select([fd], [], [], limit_s)[0], f"no answer to request {want}"
                chunk = os.read(fd, 65536)
                assert chunk, "the server exited"
                self.buf += chunk
            head, rest = self.buf.split(b"\r\n\r\n", 1)
            length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
            while len(rest) < length:
                assert select.select([fd], [], [], limit_s)[0], "the server stopped mid-message"
                rest += os.read(fd, 65536)
            message, self.buf = json.loads(rest[:length]), rest[length:]
            if message.get("id") == want:
                return message

    def initialize(self) -> None:
        assert "capabilities" in self.request(1, "initialize", {"capabilities": {}, "processId": None,
                                                                 "rootUri": None})["result"]

    def exit_status(self) -> int:
        self.send(_frame({"jsonrpc": "2.0", "method": "exit"}))
        return self.proc.wait(timeout=300)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=300)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except BrokenPipeError:
                pass


_NOWHERE = {"textDocument": {"uri": "file:///never/opened.py"},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": []}}


def test_server_answers_after_a_short_body_refuses_requests_after_shutdown_and_exits_0():
    server = _Server()
    try:
        server.initialize()
        server.send(b"Content-Length: 10000000\r\n\r\n{}")  # used to swallow every later message
        assert server.request(2, "textDocument/codeAction", _NOWHERE)["result"] == []
        assert "error" not in server.request(3, "shutdown", None)
        after = server.request(4, "textDocument/codeAction", _NOWHERE)  # used to get no answer at all
        assert after["error"]["code"] == -32600, after
        assert server.exit_status() == 0
    finally:
        server.close()


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")  # exited (a zombie waits for its new parent to reap it)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree from /proc")
def test_exit_without_shutdown_is_status_1_and_a_killed_server_leaves_no_worker():
    server = _Server()
    try:
        server.initialize()
        assert server.exit_status() == 1  # the LSP's rule; it used to be 0
    finally:
        server.close()
    server = _Server()
    try:
        server.initialize()
        source = (ROOT / "fixtures" / "vector_add.py").read_text()
        server.send(_frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": "file:///tmp/tiletune_probe/k.py", "languageId": "python", "version": 1, "text": source}}}))
        server.request(2, "textDocument/codeAction", dict(_NOWHERE, textDocument={
            "uri": "file:///tmp/tiletune_probe/k.py"}))
        workers = _children(server.proc.pid)
        assert workers, "the server started no lint worker"
        server.proc.kill()  # an editor's SIGKILL: nothing is closed in order
        server.proc.wait(timeout=300)
        for _ in range(30000):  # the worker sees its parent's sentinel at once; the bound only ends a broken run
            if all(_gone(pid) for pid in workers):
                break
            time.sleep(0.01)
        assert all(_gone(pid) for pid in workers), "the lint worker outlived a killed server"
    finally:
        server.close()


# ----- the function tuner ------------------------------------------------------------------------------------
@pytest.mark.parametrize("field, value", [("warmup", "x"), ("rep", -1), ("rep", 2.5), ("warmup", float("nan"))])
def test_function_tuner_counts_that_are_not_counts_are_named(tmp_path, field, value):
    """``warmup="x"`` was a bare ``ValueError: invalid literal for int()``; ``rep=-1`` was taken as is."""
    from tiletune.errors import TuningError
    from tiletune.runtime.function_tuner import FunctionTuner

    with pytest.raises(TuningError, match=f"{field}={value!r} is not a number of calls"):
        FunctionTuner(lambda x, *, c: x * c, [{"c": 1}, {"c": 2}], None, cache_dir=tmp_path, **{field: value})


# ----- what a cache file holds reaches the terminal as text ------------------------------------------------------
def test_cache_show_and_list_escape_terminal_control_sequences(tmp_path, capsys):
    """A key or value holding ``ESC ]0;...BEL`` (retitles the terminal; other sequences rewrite the screen)
    was printed raw by ``tiletune cache show``; a cache directory of someone else's is shown with --dir."""
    from tiletune.runtime.cache import TuningCache, entry_key
    from tiletune.runtime.cache_cli import main

    hostile = "\x1b]0;owned\x07\x1b[2J\u202e"
    cache = TuningCache("k", "def k(): pass", directory=tmp_path,
                        fingerprint={"tiletune": "0", "triton": "0", "torch": "0", "python": "0"})
    cache.put(entry_key({"key": [hostile]}), {"config": {"kwargs": {"BLOCK": hostile}}, "method": hostile})
    for argv in (["show", "k", "--dir", str(tmp_path)], ["list", "--dir", str(tmp_path)],
                 ["show", "k", "--json", "--dir", str(tmp_path)]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out, (argv, out)
    main(["show", "k", "--dir", str(tmp_path)])
    assert "\\x1b]0;owned\\x07" in capsys.readouterr().out  # shown, escaped


# ----- the probe's path and argument cases that already held, kept as tests (in-process: fast) --------------------
_KERNEL = (ROOT / "fixtures" / "vector_add.py").read_bytes()
_PATHS = {  # file name -> bytes; expected: exit status of `tiletune analyze` and a piece of its output or error
    "with space.py": (_KERNEL, 0, "add_kernel"),
    "ünï.py": (_KERNEL, 0, "add_kernel"),
    "new\nline.py": (_KERNEL, 0, "add_kernel"),
    "bom.py": (b"\xef\xbb\xbf" + _KERNEL, 0, "add_kernel"),
    "crlf.py": (_KERNEL.replace(b"\n", b"\r\n"), 0, "add_kernel"),
    "latin.py": ("# -*- coding: latin-1 -*-\n# caf\xe9\n".encode("latin-1") + _KERNEL, 0, "add_kernel"),
    "empty.py": (b"", 0, "no Triton kernels"),
    "nul.py": (_KERNEL + b"\x00\n", 2, "null bytes"),
    "binary.py": (bytes(range(256)) * 8, 2, "binary.py"),
    "badutf.py": ("# caf\xe9\n".encode("latin-1") + _KERNEL, 2, "badutf.py"),
    "klingon.py": (b"# -*- coding: klingon -*-\n" + _KERNEL, 2, "unknown encoding: klingon"),
    "deep.py": (b"x = " + b"(" * 5000 + b"1" + b")" * 5000 + b"\n", 2, "deep.py"),
}


@pytest.mark.parametrize("name", sorted(_PATHS))
def test_analyze_any_file_name_and_encoding(tmp_path, capsys, monkeypatch, name):
    from tiletune.cli import main

    data, status, said = _PATHS[name]
    (tmp_path / name).write_bytes(data)
    monkeypatch.chdir(tmp_path)
    assert main(["analyze", name]) == status
    captured = capsys.readouterr()
    assert said in (captured.out if status == 0 else captured.err), captured
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("path, said", [
    ("", "no such file"),
    ("a" * 300 + ".py", "File name too long"),
    ("/".join(["d" * 200] * 30) + ".py", "File name too long"),
    ("/proc/self/mem", "Input/output error"),
])
def test_analyze_paths_that_cannot_be_read_are_named(capsys, path, said):
    from tiletune.cli import main

    assert main(["analyze", path]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err, err


@pytest.mark.parametrize("shape, said", [
    ("n_elements", "expects NAME=VALUE"), ("=5", "is not a parameter name"), ("n_elements=abc", "not an integer"),
    ("n_elements=1e3", "not an integer"), ("n_elements=-5", "sizes must be positive"), ("n_elements=", "not an integer"),
    ("n_elements=10**9", "not an integer"), ("n_elements=99999999999999999999", "n_elements"),
])
def test_synth_configs_shape_junk_is_a_usage_error(capsys, shape, said):
    from tiletune.cli import main

    assert main(["synth-configs", str(ROOT / "fixtures" / "vector_add.py"), "--target", "h100", "--shape", shape]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err, err
