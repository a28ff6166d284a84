"""Literal anchor search over a whole local file (`--all`), and work split over two forked processes.

The file is read once: each window of WINDOW bytes is read with `pread` into a buffer that is reused (it stays
in the CPU cache) and every anchor is searched in it with the C library's `memmem`, called through ctypes,
which lets go of the GIL while it runs.  So two threads search the two halves of a large file on two cores in
one process: forked helpers would each count the parent's memory again in the process tree's RSS.  Where
`memmem` cannot be loaded, `bytes.find` (base.anchors_in_chunks, one thread) gives the same offsets.  The
offsets are those `grep -boaF` prints (base.GrepMatches), as for a remote file.

Why not the system grep: on a 1 GiB SGLang log, CPU seconds on one core: `pread` alone 0.11, `pread` and
`memmem` for "Traceback" and "rror" 0.62, `bytes.find` 1.24, GNU grep 3.8 `grep -boaF -e Traceback -e rror`
1.1-1.3 (its matcher for several literals is slower than one for each over a cached window), `grep -c
Traceback` 0.5.

A sparse file's holes are skipped (SEEK_DATA), as GNU grep skips them: they read as zeros, which hold no
anchor.

Not `mmap`: touching a mapped page past the end of a file that was truncated meanwhile (logrotate's
`copytruncate`) kills the process with SIGBUS.  `pread` instead returns short, which is reported as
`FileShrank`.  Memory stays at one buffer of WINDOW bytes per thread whatever the file size.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from logsleuth.sources.base import GrepMatches, matches_in_chunks
from logsleuth.sources.pread import FileShrank, pread_exactly

PARALLEL_MIN_BYTES = 64 << 20  # below this forked helpers cost more than they save
THREADS_MIN_BYTES = 16 << 20  # below this a second search thread saves less than a millisecond
WINDOW = 128 << 10  # read and searched at once: small enough to stay in the CPU cache (see below)
MEMCHR_HITS = 16  # false hits of a rare byte in one window before bytearray.find takes over
SAMPLE_FOR_RARITY = 64 << 10  # bytes from the middle of the log counted to find each anchor's rarest byte
RARE_PER_SAMPLE = 8  # at most this many of it in that sample, or memchr would stop too often: memmem then


class TooMany(Exception):
    """More anchors than the caller's limit."""


# (buffer, anchors, how far each may start + its length) -> (offset, -length) of every occurrence of each
Finder = Callable[[bytearray, tuple[bytes, ...], list[int]], list[tuple[int, int]]]


