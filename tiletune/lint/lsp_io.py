"""The language server's message loop: JSON-RPC over a byte stream that survives a bad message.

pygls's own loop keeps a message's length only from a header that matches
exactly; after one ``Content-Length: abc`` the unread body is glued to the
next header line and no later header ever matches again, so the server
never answers again.  :func:`serve` reads the same framing but logs and
skips what it cannot use (a length that is not a number, a length over
:data:`MAX_BODY_BYTES`, a body that is not JSON or not a message) and finds
the next ``Content-Length`` header even when it follows the junk on one line.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from typing import Any, Callable, Optional

__all__ = ["MAX_BODY_BYTES", "serve", "parse_length"]

#: Largest message body read (a 1 MB document sent whole, several times over).
MAX_BODY_BYTES = 64 << 20

_HEADER = re.compile(rb"Content-Length:[ \t]*([^\r\n]*?)[ \t]*\r?\n?$", re.IGNORECASE)


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


async def serve(stop_event: threading.Event, reader: Any, protocol: Any, logger: logging.Logger,
                error_handler: Optional[Callable[[Exception, Any], Any]] = None) -> None:
    """Read framed messages from ``reader`` (``readline()``/``readexactly(n)`` awaitables) and hand each
    to ``protocol.handle_message`` until EOF or ``stop_event``; a bad message is logged and skipped."""
    length: Optional[int] = None
    while not stop_event.is_set():
        line = await reader.readline()
        if not line:
            break
        is_length, value = parse_length(line)
        if is_length:
            length = value
            if value is None:
                logger.error("tiletune lsp: ignoring a message with a bad header %r", line[-200:])
            continue
        if line.strip():
            continue  # another header (Content-Type), or the rest of a skipped body
        if length is None:
            continue  # headers without a usable length: its body is skipped line by line
        body = await reader.readexactly(length)
        length = None
        if not body:
            break
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
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
