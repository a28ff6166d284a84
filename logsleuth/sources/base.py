"""The leaf of the sources package: what a log source is, and what some sources can do besides.

Everything downstream (the reader, watch, the api) sees sources only through these types; nothing here imports
an implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar, runtime_checkable

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


T = TypeVar("T")


@runtime_checkable
class SplitsWork(Protocol):
    """A source that forked processes can read too (a local file): `work(source, start, end)` runs over the
    two halves of [0, size) on two cores, cut where `split(source, size // 2, size)` says."""

    def in_two_halves(
        self, size: int, work: Callable[[Any, int, int], T], split: Callable[[Any, int, int], int]
    ) -> list[T]: ...


@runtime_checkable
class Follows(Protocol):
    """A source that can be followed as it grows (`watch`): new bytes from `offset` on, b"" on idle polls,
    RESTART when the log was truncated or replaced."""

    def follow(self, offset: int) -> Iterator[bytes]: ...


def anchors_in_chunks(
    chunks: Iterable[bytes], position: int, anchors: tuple[bytes, ...], limit: int | None
) -> list[int] | None:
    """Sorted offsets of the anchors in a stream of bytes starting at `position`; None when there are more
    than `limit` (for sources that cannot search faster than reading)."""
    positions: list[int] = []
    carry = b""
    longest = max(len(anchor) for anchor in anchors)
    for chunk in chunks:
        data = carry + chunk
        base = position - len(carry)
        for anchor in anchors:
            index = data.find(anchor)
            while index >= 0:
                positions.append(base + index)
                index = data.find(anchor, index + 1)
        if limit is not None and len(positions) > limit:
            return None
        position += len(chunk)
        carry = data[-(longest - 1) :] if longest > 1 else b""
    return sorted(set(positions))
