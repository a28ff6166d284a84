"""Reading strategies over a `Source`: backwards windows for the latest failure, an
anchored scan for `--all`.  Both feed the same normalizer and scanner.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from logsleuth.launch import LaunchTracker
from logsleuth.models import Failure
from logsleuth.normalize import normalize_chunks
from logsleuth.parser import FailureScanner
from logsleuth.sources.base import Source

INITIAL_WINDOW = 128 << 10  # most crash logs end with the failure (and 64 KiB of context): start small
GROWTH = 4
DEFAULT_MAX_BYTES = 256 << 20
# The first failure of a launch must be preceded by this many failure-free bytes (or a
# launch marker, or the start of the file) before we trust we have seen its beginning.
CONTEXT_BYTES = 64 << 10


@dataclass
class ReadResult:
    failures: list[Failure]
    tracker: LaunchTracker
    bytes_read: int
    size: int
    capped: bool = False
    cascade_lines: list[str] = field(default_factory=list)


def _without_line_numbers(failures: list[Failure]) -> list[Failure]:
    """Line numbers counted from the middle of a file are not the file's: drop them (0 = unknown)."""
    return [replace(failure, line=0) for failure in failures]


def _scan(source: Source, start: int, end: int) -> tuple[list[Failure], LaunchTracker, list[str], int]:
    chunks: Iterable[bytes] = source.read_range(start, end)
    consumed = 0

    def counted(stream: Iterable[bytes]) -> Iterator[bytes]:
        nonlocal consumed
        for chunk in stream:
            consumed += len(chunk)
            yield chunk

    scanner = FailureScanner()
    tracker = LaunchTracker()
    lines = normalize_chunks(counted(chunks), start_offset=start, host=source.host, drop_partial_first=start > 0)
    for line in lines:
        tracker.observe(line)
        scanner.feed(line)
    failures = scanner.finish()
    for failure in failures:
        tracker.observe_failure(failure)
    if start > 0:
        failures = _without_line_numbers(failures)
    return failures, tracker, [line.text for line in scanner.cascade_lines], consumed


def read_latest(source: Source, *, max_bytes: int = DEFAULT_MAX_BYTES, initial: int = INITIAL_WINDOW) -> ReadResult:
    """Read backwards from the end in growing windows until the latest launch's failures
    and what led to them are complete.  Cost depends on the failure, not the file size."""
    size = source.size()
    window = min(initial, max_bytes) if size > initial else size
    total_read = 0
    while True:
        start = max(0, size - window)
        failures, tracker, cascade, consumed = _scan(source, start, size)
        total_read += consumed
        capped = window >= max_bytes and start > 0
        if start == 0 or capped or _complete(failures, tracker, start):
            failures = _latest_launch(failures, tracker)
            return ReadResult(failures, tracker, total_read, size, capped and not failures, cascade)
        window = min(window * GROWTH, max_bytes)


def _complete(failures: list[Failure], tracker: LaunchTracker, start: int) -> bool:
    if not failures:
        return False
    segment = tracker.segment_start(failures[-1].offset)
    in_launch = [f for f in failures if f.offset >= segment]
    if segment > start:
        return True  # the launch began inside the window
    first = in_launch[0]
    return first.offset - start >= CONTEXT_BYTES and not first.truncated


def _latest_launch(failures: list[Failure], tracker: LaunchTracker) -> list[Failure]:
    if not failures:
        return failures
    segment = tracker.segment_start(failures[-1].offset)
    return [failure for failure in failures if failure.offset >= segment]


# -- --all: anchored scan -----------------------------------------------------------

# Literal anchors: every failure kind contains one of them ("Traceback" headers; "…Error"
# final lines, "error:" usage lines, "Fatal Python error").  Plain `find` passes, no regex
# with a leading wildcard.
ANCHORS = (b"Traceback", b"rror")
FALLBACK_ANCHORS = (b"Killed", b"sigquit", b"xception")
REGION_BEFORE = 4 << 10  # context before an anchor (the header line before "Traceback")
REGION_AFTER = 8 << 10  # the region is widened while a failure runs past its end
LAUNCH_HEAD = 256 << 10  # the launch command is usually printed at the start of the log


def _anchor_positions(source: Source, size: int, anchors: tuple[bytes, ...]) -> list[int]:
    fast = getattr(source, "find_anchors", None)
    found = fast(anchors) if fast is not None else None
    if found is not None:
        return found
    positions: list[int] = []
    carry = b""
    position = 0
    longest = max(len(anchor) for anchor in anchors)
    for chunk in source.read_range(0, size):
        data = carry + chunk
        base = position - len(carry)
        for anchor in anchors:
            index = data.find(anchor)
            while index >= 0:
                positions.append(base + index)
                index = data.find(anchor, index + 1)
        position += len(chunk)
        carry = data[-(longest - 1) :] if longest > 1 else b""
    return sorted(set(positions))


def _regions(positions: Iterable[int], size: int) -> list[tuple[int, int]]:
    spans = sorted((max(0, p - REGION_BEFORE), min(size, p + REGION_AFTER)) for p in positions)
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _scan_region(source: Source, start: int, end: int, size: int, max_region: int) -> tuple[
    list[Failure], LaunchTracker, list[str], int, int
]:
    """Scan [start, end), widening it while a failure is cut by either edge."""
    total = 0
    while True:
        failures, tracker, cascade, consumed = _scan(source, start, end)
        total += consumed
        cut_at_start = start > 0 and bool(failures) and failures[0].truncated and failures[0].offset - start < 1024
        cut_at_end = end < size and bool(failures) and failures[-1].end_offset >= end - 1024
        if not (cut_at_start or cut_at_end) or end - start >= max_region:
            return failures, tracker, cascade, total, end
        if cut_at_start:
            start = max(0, start - 4 * REGION_BEFORE - (end - start))
        if cut_at_end:
            end = min(size, end + 2 * (end - start))


def read_all(source: Source, *, max_region: int = 64 << 20) -> ReadResult:
    """Every failure in the file: find literal anchors, then parse only the regions around them."""
    size = source.size()
    positions = _anchor_positions(source, size, ANCHORS)
    total = size
    if not positions:
        positions = _anchor_positions(source, size, FALLBACK_ANCHORS)
        total += size
    failures: dict[int, Failure] = {}
    _, tracker, _, consumed = _scan(source, 0, min(size, LAUNCH_HEAD))
    total += consumed
    cascade: list[str] = []
    scanned_to = 0
    for start, end in _regions(positions, size):
        if end <= scanned_to:
            continue  # already covered by a widened region
        start = max(start, scanned_to)
        region_failures, region_tracker, region_cascade, consumed, scanned_to = _scan_region(
            source, start, end, size, max_region
        )
        total += consumed
        cascade.extend(region_cascade)
        for failure in region_failures:
            failures.setdefault(failure.offset, failure)
        tracker.absorb(region_tracker, later_command_wins=True)
    ordered = sorted(failures.values(), key=lambda failure: failure.offset)
    return ReadResult(_drop_overlaps(ordered), tracker, total, size, False, cascade)


def _drop_overlaps(failures: list[Failure]) -> list[Failure]:
    """A region boundary can cut a traceback, yielding a truncated copy that ends where the
    complete one ends.  Tracebacks of several ranks that merely overlap are all kept."""
    kept: list[Failure] = []
    for failure in failures:
        if kept and failure.truncated and failure.offset < kept[-1].end_offset == failure.end_offset:
            continue
        if kept and kept[-1].truncated and kept[-1].end_offset == failure.end_offset and failure.offset < kept[-1].offset:
            kept.pop()
        kept.append(failure)
    return kept
