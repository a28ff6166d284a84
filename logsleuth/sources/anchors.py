"""Literal anchor search over a whole local file: `mmap` + `find`, on two cores.

`mmap.find` holds the GIL, so the halves of a large file are searched by two forked
processes; the page cache is shared, nothing is copied.
"""

from __future__ import annotations

import mmap
import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

PARALLEL_MIN_BYTES = 64 << 20  # below this a fork costs more than it saves


def _find_in_span(path: str, start: int, end: int, anchors: tuple[bytes, ...]) -> list[int]:
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
        found: list[int] = []
        for anchor in anchors:
            index = view.find(anchor, start, end)
            while index >= 0:
                found.append(index)
                index = view.find(anchor, index + 1, end)
        return found


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
