"""Reading a local file by offset, where a short read means the file shrank (logrotate's copytruncate)."""

from __future__ import annotations

import os

from logsleuth.errors import SourceError


class FileShrank(Exception):
    """The file is shorter than when its size was taken: it was truncated while being read."""


def changed_while_read(name: str) -> SourceError:
    return SourceError(f"{name}: changed while being read")


def pread_exactly(fd: int, length: int, offset: int) -> bytes:
    """`length` bytes at `offset`; raises FileShrank when the file ends before them."""
    data = os.pread(fd, length, offset)
    if len(data) < length:
        # pread may return less than asked only at the end of the file (regular files are not
        # interrupted mid-read): the rest is gone.
        raise FileShrank(offset + len(data))
    return data
