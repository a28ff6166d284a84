"""Watch mode: follow a log while a server launches.

The same normalizer, scanner, grouping, patterns and fixes as `diagnose`; only the
source differs (bytes arrive over time).  Yields events: each new launch stage, then
either `ready` (the server is up) or `failure` with a full `Report`.
"""

from __future__ import annotations

import os
import select
import stat
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from logsleuth.api import DiagnoseOptions, build_report, load_library
from logsleuth.diagnosis.library import PatternSet
from logsleuth.errors import SourceError
from logsleuth.ingest.launch import LaunchTracker
from logsleuth.ingest.lines import LineSplitter, decode
from logsleuth.ingest.normalize import LineNormalizer
from logsleuth.ingest.scan import ReadResult
from logsleuth.ingest.stages import Stage, is_later, stage_of
from logsleuth.models import Failure, Report, SourceInfo
from logsleuth.sources.base import RESTART, Follows, Source
from logsleuth.tracebacks.scanner import FailureScanner

BACKLOG = 1 << 20  # on start, replay this much of the end of the log to learn the current stage
SETTLE_SECONDS = 1.0  # after a failure, wait this long for sibling ranks before reporting
IDLE_FLUSH_SECONDS = 0.5  # a traceback at the end of the log is complete after this much silence
# A traceback still without its exception line is being written (loggers flush in parts, ranks interleave):
# it is reported as cut short only after this much silence.
INCOMPLETE_GRACE_SECONDS = 10.0

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
                    yield RESTART
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
        self.history: list[Stage] = []  # the stages this launch reached, in order

    @property
    def stage(self) -> Stage | None:
        return self.history[-1] if self.history else None

    def feed(self, text: str, number: int, offset: int) -> Stage | None:
        line = self.normalizer.normalize(text, number, offset)
        markers = len(self.tracker.markers)
        self.tracker.observe(line)
        if len(self.tracker.markers) > markers:
            # A new launch in the same log: what came before belongs to an older one.
            self.scanner = FailureScanner()
            self.history = []
        self.scanner.feed(line)
        stage = stage_of(line.text)
        if stage is not None and is_later(stage, self.stage):
            self.history.append(stage)
            return stage
        return None

    def flush(self) -> list[Failure]:
        return self.scanner.finish()


@dataclass
class _Generation:
    """One generation of the followed file: all of it is dropped when the file is truncated or replaced."""

    launch: _Launch
    start: int  # offset the reading started at
    skip_first: bool  # started mid-file: the first line is a fragment
    last_data: float
    lines: LineSplitter = field(init=False)
    number: int = 0
    first_failure_at: float | None = None

    def __post_init__(self) -> None:
        self.lines = LineSplitter(self.start)

    @property
    def end(self) -> int:
        """Offset just past the last byte received (a partial line included)."""
        return self.lines.end


