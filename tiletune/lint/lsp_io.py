"""The language server's message loop: JSON-RPC over a byte stream that survives a bad message.

pygls's own loop keeps a message's length only from a header that matches
exactly; after one ``Content-Length: abc`` the unread body is glued to the
next header line and no later header ever matches again, so the server
never answers again.  :func:`serve` reads the same framing but logs and
skips what it cannot use and finds the next message:

* a length that is not a number, is over :data:`MAX_BODY_BYTES`, or
  disagrees with a second ``Content-Length`` of the same message: the body is
  skipped, and the next header is found even when it follows the junk on one
  line;
* a length larger than the body that was sent (``Content-Length: 10000000``
  and then ``{}``): a JSON body never holds ``Content-Length: N`` followed by
  a raw line break (JSON strings escape line breaks, and outside a string the
  text is not a JSON token), so one showing up inside the body being read is
  the next message's header: the short body is dropped and reading goes on
  from that header, at once, instead of swallowing the messages that follow;
* a request after ``shutdown`` is answered with InvalidRequest (-32600).
* a body that is not JSON, not UTF-8 or not a message: logged and skipped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from typing import Any, Awaitable, Callable, Optional

__all__ = ["MAX_BODY_BYTES", "serve", "parse_length", "ChunkReader", "next_header_at"]

#: Largest message body read (a 1 MB document sent whole, several times over).
MAX_BODY_BYTES = 64 << 20

_HEADER = re.compile(rb"Content-Length:[ \t]*([^\r\n]*?)[ \t]*\r?\n?$", re.IGNORECASE)
#: A header line beginning inside bytes read as a body: the start of the next message.
_HEADER_START = re.compile(rb"(Content-Length:)[ \t]*[0-9]+[ \t]*\r?\n", re.IGNORECASE)
_NAME = b"Content-Length:"
#: A header line cut off by the end of a body region: a prefix of ``Content-Length: 123``.
_CUT_HEADER = re.compile(
    rb"(?:" + rb"|".join(re.escape(_NAME[:k]) for k in range(1, len(_NAME))) + rb"|Content-Length:[ \t]*[0-9]*[ \t]*\r?)\Z",
    re.IGNORECASE)
#: Bytes read at a time.
CHUNK = 1 << 16


def parse_length(line: bytes) -> tuple[bool, Optional[int]]:
    """``(is a Content-Length header, its usable value or None)`` for one header line.

    The header is found at the end of the line, so a body left unread (its
    length was bad) and glued to the next header does not hide that header.
    """
    found = _HEADER.search(line)
    if found is None:
        return False, None
    value = found.group(1)
    if not value.isdigit() or not 0 < int(value) <= MAX_BODY_BYTES:
        return True, None
    return True, int(value)


def next_header_at(data: bytes, length: int, start: int = 0) -> int:
    """Where a ``Content-Length`` header begins in the first ``length`` bytes of ``data`` (-1: none).

    ``data`` is read as a message body of ``length`` bytes.  A JSON-RPC body
    never contains ``Content-Length: N`` and a raw line break (JSON strings
    escape line breaks; outside a string the text is no JSON token), and never
    ends in a piece of such a line (it ends with ``}`` or ``]``): either is the
    next message's header, the body having been shorter than announced.
    ``start``: where to begin looking (bytes before it were looked at already).
    """
    found = _HEADER_START.search(data, start)
    if found is not None and found.start(1) < length:
        return found.start(1)
    if len(data) >= length:
        cut = _CUT_HEADER.search(data, 0, length)
        if cut is not None:
            return cut.start()
    return -1


class ChunkReader:
    """Reads whatever a binary stream has ready (``read1``), up to ``n`` bytes, in ``executor``'s threads."""

    def __init__(self, stream: Any, executor: Any = None) -> None:
        self.stream = stream
        self.executor = executor

    def read_some(self, n: int) -> Awaitable[bytes]:
        """At least one byte (b"" at the end of the stream), at most ``n``."""
        read = getattr(self.stream, "read1", None) or self.stream.read
        return asyncio.get_running_loop().run_in_executor(self.executor, read, n)


