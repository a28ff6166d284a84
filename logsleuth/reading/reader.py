"""Reading strategies over a `Source`: backwards windows for the latest failure, an anchored scan for
`--all`.  Both feed the same normalizer and scanner (scan.py); a traceback-dense log is read the dense way
(dense.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from logsleuth.diagnosis.grouping import MAX_GROUPS, fingerprint
from logsleuth.ingest.launch import LaunchTracker
from logsleuth.models import Failure
from logsleuth.reading.dense import read_all_dense, read_latest_dense
from logsleuth.reading.scan import (
    ANCHORS,
    FALLBACK_ANCHORS,
    GROWTH,
    REGION_BEFORE,
    Examined,
    ReadResult,
    Scanned,
    latest_launch,
    regions,
    scan_range,
)
from logsleuth.sources.base import DEFAULT_MAX_BYTES, FindsAnchors, Source, anchors_in_chunks

if TYPE_CHECKING:
    from logsleuth.sources.runtime.command import CommandSource

INITIAL_WINDOW = 128 << 10  # most crash logs end with the failure (and 64 KiB of context): start small
# The first failure of a launch must be preceded by this many failure-free bytes (or a
# launch marker, or the start of the file) before we trust we have seen its beginning.
CONTEXT_BYTES = 64 << 10
# A window or file with more failures (or anchors) than this is read the dense way: parsing them
# one by one would cost ~250 µs and ~3 KB each.
DENSE_FAILURES = 2_000
DENSE_ANCHORS = 20_000


# -- the latest launch: backwards windows ---------------------------------------------


def read_latest(source: Source, *, max_bytes: int = DEFAULT_MAX_BYTES, initial: int = INITIAL_WINDOW) -> ReadResult:
    """Read backwards from the end in growing windows until the latest launch's failures
    and what led to them are complete.  Cost depends on the failure, not the file size.

    Windows stop growing once they hold MAX_GROUPS groups.  A window with more than
    DENSE_FAILURES failures switches to dense reading, which then reads only the bytes before
    what was already read."""
    size = source.size()
    examined = Examined()
    window = min(initial, max_bytes) if size > initial else size
    while True:
        start = max(0, size - window)
        scanned = scan_range(source, start, size, examined)
        failures = latest_launch(scanned.failures, scanned.tracker)
        capped = window >= max_bytes and start > 0
        done = start == 0 or capped or launch_complete(scanned.failures, scanned.tracker, start)
        if not done and _group_count(failures) >= MAX_GROUPS:
            # Enough groups: stop here, without the pieces of a failure the window start cut (all
            # before the first whole traceback).
            whole = next((f.offset for f in failures if f.kind == "traceback" and not f.truncated), start)
            failures = [f for f in failures if f.offset >= whole or f.offset - start >= CONTEXT_BYTES]
            done = True
        if done:
            return ReadResult(failures, scanned.tracker, examined.total, size, capped and not failures, scanned.cascade)
        if len(scanned.failures) * GROWTH > DENSE_FAILURES:  # the next window would hold too many
            return read_latest_dense(source, size, start, scanned, examined, window, max_bytes)
        window = min(window * GROWTH, max_bytes)


def _group_count(failures: list[Failure]) -> int:
    return len({fingerprint(failure) for failure in failures if failure.kind != "killed"})


def launch_complete(failures: list[Failure], tracker: LaunchTracker, start: int) -> bool:
    """Whether a window of the log that starts at `start` holds the latest launch's failures whole: the launch
    began inside it, or its first failure is far enough in.  A command source (`docker logs --tail N`) widens
    until this holds."""
    if not failures:
        return False
    segment = tracker.segment_start(failures[-1].offset)
    in_launch = [f for f in failures if f.offset >= segment]
    if segment > start:
        return True  # the launch began inside the window
    first = in_launch[0]
    return first.offset - start >= CONTEXT_BYTES and not first.truncated


# -- --all: anchored scan -----------------------------------------------------------

LAUNCH_HEAD = 256 << 10  # the launch command is usually printed at the start of the log
MAX_REGION = 64 << 20


def _anchor_positions(source: Source, size: int, anchors: tuple[bytes, ...], limit: int | None) -> list[int] | None:
    """Sorted offsets of the anchors; None when there are more than `limit`."""
    if isinstance(source, FindsAnchors):
        return source.find_anchors(anchors, limit)  # a local file on two cores, a remote grep
    return anchors_in_chunks(source.read_range(0, size), 0, anchors, limit)




def _scan_region(source: Source, start: int, end: int, size: int, examined: Examined) -> Scanned:
    """Scan [start, end), widening it while a failure is cut by either edge."""
    while True:
        scanned = scan_range(source, start, end, examined)
        failures = scanned.failures
        cut_at_start = start > 0 and bool(failures) and failures[0].truncated and failures[0].offset - start < 1024
        cut_at_end = end < size and bool(failures) and failures[-1].end_offset >= end - 1024
        if not (cut_at_start or cut_at_end) or end - start >= MAX_REGION:
            return scanned
        if cut_at_start:
            start = max(0, start - 4 * REGION_BEFORE - (end - start))
        if cut_at_end:
            end = min(size, end + 2 * (end - start))


def read_all(source: Source) -> ReadResult:
    """Every failure in the file: find literal anchors, then parse only the regions around them.
    A file with more than DENSE_ANCHORS anchors is read the dense way instead."""
    size = source.size()
    examined = Examined()
    positions = _anchor_positions(source, size, ANCHORS, DENSE_ANCHORS)
    examined.add(0, size)  # the anchor search looked at every byte
    if positions is None:
        return read_all_dense(source, size, examined)
    if not positions:
        positions = _anchor_positions(source, size, FALLBACK_ANCHORS, DENSE_ANCHORS)
        if positions is None:
            return read_all_dense(source, size, examined)
    failures: dict[int, Failure] = {}
    tracker = scan_range(source, 0, min(size, LAUNCH_HEAD), examined).tracker
    cascade: list[str] = []
    scanned_to = 0
    for start, end in regions(positions, size):
        if end <= scanned_to:
            continue  # already covered by a widened region
        start = max(start, scanned_to)
        region = _scan_region(source, start, end, size, examined)
        scanned_to = region.end
        cascade.extend(region.cascade)
        for failure in region.failures:
            failures.setdefault(failure.offset, failure)
        tracker.absorb(region.tracker, later_command_wins=True)
    ordered = sorted(failures.values(), key=lambda failure: failure.offset)
    return ReadResult(_drop_overlaps(ordered), tracker, examined.total, size, False, cascade)


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




def read_latest_widening(source: CommandSource, max_bytes: int = DEFAULT_MAX_BYTES) -> ReadResult:
    """`read_latest` over a command source (`docker logs --tail N`, `journalctl -n N`), widened (the next N lines)
    until the latest launch's failures are complete or every line is held.  A log with no failure is read whole,
    as a file is."""
    while True:
        result = read_latest(source, max_bytes=max_bytes)
        if source.whole or launch_complete(result.failures, result.tracker, 0):
            return result
        source.widen()
