"""Literal anchor search over a whole local file: `pread` into one reused buffer + `find`, on two cores.

Not `mmap`: touching a mapped page past the end of a file that was truncated meanwhile (logrotate's
`copytruncate`) kills the process with SIGBUS.  `pread` instead returns short, which is reported as
`FileShrank`.  The search holds the GIL, so the halves of a large file are searched by two forked
processes; a helper that dies is never fatal: its half is searched again here.  Memory stays at one
buffer of WINDOW bytes per process whatever the file size.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any, TypeVar

from logsleuth.sources.pread import FileShrank

PARALLEL_MIN_BYTES = 64 << 20  # below this a fork costs more than it saves
WINDOW = 8 << 20


class TooMany(Exception):
    """More anchors than the caller's limit."""


def _find_in_span(fd: int, start: int, end: int, anchors: tuple[bytes, ...], limit: int | None) -> list[int]:
    """Sorted offsets of the anchors that start in [start, end); `end` must be within the file."""
    overlap = max(len(anchor) for anchor in anchors) - 1
    found: list[int] = []
    buffer = bytearray(WINDOW + overlap)
    view = memoryview(buffer)
    window_start = start
    while window_start < end:
        # Read a little past the window so that an anchor starting inside it is seen whole.
        wanted = min(WINDOW + overlap, end + overlap - window_start)
        got = os.preadv(fd, [view[:wanted]], window_start)
        if got < min(wanted, end - window_start):
            raise FileShrank(window_start + got)
        limit_in_window = min(WINDOW, end - window_start)  # anchors must start before this
        for anchor in anchors:
            stop = min(got, limit_in_window + len(anchor) - 1)
            index = buffer.find(anchor, 0, stop)
            while index >= 0:
                found.append(window_start + index)
                index = buffer.find(anchor, index + 1, stop)
        if limit is not None and len(found) > limit:
            raise TooMany
        window_start += WINDOW
    found.sort()
    return found


def _find_or_none(fd: int, start: int, end: int, anchors: tuple[bytes, ...], limit: int | None) -> list[int] | None:
    try:
        return _find_in_span(fd, start, end, anchors, limit)
    except TooMany:
        return None


def find_anchors(fd: int, size: int, anchors: tuple[bytes, ...], *, limit: int | None = None) -> list[int] | None:
    """Sorted offsets of every occurrence of every anchor in the first `size` bytes of `fd`; None when
    there are more than `limit`.  Raises FileShrank when the file is shorter than `size`."""
    if size == 0:
        return []
    workers = min(2, os.cpu_count() or 1)
    if size < PARALLEL_MIN_BYTES or workers < 2 or "fork" not in _start_methods():
        return _find_or_none(fd, 0, size, anchors, limit)
    middle = size // 2
    spans = [(0, middle), (middle, size)]
    half_limit = None if limit is None else limit // 2 + 1
    try:
        with ProcessPoolExecutor(max_workers=2, mp_context=get_context("fork")) as pool:
            futures = [pool.submit(_find_or_none, fd, start, end, anchors, half_limit) for start, end in spans]
            parts = [future.result() for future in futures]
    except BrokenProcessPool:
        # A helper died (killed, out of memory): search here instead.  A file that shrank is
        # reported by that search like by any other read.
        return _find_or_none(fd, 0, size, anchors, limit)
    if parts[0] is None or parts[1] is None:
        return None
    found = parts[0] + parts[1]
    return None if limit is not None and len(found) > limit else found


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