class _Buffer:
    """Bytes read and not yet used, over a :class:`ChunkReader`."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.data = b""
        self.eof = False

    async def fill(self) -> bool:
        """Read more; False at the end of the stream."""
        if self.eof:
            return False
        chunk = await self.reader.read_some(CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.data += chunk
        return True

    async def line(self) -> bytes:
        """The next line with its ``\\n`` (the rest of the stream at its end)."""
        while b"\n" not in self.data:
            if not await self.fill():
                rest, self.data = self.data, b""
                return rest
        end = self.data.index(b"\n") + 1
        out, self.data = self.data[:end], self.data[end:]
        return out

    async def body(self, length: int) -> Optional[bytes]:
        """``length`` bytes, or None when the next message's header shows up first (the rest is kept)."""
        scanned = 0
        while True:
            at = next_header_at(self.data, length, max(0, scanned - 256))  # a header cut by the last read
            if at >= 0:
                self.data = self.data[at:]
                return None
            if len(self.data) >= length:
                out, self.data = self.data[:length], self.data[length:]
                return out
            scanned = len(self.data)
            if not await self.fill():
                self.data = b""
                return None


async def serve(stop_event: threading.Event, reader: Any, protocol: Any, logger: logging.Logger,
                error_handler: Optional[Callable[[Exception, Any], Any]] = None) -> None:
    """Read framed messages from ``reader`` (a :class:`ChunkReader`: ``read_some(n)`` awaitables) and hand
    each to ``protocol.handle_message`` until EOF or ``stop_event``; a bad message is logged and skipped."""
    buf = _Buffer(reader)
    length: Optional[int] = None
    bad = False  # a Content-Length of this message was unusable or contradicted
    while not stop_event.is_set():
        line = await buf.line()
        if not line:
            break
        is_length, value = parse_length(line)
        if is_length:
            if value is None or (length is not None and value != length):
                if not bad:
                    logger.error("tiletune lsp: ignoring a message with a bad header %r", line[-200:])
                bad, length = True, None
            elif not bad:
                length = value
            continue
        if line.strip():
            continue  # another header (Content-Type), or the rest of a skipped body
        if length is None or bad:
            length, bad = None, False
            continue  # headers without a usable length: its body is skipped line by line
        body = await buf.body(length)
        length = None
        if body is None:
            if buf.eof and not buf.data:
                break
            logger.error("tiletune lsp: ignoring a message whose body is shorter than its Content-Length")
            continue
        _handle(body, protocol, logger, error_handler)


def _handle(body: bytes, protocol: Any, logger: logging.Logger,
            error_handler: Optional[Callable[[Exception, Any], Any]]) -> None:
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
        if _refused_after_shutdown(message, protocol):
            return
        protocol.handle_message(message)
    except Exception as exc:  # noqa: BLE001 - one bad message must not end the session
        logger.error("tiletune lsp: ignoring a message that could not be handled (%s: %s)",
                     type(exc).__name__, str(exc)[:200])
        if error_handler is not None:
            try:
                from pygls.exceptions import JsonRpcException

                error_handler(exc, JsonRpcException)
            except Exception:  # noqa: BLE001 - reporting is best effort
                pass


def _refused_after_shutdown(message: Any, protocol: Any) -> bool:
    """Answer a request that comes after ``shutdown`` with InvalidRequest, as the LSP asks (pygls drops
    it silently, and the client then waits for an answer forever); True when answered."""
    method = getattr(message, "method", None)
    msg_id = getattr(message, "id", None)
    if not getattr(protocol, "_shutdown", False) or msg_id is None or not isinstance(method, str) or method == "exit":
        return False
    from pygls.exceptions import JsonRpcInvalidRequest

    error = JsonRpcInvalidRequest(f"the server is shutting down; {method} is not served after shutdown")
    protocol._send_response(msg_id, None, error.to_response_error())
    return True
