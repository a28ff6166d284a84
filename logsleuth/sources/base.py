"""The leaf of the sources package: what a log source is, and what some sources can do besides.

Everything downstream (the reader, watch, the api) sees sources only through these types; nothing here imports
an implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol, runtime_checkable

# Bytes read per request.  Large enough that syscalls and SSH round trips are
# amortized, small enough to keep memory flat.
CHUNK_SIZE = 1 << 20
# The one chunk a follower (`follow(offset)`) yields when the file was truncated or replaced: what comes after
# it is the new file from its first byte.
RESTART = b"\x00LOGSLEUTH-RESTART\x00"

Progress = Callable[[str], None]  # short status lines ("connecting to gpu7…"); the CLI shows them on a TTY


class Source(Protocol):
    """A random-access byte source.

    `size()` is the current size; `read_range(start, end)` yields the bytes in
    [start, end) in chunks of at most CHUNK_SIZE.  Implementations raise
    `logsleuth.errors.SourceError` with a one-line message for anything the
    user can fix (missing file, permission, network).
    """

    name: str  # as the user wrote it, e.g. "gpu7:/var/log/sglang.log"
    host: str | None  # the host the log lives on; None for local files

    def size(self) -> int: ...

    def read_range(self, start: int, end: int) -> Iterator[bytes]: ...

    def close(self) -> None: ...


# -- what some sources can do besides (checked with isinstance) --------------------------------------------


@runtime_checkable
class ReportsProgress(Protocol):
    """A source that reports progress while it reads (a remote file: bytes read so far)."""

    progress: Progress | None


@runtime_checkable
class FindsAnchors(Protocol):
    """A source that can find literal strings over the whole log faster than reading it (`--all`): a local
    file searched in two processes, a remote file searched by `grep` on its host."""

    def find_anchors(self, anchors: tuple[bytes, ...], limit: int | None = None) -> list[int] | None:
        """Sorted offsets of every anchor; None when there are more than `limit` (a traceback-dense log)."""


@runtime_checkable
class Follows(Protocol):
    """A source that can be followed as it grows (`watch`): new bytes from `offset` on, b"" on idle polls,
    RESTART when the log was truncated or replaced."""

    def follow(self, offset: int) -> Iterator[bytes]: ...