def watch(
    source: Source,
    follow: Follow,
    options: DiagnoseOptions | None = None,
    *,
    patterns: PatternSet | None = None,
    settle: float = SETTLE_SECONDS,
    idle_flush: float = IDLE_FLUSH_SECONDS,
    incomplete_grace: float = INCOMPLETE_GRACE_SECONDS,
    timeout: float | None = None,
    started: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[WatchEvent]:
    """Follow the log; yield stage events, then `ready` or `failure` (and `restarted` on rotation).

    The backlog (the end of the log already written when the watch starts) is read first, and only then are
    the stages of the latest launch in it shown: a "ready" line of an earlier launch followed by a later
    launch that is still loading is not ready."""
    options = options or DiagnoseOptions()
    patterns = patterns or load_library(options)
    size = source.size()
    start = max(0, size - BACKLOG)
    now = clock()
    started = now if started is None else started  # --timeout counts from here (connecting included)
    current = _Generation(_Launch(source.host), start, skip_first=start > 0, last_data=now)
    replaying = size > start  # events wait until the backlog is read

    def report() -> Report:
        failures = current.launch.flush()
        read = current.end - current.start
        result = ReadResult(failures, current.launch.tracker, read, current.end)
        return build_report([(source, SourceInfo(source.name, read, current.end), result)], options, patterns)

    for chunk in follow(start):
        now = clock()
        if chunk == RESTART:
            yield WatchEvent("restarted", text="log truncated or rotated; following it from the start")
            current = _Generation(_Launch(source.host), 0, skip_first=False, last_data=now)
            replaying = False
            continue
        if chunk:
            current.last_data = now
            stages: list[Stage] = []
            if replaying:
                in_backlog = max(0, size - current.end)  # bytes of this chunk that were there at the start
                _feed(current, chunk[:in_backlog])
                chunk = chunk[in_backlog:]
                if current.end >= size:
                    replaying = False
                    stages.extend(_backlog_state(current.launch))
            stages.extend(_feed(current, chunk))
            for stage in stages:
                if stage.key == "ready":
                    yield WatchEvent("ready", stage=stage)
                    return
                yield WatchEvent("stage", stage=stage)
            if current.launch.scanner.failures and current.first_failure_at is None:
                current.first_failure_at = now
        scanner = current.launch.scanner
        quiet = incomplete_grace if scanner.has_incomplete() else idle_flush
        if current.first_failure_at is None and scanner.has_open() and now - current.last_data >= quiet:
            current.first_failure_at = now  # a traceback at the very end: complete after the silence
        if current.first_failure_at is not None and now - current.first_failure_at >= settle:
            final = report()
            if final.failures:
                yield WatchEvent("failure", report=final)
                return
            current.first_failure_at = None
        if timeout is not None and now - started >= timeout:
            raise SourceError(f"{source.name}: not ready after {timeout:g} s (last stage: {_stage_label(current)})")
    # The stream ended (a pipe's writer closed, the remote tail died): a failure, or an error; never "ready".
    final = report()
    if final.failures:
        yield WatchEvent("failure", report=final)
        return
    raise SourceError(f"{source.name}: the log ended before the server was ready (last stage: {_stage_label(current)})")


def _stage_label(current: _Generation) -> str:
    return current.launch.stage.label if current.launch.stage else "none seen"


def _backlog_state(launch: _Launch) -> list[Stage]:
    """The stages to show once the backlog is read: those the latest launch in it reached.  "ready" counts
    only if that launch has not failed since."""
    failed = bool(launch.scanner.failures) or launch.scanner.has_open()
    return [stage for stage in launch.history if not (failed and stage.key == "ready")]


def _feed(current: _Generation, chunk: bytes) -> list[Stage]:
    """Feed the complete lines of `chunk` to the launch; return the stages they reach."""
    reached: list[Stage] = []
    for raw, line_offset in current.lines.feed(chunk):
        if current.skip_first:
            current.skip_first = False
            continue
        current.number += 1
        stage = current.launch.feed(decode(raw), current.number, line_offset)
        if stage is not None:
            reached.append(stage)
    return reached


def follow_stream(fd: int, *, poll: float = 0.1, wait_for_writer: bool = False) -> Follow:
    """Read a pipe as it is written (`kubectl logs -f … | logsleuth watch -`, a named FIFO), without ever
    blocking for longer than `poll`, so that --timeout holds.  Ends when the writer closes the pipe.

    `wait_for_writer`: a named FIFO opened before any writer reads as ended at once; keep polling until the
    first bytes arrive."""

    def chunks(offset: int) -> Iterator[bytes]:
        os.set_blocking(fd, False)
        seen_data = False
        while True:
            readable, _, _ = select.select([fd], [], [], poll)
            if not readable:
                yield b""
                continue
            try:
                data = os.read(fd, 1 << 20)
            except BlockingIOError:
                yield b""
                continue
            except OSError as exc:
                raise SourceError(f"cannot read the stream: {exc.strerror or exc}") from None
            if data:
                seen_data = True
                yield data
            elif wait_for_writer and not seen_data:
                yield b""
                time.sleep(poll)
            else:
                return

    return chunks


@dataclass
class StreamSource:
    """A pipe being watched: nothing is written before the watch starts, so there is no backlog."""

    name: str
    host: str | None = None

    def size(self) -> int:
        return 0

    def read_range(self, start: int, end: int) -> Iterator[bytes]:
        return iter(())

    def close(self) -> None:
        pass


def _open_stream(spec: str) -> tuple[StreamSource, Follow, int | None] | None:
    """stdin or a local FIFO, followed as a stream; None for anything else (a regular file or a remote log)."""
    if spec == "-":
        try:
            fd = sys.stdin.fileno() if sys.stdin is not None else -1
            os.fstat(fd)
        except (OSError, ValueError):
            raise SourceError("stdin: not open (nothing to watch)") from None
        return StreamSource("-"), follow_stream(fd), None
    try:
        is_fifo = stat.S_ISFIFO(os.stat(spec).st_mode)
    except OSError:
        return None
    if not is_fifo:
        return None
    try:
        fd = os.open(spec, os.O_RDONLY | os.O_NONBLOCK)  # O_NONBLOCK: opening a FIFO without a writer blocks
    except OSError as exc:
        raise SourceError(f"{spec}: {exc.strerror or exc}") from None
    return StreamSource(spec), follow_stream(fd, wait_for_writer=True), fd


def watch_spec(spec: str, options: DiagnoseOptions, *, timeout: float | None = None) -> Iterator[WatchEvent]:
    """Watch SPEC: a local file (followed across rotation), stdin or a FIFO (followed as a stream), or
    HOST:PATH (followed with `tail -F` over SSH).  With `options.ssh.deadline` set, `timeout` counts from
    the moment the deadline was set, so that connecting and following share one bound."""
    started = time.monotonic()
    if timeout is not None and options.ssh.deadline is not None:
        started = options.ssh.deadline - timeout
    stream = _open_stream(spec)
    if stream is not None:
        source, follow_pipe, fd = stream
        try:
            yield from watch(source, follow_pipe, options, timeout=timeout, started=started)
        finally:
            if fd is not None:
                os.close(fd)
        return
    from logsleuth.sources.open import open_sources

    (opened,) = open_sources(spec, options.ssh)[:1]
    try:
        follow: Follow = opened.follow if isinstance(opened, Follows) else follow_local(opened.path)  # type: ignore[attr-defined]
        yield from watch(opened, follow, options, timeout=timeout, started=started)
    finally:
        opened.close()
