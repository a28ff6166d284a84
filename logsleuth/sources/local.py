"""Local files, FIFOs and stdin.

Regular files are read in place with `os.pread`, which never raises SIGBUS (an `mmap` of a
file that shrinks does) and tells a short read, so a log truncated while it is read (logrotate's
`copytruncate`) is reported as "changed while being read" instead of being half-parsed.
Streams (stdin, a FIFO such as `<(kubectl logs …)`) are spooled to an anonymous temporary file
first, so they can be read backwards like a file with memory that does not grow with their size.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, TypeVar

from logsleuth.errors import SourceError
from logsleuth.sources.base import CHUNK_SIZE, GrepMatches
from logsleuth.sources.pread import FileShrank, changed_while_read, pread_exactly

T = TypeVar("T")


def _describe_os_error(path: str, exc: OSError) -> str:
    reasons = {
        errno.ENOENT: "no such file",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EISDIR: "is a directory",
        errno.ELOOP: "too many symbolic links",
        errno.ENAMETOOLONG: "file name too long",
        errno.ENXIO: "not a regular file",  # a socket, or a device without a driver
    }
    return f"{path}: {reasons.get(exc.errno or 0, exc.strerror or str(exc))}"


class LocalFileSource:
    """A local file read by offset.  `parallel_reads`: forked helper processes may read it too (the
    descriptor is shared and `pread` has no file position to race on)."""

    host: str | None = None
    parallel_reads = True

    def __init__(self, path: str, *, display_name: str | None = None) -> None:
        self.name = display_name or path
        self.path = path
        try:
            # O_NONBLOCK: opening a FIFO blocks until a writer opens it; we check the type first.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            raise SourceError(_describe_os_error(self.name, exc)) from None
        try:
            mode = os.fstat(fd).st_mode
        except OSError as exc:
            os.close(fd)
            raise SourceError(_describe_os_error(self.name, exc)) from None
        if stat.S_ISREG(mode):
            os.set_blocking(fd, True)
            self._file: BinaryIO = os.fdopen(fd, "rb", buffering=0)
            return
        if stat.S_ISFIFO(mode):
            try:
                self._file = _spool_fifo(fd, self.name)
            finally:
                os.close(fd)
            return
        os.close(fd)
        kind = "is a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise SourceError(f"{self.name}: {kind}")  # a device (/dev/zero never ends), a socket, ...

    @classmethod
    def from_spool(cls, spool: BinaryIO, name: str) -> LocalFileSource:
        source = cls.__new__(cls)
        source.name = source.path = name
        source._file = spool
        return source

    def fileno(self) -> int:
        return self._file.fileno()

    def size(self) -> int:
        try:
            return os.fstat(self._file.fileno()).st_size
        except OSError as exc:
            raise SourceError(_describe_os_error(self.name, exc)) from None

    def read_range(self, start: int, end: int) -> Iterator[bytes]:
        """The bytes in [start, end); `end` must not be past the size the caller was given, so a
        short read means the file shrank since: SourceError "changed while being read"."""
        position = max(0, start)
        fd = self._file.fileno()
        while position < end:
            try:
                chunk = pread_exactly(fd, min(CHUNK_SIZE, end - position), position)
            except FileShrank:
                raise changed_while_read(self.name) from None
            except OSError as exc:
                raise SourceError(_describe_os_error(self.name, exc)) from None
            position += len(chunk)
            yield chunk

    def in_two_halves(
        self, size: int, work: Callable[[Any, int, int], T], split: Callable[[Any, int, int], int]
    ) -> list[T]:
        from logsleuth.sources.anchors import in_two_halves

        return in_two_halves(self, size, work, split)

    def find_anchors(self, anchors: tuple[bytes, ...], limit: int | None = None) -> list[int] | None:
        """Offsets of literal anchors over the whole file; None when more than `limit` were found
        (the reader then takes its path for traceback-dense logs)."""
        matches = self.find_matches(anchors, limit)
        return None if matches is None else matches.offsets

    def find_matches(
        self, anchors: tuple[bytes, ...], limit: int | None = None, start: int = 0, end: int | None = None
    ) -> GrepMatches | None:
        """find_anchors, with each match's length: which anchor it is (`logsleuth health`); in [start, end)
        when given (a line's start, and the start of the next part)."""
        from logsleuth.sources.anchors import find_matches

        size = self.size() if end is None else end
        try:
            return find_matches(self._file.fileno(), size, anchors, limit=limit, start=start)
        except FileShrank:
            raise changed_while_read(self.name) from None
        except OSError as exc:
            raise SourceError(_describe_os_error(self.name, exc)) from None

    def close(self) -> None:
        self._file.close()


def _spool(read: object, name: str) -> BinaryIO:
    """Copy a stream to an anonymous temporary file (memory stays at one chunk)."""
    import tempfile  # streams only: ~2 ms of every start otherwise

    spool = tempfile.TemporaryFile(prefix="logsleuth-stream-")  # noqa: SIM115 - owned by the source
    try:
        while chunk := read(CHUNK_SIZE):  # type: ignore[operator]
            spool.write(chunk)
        spool.flush()
    except OSError as exc:
        spool.close()
        raise SourceError(f"{name}: {exc.strerror or exc}") from None
    except BaseException:
        spool.close()
        raise
    return spool


def _spool_fifo(fd: int, name: str) -> BinaryIO:
    """A FIFO opened without blocking.  Blocking reads from here on wait for a writer that is
    writing, and end (read returns b"") when there is no writer at all: no writer is an empty log."""
    os.set_blocking(fd, True)
    return _spool(lambda size: os.read(fd, size), name)


def open_stdin(stream: BinaryIO | None = None) -> LocalFileSource:
    """Spool stdin to an anonymous temporary file so it can be read backwards
    like any file, with memory that does not grow with its size."""
    if stream is None:
        stdin = sys.stdin
        # Started with fd 0 closed (`logsleuth diagnose - <&-`), Python sets sys.stdin to None.
        buffer = getattr(stdin, "buffer", None) if stdin is not None else None
        if buffer is None:
            raise SourceError("stdin: not open (nothing to read)")
        stream = buffer
    return LocalFileSource.from_spool(_spool(stream.read, "stdin"), "-")
