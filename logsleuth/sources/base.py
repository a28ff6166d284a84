"""The leaf of the sources package: what a log source is, and what some sources can do besides.

Everything downstream (the reader, watch, the api) sees sources only through these types; nothing here imports
an implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar, runtime_checkable

# The most of a log's end read by default (--max-bytes): the reader's limit, and all a command source holds.
DEFAULT_MAX_BYTES = 256 << 20

# Bytes read per request.  Large enough that syscalls and SSH round trips are
# amortized, small enough to keep memory flat.
CHUNK_SIZE = 1 << 20
# The one chunk a follower (`follow(offset)`) yields when the file was truncated or replaced: what comes after
# it is the new file from its first byte.
RESTART = b"\x00LOGSLEUTH-RESTART\x00"
# The chunk a follower over a link that can freeze (a remote log followed over SSH) yields when its host has just
# confirmed that every byte written so far has been delivered: silence before it is the log's own, not a frozen or
# lost connection's.  A follower that yields it at all yields it about every second while the link is alive, and
# none while the link is frozen or being reconnected.  A follower that never yields it (a local file, a pipe)
# cannot freeze: its silence is always the log's (watch/follow.py waits for it before it takes silence for the end of a
# traceback).  A source whose follow yields it says so from the start (ConfirmsSilence).
ALIVE = b"\x00LOGSLEUTH-ALIVE\x00"

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
    file searched on two cores, a remote file searched by `grep` on its host."""

    def find_anchors(self, anchors: tuple[bytes, ...], limit: int | None = None) -> list[int] | None:
        """Sorted offsets of the anchors as `grep -boaF` reports them (GrepMatches); None when there are more
        than `limit` (a traceback-dense log)."""


T = TypeVar("T")


@runtime_checkable
class ReadsRanges(Protocol):
    """A source that reads many byte ranges in one request (a remote file: one round trip for all of them, where
    `read_range` costs one each)."""

    def read_ranges(self, ranges: list[tuple[int, int]]) -> list[bytes]:
        """The bytes of each [start, end) range, in order (clipped to the size)."""


def merged_ranges(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The byte ranges [start, end) `ranges` cover, in order: each run of overlapping or touching ones joined."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


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
    RESTART when the log was truncated or replaced, ALIVE when its host confirmed that nothing is in flight."""

    def follow(self, offset: int) -> Iterator[bytes]: ...


@runtime_checkable
class ConfirmsSilence(Protocol):
    """A followed source whose link can freeze (a remote log over SSH): its follow yields ALIVE while the link is
    alive, so that silence it has not confirmed is not taken for the log's (watch/follow.py)."""

    confirms_silence: bool


class GrepMatches:
    """The offsets `LC_ALL=C grep -boaF -e A -e B …` prints for a file, built from every occurrence of every
    anchor: the leftmost occurrence, the longest of those starting there, then the next one that starts at or
    after its end (grep -o never reports overlapping matches).  Every anchor search (a local file, a stream,
    the remote grep) gives these offsets, so local and remote reports agree.  Anchors hold no newline, so
    grep's lines change nothing.

    `add` takes the occurrences that start in the next stretch of the file, stretch after stretch."""

    def __init__(self, start: int = 0) -> None:
        self.offsets: list[int] = []
        self.lengths: list[int] = []  # of each match: which anchor it is, where their lengths differ
        self.end = start  # where the last match ends: nothing starting before it is a match

    def add(self, occurrences: list[tuple[int, int]]) -> None:
        """`occurrences`: (offset, -length) of each, in any order."""
        occurrences.sort()  # leftmost first; at one offset the longest first
        for offset, negative_length in occurrences:
            if offset >= self.end:
                self.offsets.append(offset)
                self.lengths.append(-negative_length)
                self.end = offset - negative_length

    def between(self, start: int, end: int | None) -> GrepMatches:
        """The matches that start in [start, end) (end None: to the end)."""
        within = GrepMatches(start)
        for offset, length in zip(self.offsets, self.lengths, strict=True):
            if offset >= start and (end is None or offset < end):
                within.offsets.append(offset)
                within.lengths.append(length)
        within.end = within.offsets[-1] + within.lengths[-1] if within.offsets else start
        return within

    def extend(self, later: GrepMatches) -> GrepMatches:
        """These matches followed by those of a later stretch."""
        self.offsets.extend(later.offsets)
        self.lengths.extend(later.lengths)
        self.end = later.end
        return self


def _occurrences_in(
    data: bytes | bytearray, anchors: tuple[bytes, ...], base: int, stop: int
) -> list[tuple[int, int]]:
    """(base + offset, -length) of every occurrence of every anchor that starts before `stop` in `data`,
    overlapping ones included (pure Python: `bytes.find`)."""
    found: list[tuple[int, int]] = []
    for anchor in anchors:
        end = min(len(data), stop + len(anchor) - 1)
        index = data.find(anchor, 0, end)
        while index >= 0:
            found.append((base + index, -len(anchor)))
            index = data.find(anchor, index + 1, end)
    return found


def anchors_in_chunks(
    chunks: Iterable[bytes], position: int, anchors: tuple[bytes, ...], limit: int | None
) -> list[int] | None:
    """Sorted offsets of the anchors (GrepMatches) in a stream of bytes starting at `position`; None when
    there are more than `limit` (for sources that cannot search faster than reading)."""
    matches = matches_in_chunks(chunks, position, anchors, limit)
    return None if matches is None else matches.offsets


def matches_in_chunks(
    chunks: Iterable[bytes], position: int, anchors: tuple[bytes, ...], limit: int | None
) -> GrepMatches | None:
    """anchors_in_chunks, with each match's length."""
    matches = GrepMatches(position)
    carry = b""
    longest = max(len(anchor) for anchor in anchors)
    for chunk in chunks:
        data = carry + chunk
        base = position - len(carry)
        # Occurrences that start in the last longest-1 bytes may run into the next chunk: they are
        # taken with it, so each stretch holds the occurrences that start in it.
        keep = min(len(data), longest - 1)
        matches.add(_occurrences_in(data, anchors, base, len(data) - keep))
        if limit is not None and len(matches.offsets) > limit:
            return None
        position += len(chunk)
        carry = data[len(data) - keep :]
    matches.add(_occurrences_in(carry, anchors, position - len(carry), len(carry)))
    return None if limit is not None and len(matches.offsets) > limit else matches
