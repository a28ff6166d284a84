"""SFTP fallback for accounts without a usable shell (nologin, `ForceCommand internal-sftp`).

Reads use `readv()`, which pipelines requests like `prefetch()`: without it SFTP is 25× slower (FIELD-NOTES §5).
A glob is supported in the last path component only; `.gz` files are decompressed locally, streaming.
"""

from __future__ import annotations

import errno
import fnmatch
import posixpath
import stat
import zlib
from collections.abc import Iterator

import paramiko

from logsleuth.sources.base import CHUNK_SIZE, Source
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.spec import RemoteError, RemoteSpec
from logsleuth.sources.ssh.shared import SharedConnection

_READV_SPAN = 8 << 20  # bytes asked for per readv() call; paramiko splits it into 32 KiB pipelined requests


def _reason(exc: OSError) -> str:
    return {errno.ENOENT: "no such file", errno.EACCES: "permission denied"}.get(
        exc.errno or 0, exc.strerror or str(exc)
    )


def open_sftp_sources(remote: RemoteSpec, shared: SharedConnection, options: SSHOptions) -> list[Source]:
    try:
        sftp = shared.sftp()
    except (paramiko.SSHException, OSError, EOFError):
        raise RemoteError(
            f"{remote.name_for(remote.path)}: the account on {remote.host} has no usable shell and no SFTP"
        ) from None
    directory, pattern = posixpath.split(remote.path)
    if not any(c in pattern for c in "*?["):
        return [SFTPFileSource(shared, remote, remote.path)]
    try:
        entries = sftp.listdir_attr(directory or ".")
    except OSError as exc:
        raise RemoteError(f"{remote.name_for(directory or '.')}: {_reason(exc)}") from None
    matches = [
        entry
        for entry in entries
        if fnmatch.fnmatchcase(entry.filename, pattern) and stat.S_ISREG(entry.st_mode or 0)
    ]
    if not matches:
        raise RemoteError(f"{remote.name_for(remote.path)}: no file matches")
    if not options.all_files:
        matches = [max(matches, key=lambda entry: entry.st_mtime or 0)]
    else:
        matches.sort(key=lambda entry: entry.filename)
    return [SFTPFileSource(shared, remote, posixpath.join(directory, entry.filename)) for entry in matches]


class SFTPFileSource:
    def __init__(self, shared: SharedConnection, remote: RemoteSpec, path: str) -> None:
        self.name = remote.name_for(path)
        self.host: str | None = remote.host
        self.path = path
        self.gz = path.endswith(".gz")
        self._shared = shared.acquire()
        try:
            attributes = shared.sftp().stat(path)
            if stat.S_ISDIR(attributes.st_mode or 0):
                raise RemoteError(f"{self.name}: is a directory")
            if not stat.S_ISREG(attributes.st_mode or 0):
                raise RemoteError(f"{self.name}: not a regular file")
            self._file = shared.sftp().open(path, "rb")
        except OSError as exc:
            self._shared.release()
            raise RemoteError(f"{self.name}: {_reason(exc)}") from None
        except RemoteError:
            self._shared.release()
            raise
        self._raw_size = attributes.st_size or 0
        self._size: int | None = None if self.gz else self._raw_size

    def size(self) -> int:
        if self._size is None:
            self._size = sum(len(piece) for piece in self._decompressed())
        return self._size

    def read_range(self, start: int, end: int) -> Iterator[bytes]:
        start, end = max(0, start), min(end, self.size())
        if start >= end:
            return
        if self.gz:
            yield from _slice(self._decompressed(), start, end)
            return
        yield from self._raw(start, end)

    def _raw(self, start: int, end: int) -> Iterator[bytes]:
        try:
            for span_start in range(start, end, _READV_SPAN):
                span_end = min(end, span_start + _READV_SPAN)
                chunks = [(o, min(CHUNK_SIZE, span_end - o)) for o in range(span_start, span_end, CHUNK_SIZE)]
                yield from self._file.readv(chunks)
        except (EOFError, paramiko.SSHException) as exc:
            if not self._shared.transport.is_active():  # the server went away or stalled
                raise self._shared.connection.lost(self.host or "") from None
            raise RemoteError(f"{self.name}: {exc}") from None
        except OSError as exc:
            raise RemoteError(f"{self.name}: {_reason(exc)}") from None

    def _decompressed(self) -> Iterator[bytes]:
        inflater = zlib.decompressobj(wbits=47)  # gzip header, concatenated members handled below
        for piece in self._raw(0, self._raw_size):
            while piece:
                out = inflater.decompress(piece)
                if out:
                    yield out
                piece = inflater.unused_data if inflater.eof else b""
                if inflater.eof:
                    inflater = zlib.decompressobj(wbits=47)
        tail = inflater.flush()
        if tail:
            yield tail

    def close(self) -> None:
        self._file.close()
        self._shared.release()


def _slice(pieces: Iterator[bytes], start: int, end: int) -> Iterator[bytes]:
    position = 0
    for piece in pieces:
        piece_end = position + len(piece)
        if piece_end > start:
            yield piece[max(0, start - position) : end - position]
        position = piece_end
        if position >= end:
            return