def _memmem_finder(rare_index: dict[bytes, int | None]) -> Finder | None:
    """`memchr` and `memmem` from the C library, or None where they cannot be loaded (no ctypes, no such
    function).  `rare_index`: per anchor, the index of its byte that is rare in this log (None: none is)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        memmem, memchr = libc.memmem, libc.memchr
    except (ImportError, OSError, AttributeError):
        return None
    memmem.restype = memchr.restype = ctypes.c_void_p
    memmem.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    memchr.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]

    def by_memmem(base: int, anchor: bytes, start: int, length: int) -> list[int]:
        found = []
        while length - start >= len(anchor):
            hit = memmem(base + start, length - start, anchor, len(anchor))
            if not hit:
                break
            found.append(hit - base)
            start = hit - base + 1
        return found

    def find_all(buffer: bytearray, anchors: tuple[bytes, ...], lengths: list[int]) -> list[tuple[int, int]]:
        base = ctypes.addressof(ctypes.c_char.from_buffer(buffer))  # held (not resizable) while it lives
        found: list[tuple[int, int]] = []
        groups: dict[int, list[tuple[bytes, int, int]]] = {}  # rare byte -> (anchor, its index, its length)
        for anchor, length in zip(anchors, lengths, strict=True):
            at = rare_index.get(anchor)
            if at is None:
                found.extend((index, -len(anchor)) for index in by_memmem(base, anchor, 0, length))
            else:
                groups.setdefault(anchor[at], []).append((anchor, at, length))
        # memchr (vectorised) for each rare byte, once for all the anchors that share it, each hit checked in
        # place: where that byte is absent from the log's common lines, the window is passed over at memory
        # speed.  Past MEMCHR_HITS false hits the byte is not rare here after all: memmem does the rest.
        for rare, members in groups.items():
            end = max(length for _, _, length in members)
            start, false_hits = 0, 0
            while start < end and false_hits < MEMCHR_HITS:
                hit = memchr(base + start, rare, end - start)
                if not hit:
                    start = end
                    break
                position, matched = hit - base, False
                for anchor, at, length in members:
                    candidate = position - at
                    if candidate >= 0 and candidate + len(anchor) <= length and buffer.startswith(anchor, candidate):
                        found.append((candidate, -len(anchor)))
                        matched = True
                false_hits += not matched
                start = position + 1
            if start < end:  # from where the byte's anchors could still start
                for anchor, at, length in members:
                    found.extend((index, -len(anchor)) for index in _by_find(buffer, anchor, max(0, start - at), length))
        return found

    return find_all


def _by_find(buffer: bytearray, anchor: bytes, start: int, length: int) -> list[int]:
    """Every occurrence from `start`, by `bytearray.find`: where hits are dense (a window its rare byte fills),
    its cheaper call beats a ctypes call per hit (on a retraction storm's window: 120 µs against 300)."""
    found = []
    index = buffer.find(anchor, start, length)
    while index >= 0:
        found.append(index)
        index = buffer.find(anchor, index + 1, length)
    return found


def rare_bytes(sample: bytes, anchors: tuple[bytes, ...]) -> dict[bytes, int | None]:
    """Per anchor, the index of a byte that is rare in `sample` (the bulk of the log), None when none is.
    In a steady-state log `=` or `_` may never occur, while every letter of `Traceback` does.  Among an
    anchor's rare bytes, the one most anchors share is taken: one memchr pass then serves them all."""
    counts = {byte: sample.count(bytes([byte])) for byte in set(b"".join(anchors))}
    rare_enough = {byte for byte, count in counts.items() if count * SAMPLE_FOR_RARITY <= RARE_PER_SAMPLE * max(len(sample), 1)}
    sharing = {byte: sum(byte in anchor for anchor in anchors) for byte in rare_enough}
    rare: dict[bytes, int | None] = {}
    for anchor in anchors:
        candidates = [index for index in range(len(anchor)) if anchor[index] in rare_enough]
        best = max(candidates, key=lambda i: (sharing[anchor[i]], -counts[anchor[i]], i), default=None)
        rare[anchor] = best
    return rare


def _search_span(
    fd: int,
    start: int,
    end: int,
    anchors: tuple[bytes, ...],
    limit: int | None,
    find: Finder,
    *,
    cursor: int | None = None,
    cut: threading.Event | None = None,
) -> GrepMatches:
    """The matches of the anchors that start in [start, end); `end` must be within the file.  `cursor`: where
    a match before `start` ends (grep skips what starts under it).  Raises TooMany past `limit`."""
    overlap = max(len(anchor) for anchor in anchors) - 1
    buffer = bytearray(WINDOW + overlap)
    view = memoryview(buffer)
    matches = GrepMatches(start if cursor is None else cursor)
    window_start = start
    sparse = _has_holes(fd, end)
    while window_start < end:
        if cut is not None and cut.is_set():
            raise TooMany
        if sparse:  # a hole reads as zeros, which hold no anchor: skip to the next data
            window_start = _next_data(fd, window_start, end)
            if window_start >= end:
                break
        # Read a little past the window so that an anchor starting inside it is seen whole.
        wanted = min(WINDOW + overlap, end + overlap - window_start)
        got = os.preadv(fd, [view[:wanted]], window_start)
        if got < min(wanted, end - window_start):
            raise FileShrank(window_start + got)
        starts_before = min(WINDOW, end - window_start)  # anchors must start before this
        lengths = [min(got, starts_before + len(anchor) - 1) for anchor in anchors]
        matches.add([(window_start + index, length) for index, length in find(buffer, anchors, lengths)])
        if limit is not None and len(matches.offsets) > limit:
            raise TooMany
        window_start += WINDOW
    return matches


def _has_holes(fd: int, end: int) -> bool:
    """Whether the file has a hole before `end` (a sparse file; where SEEK_HOLE is not supported, the whole
    file counts as data)."""
    try:
        return os.lseek(fd, 0, os.SEEK_HOLE) < end
    except (OSError, AttributeError):
        return False


def _next_data(fd: int, offset: int, end: int) -> int:
    """The first offset at or after `offset` that is not in a hole; `end` when only a hole follows."""
    try:
        return min(os.lseek(fd, offset, os.SEEK_DATA), end)
    except OSError:  # ENXIO: nothing but a hole up to the end of the file
        return end


def find_anchors(fd: int, size: int, anchors: tuple[bytes, ...], *, limit: int | None = None) -> list[int] | None:
    """Sorted offsets of the anchors (GrepMatches) in the first `size` bytes of `fd`; None when there are
    more than `limit`.  Raises FileShrank when the file is shorter than `size`."""
    matches = find_matches(fd, size, anchors, limit=limit)
    return None if matches is None else matches.offsets


def find_matches(
    fd: int, size: int, anchors: tuple[bytes, ...], *, limit: int | None = None, start: int = 0
) -> GrepMatches | None:
    """find_anchors, with each match's length (which anchor it is); from `start` (a line's start) on."""
    if size <= start:
        return GrepMatches(start)
    # The bytes that are rare in the log's bulk: its middle, past the start-up lines.
    middle = max(start, (start + size) // 2 - SAMPLE_FOR_RARITY // 2)
    rare = rare_bytes(pread_exactly(fd, min(SAMPLE_FOR_RARITY, size - middle), middle), anchors)
    find = _memmem_finder(rare)
    if find is None:
        chunks = (pread_exactly(fd, min(WINDOW, size - at), at) for at in range(start, size, WINDOW))
        return matches_in_chunks(chunks, start, anchors, limit)
    try:
        # A search by rare bytes runs at the speed of reading: a second thread only fights for the GIL.
        all_rare = None not in rare.values()
        if all_rare or start or size < THREADS_MIN_BYTES or (os.cpu_count() or 1) < 2:
            return _search_span(fd, start, size, anchors, limit, find)
        return _in_two_threads(fd, size, anchors, limit, find)
    except TooMany:
        return None


def _in_two_threads(fd: int, size: int, anchors: tuple[bytes, ...], limit: int | None, find: Finder) -> GrepMatches:
    """Both halves at once, one per thread (memmem and pread let go of the GIL)."""
    middle = size // 2
    cut = threading.Event()
    second: list[object] = []

    def search_second_half() -> None:
        try:
            second.append(_search_span(fd, middle, size, anchors, limit, find, cut=cut))
        except BaseException as exc:  # handed to the caller's thread, raised there
            second.append(exc)

    thread = threading.Thread(target=search_second_half, name="logsleuth-anchors", daemon=True)
    thread.start()
    try:
        first = _search_span(fd, 0, middle, anchors, limit, find)
    except BaseException:
        cut.set()  # too many already, or an error: the other half is not needed
        raise
    finally:
        thread.join()
    later = second[0]
    if first.end > middle:
        # A match of the first half runs into the second, where grep skips what starts under it: search
        # the second half again from there (rare: it takes an anchor that straddles the middle).
        later = _search_span(fd, middle, size, anchors, limit, find, cursor=first.end)
    if isinstance(later, BaseException):
        raise later
    assert isinstance(later, GrepMatches)
    if limit is not None and len(first.offsets) + len(later.offsets) > limit:
        raise TooMany
    return first.extend(later)


T = TypeVar("T")
_FORKED: tuple[Any, Callable[..., Any]] | None = None  # (source, work) for the forked helpers


def _run_span(start: int, end: int) -> Any:
    assert _FORKED is not None
    source, work = _FORKED
    return work(source, start, end)


def in_two_halves(
    source: Any, size: int, work: Callable[[Any, int, int], T], split: Callable[[Any, int, int], int]
) -> list[T]:
    """`work(source, start, end)` over [0, size) in two forked processes, one per half (cut where
    `split(source, size // 2, size)` says), or here when that cannot help: a small file, one core,
    no fork, or a source that forked processes cannot read.  A helper that dies is not fatal: the
    work is done again here (an exception it raises, such as SourceError, is raised here)."""
    global _FORKED
    from concurrent.futures import ProcessPoolExecutor  # ~40 ms of imports: only for large dense logs
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing import get_context

    parallel = getattr(source, "parallel_reads", False) and (os.cpu_count() or 1) >= 2
    if not parallel or size < PARALLEL_MIN_BYTES or "fork" not in _start_methods():
        return [work(source, 0, size)]
    middle = split(source, size // 2, size)
    if not 0 < middle < size:
        return [work(source, 0, size)]
    _FORKED = (source, work)
    try:
        with ProcessPoolExecutor(max_workers=2, mp_context=get_context("fork")) as pool:
            futures = [pool.submit(_run_span, start, end) for start, end in ((0, middle), (middle, size))]
            return [future.result() for future in futures]
    except BrokenProcessPool:
        return [work(source, 0, size)]
    finally:
        _FORKED = None


def _start_methods() -> list[str]:
    from multiprocessing import get_all_start_methods

    return get_all_start_methods()
