"""Watch mode: follow a log while a server launches.

The same normalizer, scanner, grouping, patterns and fixes as `diagnose`; only the
source differs (bytes arrive over time).  Yields events: each new launch stage, then
either `ready` (the server is up) or `failure` with a full `Report`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from logsleuth.api import DiagnoseOptions, build_report
from logsleuth.errors import SourceError
from logsleuth.launch import LaunchTracker
from logsleuth.matcher import PatternSet, load_patterns
from logsleuth.models import Failure, Report, SourceInfo
from logsleuth.normalize import MAX_LINE_CHARS, LineNormalizer, decode
from logsleuth.parser import FailureScanner
from logsleuth.reader import ReadResult
from logsleuth.sources.base import Source
from logsleuth.stages import Stage, is_later, stage_of

BACKLOG = 1 << 20  # on start, replay this much of the end of the log to learn the current stage
SETTLE_SECONDS = 1.0  # after a failure, wait this long for sibling ranks before reporting
IDLE_FLUSH_SECONDS = 0.5  # a traceback at the end of the log is complete after this much silence

EventKind = Literal["stage", "ready", "failure", "truncated", "restarted"]


@dataclass(frozen=True)
class WatchEvent:
    kind: EventKind
    stage: Stage | None = None
    text: str | None = None
    report: Report | None = None


Follow = Callable[[int], Iterator[bytes]]


def follow_local(path: str, *, poll: float = 0.1) -> Follow:
    """Poll a local file from an offset; survives truncation and rotation (re-opens by name).

    Yields b"" on every idle poll so the caller can keep time."""

    def chunks(offset: int) -> Iterator[bytes]:
        handle = open(path, "rb")  # noqa: SIM115 - reopened on rotation
        inode = os.fstat(handle.fileno()).st_ino
        handle.seek(offset)
        try:
            while True:
                data = handle.read(1 << 20)
                if data:
                    yield data
                    continue
                try:
                    current = os.stat(path)
                except FileNotFoundError:
                    yield b""
                    time.sleep(poll)
                    continue
                if current.st_ino != inode or current.st_size < handle.tell():
                    # Rotated (new file under the name) or truncated: start over at its beginning.
                    handle.close()
                    handle = open(path, "rb")  # noqa: SIM115
                    inode = os.fstat(handle.fileno()).st_ino
                    yield b"\x00LOGSLEUTH-RESTART\x00"
                    continue
                yield b""
                time.sleep(poll)
        finally:
            handle.close()

    return chunks


class _Launch:
    """Everything known about the launch being watched."""

    def __init__(self, host: str | None) -> None:
        self.normalizer = LineNormalizer(host)
        self.tracker = LaunchTracker()
        self.scanner = FailureScanner()
        self.stage: Stage | None = None

    def feed(self, text: str, number: int, offset: int) -> Stage | None:
        line = self.normalizer.normalize(text, number, offset)
        markers = len(self.tracker.markers)
        self.tracker.observe(line)
        if len(self.tracker.markers) > markers:
            # A new launch in the same log: what came before belongs to an older one.
            self.scanner = FailureScanner()
            self.stage = None
        self.scanner.feed(line)
        stage = stage_of(line.text)
        if stage is not None and is_later(stage, self.stage):
            self.stage = stage
            return stage
        return None

    def flush(self) -> list[Failure]:
        return self.scanner.finish()


def watch(
    source: Source,
    follow: Follow,
    options: DiagnoseOptions | None = None,
    *,
    patterns: PatternSet | None = None,
    settle: float = SETTLE_SECONDS,
    idle_flush: float = IDLE_FLUSH_SECONDS,
    timeout: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[WatchEvent]:
    options = options or DiagnoseOptions()
    patterns = patterns or load_patterns(options.pattern_dirs, include_user=options.include_user_patterns)
    size = source.size()
    start = max(0, size - BACKLOG)
    launch = _Launch(source.host)
    number = 0
    offset = start
    partial = b""
    skip_first = start > 0
    first_failure_at: float | None = None
    last_data = clock()
    started = clock()

    def report() -> Report:
        failures = launch.flush()
        result = ReadResult(failures, launch.tracker, offset - start, offset)
        info = SourceInfo(source.name, offset - start, offset)
        return build_report([(source, info, result)], options, patterns)

    for chunk in follow(start):
        now = clock()
        if chunk == b"\x00LOGSLEUTH-RESTART\x00":
            yield WatchEvent("restarted", text="log truncated or rotated; following it from the start")
            launch, partial, offset, number, skip_first = _Launch(source.host), b"", 0, 0, False
            continue
        if chunk:
            last_data = now
            data = partial + chunk
            lines = data.split(b"\n")
            partial = lines.pop()
            if len(partial) > MAX_LINE_CHARS * 4:
                partial = partial[: MAX_LINE_CHARS * 4]  # a runaway line: keep memory bounded
            for raw in lines:
                line_offset = offset
                offset += len(raw) + 1
                if skip_first:
                    skip_first = False
                    continue
                number += 1
                stage = launch.feed(decode(raw[:MAX_LINE_CHARS]), number, line_offset)
                if stage is not None:
                    if stage.key == "ready":
                        yield WatchEvent("ready", stage=stage)
                        return
                    yield WatchEvent("stage", stage=stage)
            if launch.scanner.failures and first_failure_at is None:
                first_failure_at = now
        idle = now - last_data
        if first_failure_at is None and launch.scanner.has_open() and idle >= idle_flush:
            first_failure_at = now  # a traceback at the very end: complete after the silence
        if first_failure_at is not None and now - first_failure_at >= settle:
            final = report()
            if final.failures:
                yield WatchEvent("failure", report=final)
                return
            first_failure_at = None
        if timeout is not None and now - started >= timeout:
            raise SourceError(f"{source.name}: not ready after {timeout:.0f} s (last stage: "
                              f"{launch.stage.label if launch.stage else 'none seen'})")


def watch_spec(spec: str, options: DiagnoseOptions, *, timeout: float | None = None) -> Iterator[WatchEvent]:
    """Open SPEC (a local path, or HOST:PATH when the SSH source can follow) and watch it."""
    from logsleuth.sources.base import open_sources

    (source,) = open_sources(spec, options.ssh)[:1]
    try:
        remote_follow = getattr(source, "follow", None)
        if remote_follow is not None:
            follow: Follow = remote_follow
        elif getattr(source, "path", "-") not in ("-", None):
            follow = follow_local(source.path)  # type: ignore[attr-defined]
        else:
            raise SourceError(f"{spec}: cannot be followed (stdin); use diagnose instead")
        yield from watch(source, follow, options, timeout=timeout)
    finally:
        source.close()
