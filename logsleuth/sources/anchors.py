"""Literal anchor search over a whole local file: `mmap` windows + `find`, on two cores.

`mmap.find` searches the page cache without copying, but it holds the GIL, so the halves
of a large file are searched by two forked processes.  Only one window of WINDOW bytes
is mapped at a time, so resident memory stays small whatever the file size.
"""

from __future__ import annotations

import mmap
import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

PARALLEL_MIN_BYTES = 64 << 20  # below this a fork costs more than it saves
WINDOW = 32 << 20  # a multiple of mmap.ALLOCATIONGRANULARITY


def _find_in_span(path: str, start: int, end: int, anchors: tuple[bytes, ...]) -> list[int]:
    """Sorted offsets of the anchors that start in [start, end)."""
    overlap = max(len(anchor) for anchor in anchors) - 1
    found: list[int] = []
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        end = min(end, size)
        window_start = start - start % mmap.ALLOCATIONGRANULARITY
        while window_start < end:
            # Map a little past the window so an anchor that starts inside it is seen whole.
            length = min(WINDOW + overlap, size - window_start)
            with mmap.mmap(fd, length, access=mmap.ACCESS_READ, offset=window_start) as view:
                limit = min(WINDOW, end - window_start)  # anchors must start before this
                for anchor in anchors:
                    index = view.find(anchor, max(0, start - window_start), limit + len(anchor) - 1)
                    while index >= 0:
                        found.append(window_start + index)
                        index = view.find(anchor, index + 1, limit + len(anchor) - 1)
            window_start += WINDOW
    finally:
        os.close(fd)
    return sorted(found)


def find_anchors(path: str, size: int, anchors: tuple[bytes, ...]) -> list[int]:
    """Sorted offsets of every occurrence of every anchor in the first `size` bytes."""
    if size == 0:
        return []
    workers = min(2, os.cpu_count() or 1)
    if size < PARALLEL_MIN_BYTES or workers < 2 or "fork" not in _start_methods():
        return sorted(_find_in_span(path, 0, size, anchors))
    overlap = max(len(anchor) for anchor in anchors) - 1
    middle = size // 2
    spans = [(0, middle + overlap), (middle, size)]
    with ProcessPoolExecutor(max_workers=2, mp_context=get_context("fork")) as pool:
        parts = list(pool.map(_find_in_span, [path] * 2, *zip(*spans, strict=True), [anchors] * 2))
    return sorted(set(parts[0]) | set(parts[1]))


def _start_methods() -> list[str]:
    from multiprocessing import get_all_start_methods

    return get_all_start_methods()
