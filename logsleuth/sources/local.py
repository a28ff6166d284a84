"""Local files and stdin."""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterator
from typing import BinaryIO

from logsleuth.errors import SourceError
from logsleuth.sources.base import CHUNK_SIZE


def _describe_os_error(path: str, exc: OSError) -> str:
    reasons = {
        errno.ENOENT: "no such file",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EISDIR: "is a directory",
        errno.ELOOP: "too many symbolic links",
        errno.ENAMETOOLONG: "file name too long",
    }
    return f"{path}: {reasons.get(exc.errno or 0, exc.strerror or str(exc))}"


class LocalFileSource:
    host: str | None = None

    def __init__(self, path: str, *, display_name: str | None = None) -> None:
        self.name = display_name or path
        self.path = path
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as exc:
            raise SourceError(_describe_os_error(self.name, exc)) from None
        try:
            mode = os.fstat(fd).st_mode
        except OSError as exc:
            os.close(fd)
            raise SourceError(_describe_os_error(self.name, exc)) from None
        if stat.S_ISDIR(mode):
            os.close(fd)
            raise SourceError(f"{self.name}: is a directory")
        self._file: BinaryIO = os.fdopen(fd, "rb", buffering=0)

    def size(self) -> int:
        try:
            return os.fstat(self._file.fileno()).st_size
        except OSError as exc:
            raise SourceError(_describe_os_error(self.name, exc)) from None

    def read_range(self, start: int, end: int) -> Iterator[bytes]:
        position = max(0, start)
        try:
            self._file.seek(position)
            while position < end:
                chunk = self._file.read(min(CHUNK_SIZE, end - position))
                if not chunk:
                    return
                position += len(chunk)
                yield chunk
        except OSError as exc:
            raise SourceError(_describe_os_error(self.name, exc)) from None

    def find_anchors(self, anchors: tuple[bytes, ...]) -> list[int] | None:
        """Offsets of literal anchors over the whole file (None: use read_range instead)."""
        if self.path == "-":
            return None  # the stdin spool has no name to reopen
        from logsleuth.sources.anchors import find_anchors

        try:
            return find_anchors(self.path, self.size(), anchors)
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        self._file.close()


def open_stdin(stream: BinaryIO | None = None) -> LocalFileSource:
    """Spool stdin to an anonymous temporary file so it can be read backwards
    like any file, with memory that does not grow with its size."""
    stream = stream or sys.stdin.buffer
    import tempfile  # stdin only: ~2 ms of every start otherwise

    spool = tempfile.TemporaryFile(prefix="logsleuth-stdin-")  # noqa: SIM115 - owned by the source
    try:
        while chunk := stream.read(CHUNK_SIZE):
            spool.write(chunk)
        spool.flush()
    except OSError as exc:
        spool.close()
        raise SourceError(f"stdin: {exc.strerror or exc}") from None
    source = LocalFileSource.__new__(LocalFileSource)
    source.name = "-"
    source.path = "-"
    source._file = spool
    return source
