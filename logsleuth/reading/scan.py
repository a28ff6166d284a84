"""Exact scanning of a byte range of a log, and what a read returns: shared by the reader (read_latest,
read_all) and dense reading (dense.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from logsleuth.diagnosis.grouping import Grouper
from logsleuth.ingest.launch import LaunchTracker
from logsleuth.ingest.normalize import normalize_chunks
from logsleuth.models import Failure
from logsleuth.sources.base import Source, merged_ranges
from logsleuth.tracebacks.scanner import FailureScanner

GROWTH = 4  # each window (read_latest) or widened region is this many times the last
# Literal anchors: every failure kind contains one of them ("Traceback" headers; "…Error"
# final lines, "error:" usage lines, "Fatal Python error").  Plain `find` passes, no regex
# with a leading wildcard.
# "[logsleuth: " starts a runtime fact line (sources/runtime): a death with no traceback, e.g. an OOM kill.
ANCHORS = (b"Traceback", b"rror", b"[logsleuth: ")
FALLBACK_ANCHORS = (b"Killed", b"sigquit", b"xception")
REGION_BEFORE = 4 << 10  # context before an anchor (the header line before "Traceback")
REGION_AFTER = 8 << 10  # the region is widened while a failure runs past its end


@dataclass
class ReadResult:
    """What reading one source found: its failures, its launches, how much was read."""

    failures: list[Failure]
    tracker: LaunchTracker
    bytes_read: int  # distinct bytes examined, see SourceInfo.bytes_read
    size: int
    capped: bool = False
    cascade_lines: list[str] = field(default_factory=list)
    # Dense reading groups as it goes: then these are the groups, and `failures` only holds the
    # first failure of each (what a reader of the result may look at; the report takes the groups).
    groups: Grouper | None = None


class Examined:
    """The byte ranges of the log that were examined, each counted once (SourceInfo.bytes_read)."""

    def __init__(self) -> None:
        self._spans: list[tuple[int, int]] = []

    def add(self, start: int, end: int) -> None:
        if end > start:
            self._spans.append((start, end))
            if len(self._spans) > 4096:
                self._spans = merged_ranges(self._spans)

    @property
    def total(self) -> int:
        return sum(end - start for start, end in merged_ranges(self._spans))


def without_line_numbers(failures: list[Failure]) -> list[Failure]:
    """Line numbers counted from the middle of a file are not the file's: drop them (0 = unknown)."""
    return [replace(failure, line=0) for failure in failures]


@dataclass
class Scanned:
    """What one scan of a byte range found."""

    failures: list[Failure]
    tracker: LaunchTracker
    cascade: list[str]
    end: int  # where the text read ended


def failures_in(text: bytes, host: str | None) -> list[Failure]:
    """The failures in `text`, a piece of a log already read (lines whole), parsed alone."""
    scanner = FailureScanner()
    for line in normalize_chunks([text], host=host):
        scanner.feed(line)
    return scanner.finish()


def scan_range(source: Source, start: int, end: int, examined: Examined, *, line_start: bool | None = None) -> Scanned:
    """Parse [start, end) exactly.  `line_start`: `start` is known to begin a line (default: only 0 is)."""
    chunks: Iterable[bytes] = source.read_range(start, end)
    read_to = start

    def counted(stream: Iterable[bytes]) -> Iterator[bytes]:
        nonlocal read_to
        for chunk in stream:
            read_to += len(chunk)
            yield chunk

    scanner = FailureScanner()
    tracker = LaunchTracker()
    partial_first = start > 0 if line_start is None else not line_start
    lines = normalize_chunks(counted(chunks), start_offset=start, host=source.host, drop_partial_first=partial_first)
    for line in lines:
        tracker.observe(line)
        scanner.feed(line)
    failures = scanner.finish()
    for failure in failures:
        tracker.observe_failure(failure)
    examined.add(start, read_to)
    if start > 0:
        failures = without_line_numbers(failures)
    return Scanned(failures, tracker, [line.text for line in scanner.cascade_lines], read_to)


def latest_launch(failures: list[Failure], tracker: LaunchTracker) -> list[Failure]:
    if not failures:
        return failures
    segment = tracker.segment_start(failures[-1].offset)
    return [failure for failure in failures if failure.offset >= segment]


def regions(positions: Iterable[int], size: int) -> list[tuple[int, int]]:
    return merged_ranges((max(0, p - REGION_BEFORE), min(size, p + REGION_AFTER)) for p in positions)
