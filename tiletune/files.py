"""Reading a file that anyone may have put in place: the one reader of source and cache files.

A path named ``kernel.py`` may be a FIFO (``open`` blocks until a writer
comes), a symlink to ``/dev/zero`` (``read`` never ends) or a huge file.
:func:`read_regular_bytes` opens with ``O_NONBLOCK``, checks with ``fstat``
on the open descriptor (no window between the check and the read) that it is
a regular file, and reads at most ``limit`` bytes; anything else is an
:class:`UnreadableFileError` naming the file, what it is and what to do.
The analysis (``read_source``, hence the module resolver, the lint, the LSP's
project reads and ``synth-configs``) and the tuning cache read through it.
"""

from __future__ import annotations

import os
import stat
from typing import Union

__all__ = ["MAX_SOURCE_BYTES", "UnreadableFileError", "read_regular_bytes", "describe_mode"]

#: Largest Python source read (the largest kernel module of the dev corpus is ~200 KiB).
MAX_SOURCE_BYTES = 4 << 20


class UnreadableFileError(OSError):
    """A path that is not a regular file of acceptable size (a FIFO, a device, a directory, too big).

    ``path`` is the file, ``reason`` the rest of the message (``"is a FIFO, ..."``).
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"], reason: str) -> None:
        super().__init__(f"{os.fspath(path)} {reason}")
        self.path = os.fspath(path)
        self.reason = reason


def describe_mode(mode: int) -> str:
    """What a ``st_mode`` is, in words: ``"a FIFO"``, ``"a device"``, ``"a directory"``, ..."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file" if not stat.S_ISREG(mode) else "a regular file"


def read_regular_bytes(path: Union[str, "os.PathLike[str]"], limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes.

    Never blocks on a FIFO and never reads past ``limit`` (a device or a file
    that grows while read).  Raises FileNotFoundError / NotADirectoryError /
    PermissionError as ``open`` does, and :class:`UnreadableFileError` (an
    OSError) for a directory, FIFO, device, socket or a file over ``limit``;
    each message names the file and the fix.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise UnreadableFileError(path, "is a directory, not a regular file") from None
    except OSError as exc:  # a socket cannot be opened at all (ENXIO): say what it is, not "no such device"
        try:
            mode = os.stat(path).st_mode
        except OSError:
            raise exc from None
        if stat.S_ISREG(mode):
            raise
        raise UnreadableFileError(
            path, f"is {describe_mode(mode)}, not a regular file; point tiletune at a regular file (or remove it)"
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFileError(
                path, f"is {describe_mode(st.st_mode)}, not a regular file; point tiletune at a regular file (or remove it)")
        if st.st_size > limit:
            raise UnreadableFileError(
                path, f"is {st.st_size} bytes, more than the {limit} tiletune reads; split it or use a smaller file")
        chunks = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise UnreadableFileError(path, f"grew past {limit} bytes while being read; try again once it is written")
        return data
    finally:
        os.close(fd)
