"""Watch mode: follow a log while a server launches.

The same normalizer, scanner, grouping, patterns and fixes as `diagnose`; only the
source differs (bytes arrive over time).  Yields events: each new launch stage, progress bar readings and
memory figures, then either `ready` (the server is up) or `failure` with a full `Report`, or `stall` when the
launch stopped moving.  With `then_follow`, a ready server is watched on: runtime crashes are reported like a
launch crash, and a few health signals as one-line warnings.

When a crash is reported (watch --settle): as soon as the failure is complete and every rank the launch
declared (tp × dp × pp per node, from server_args; else the ranks seen so far) has either failed or said
nothing for the settle time since the first failure.  A single-rank launch has no sibling to wait for.
"""

from __future__ import annotations

import os
import select
import stat
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from logsleuth.api import DiagnoseOptions, build_report, load_library
from logsleuth.diagnosis.fleet import event_time
from logsleuth.diagnosis.library import PatternSet
from logsleuth.errors import SourceError
from logsleuth.ingest.launch import LaunchTracker, parse_server_args
from logsleuth.ingest.lines import LineSplitter, decode
from logsleuth.ingest.normalize import LineNormalizer
from logsleuth.ingest.stages import (
    START_ADVICE,
    Stage,
    is_later,
    memory_in,
    openable_url,
    progress_in,
    ranks_declared,
    stage_of,
    url_from_server_args,
    url_in,
)
from logsleuth.models import Failure, LogLine, SourceInfo
from logsleuth.reading.scan import ReadResult
from logsleuth.sources.base import ALIVE, RESTART, ConfirmsSilence, Follows, Source
from logsleuth.sources.follow_local import Follow, follow_local, wait_for_file
from logsleuth.tracebacks.scanner import FailureScanner
from logsleuth.watch.events import EventKind, WatchEvent
from logsleuth.watch.health import ServerHealth

__all__ = ["RESTART", "EventKind", "Follow", "WatchEvent", "WatchTimeout", "follow_local", "watch", "watch_spec"]

BACKLOG = 1 << 20  # on start, replay this much of the end of the log to learn the current stage
SETTLE_SECONDS = 1.0  # after a failure, how long a rank that has not failed must be silent before reporting
# A traceback at the very end of the log whose exception line has arrived is complete unless more of it comes
# at once (a chained exception, a multi-line message: the same process writes them within microseconds).
TAIL_QUIET_SECONDS = 0.05
# A traceback still without its exception line is being written (loggers flush in parts, ranks interleave):
# it is reported as cut short only after this much silence, and over a link that can freeze (SSH) only once the
# host has confirmed that silence (base.ALIVE): a frozen or reconnecting connection is not the end of a log.
INCOMPLETE_GRACE_SECONDS = 10.0
STALL_LINES = 5  # the last lines of the log shown with a stall

class WatchTimeout(SourceError):
    """--timeout passed before the server was ready (exit 124, as timeout(1))."""


class _LaunchClock:
    """The launch's own time: the log's timestamps when it prints them, carried forward by the watch clock
    between them (an untimestamped uvicorn line, or a log without timestamps at all)."""

    def __init__(self) -> None:
        self._log: float | None = None  # the latest log timestamp, as seconds
        self._read_at = 0.0  # the watch clock when it was read
        self.stamped = False  # the latest line observed carried a timestamp of its own

    def observe(self, line: LogLine, now: float) -> float:
        moment = event_time(line.meta.timestamp)
        stamp = moment.seconds if moment is not None else None
        self.stamped = stamp is not None
        if stamp is not None:
            self._log, self._read_at = stamp, now
            return stamp
        return now if self._log is None else self._log + (now - self._read_at)


class _Launch:
    """Everything known about the launch being watched."""

    def __init__(self, host: str | None) -> None:
        self.host = host  # where the server runs, for its URL (None: this machine)
        self.normalizer = LineNormalizer(host)
        self.tracker = LaunchTracker()
        self.scanner = FailureScanner()
        self.clock = _LaunchClock()
        self._reset()

    def _reset(self) -> None:
        # The stages this launch reached, in order: each as its event, with when and the memory figures then.
        self.history: list[WatchEvent] = []
        self.memory: dict[str, str] = {}
        self.url: str | None = None
        self.bars: dict[str, int] = {}  # progress bar label -> last percent shown
        self.rank_seen: dict[str, float] = {}  # rank label -> watch clock of its latest line
        self.recent: deque[str] = deque(maxlen=STALL_LINES)
        self.health = ServerHealth()
        self.started_at: float | None = None  # the log's own time of the launch's first stage, when it gives it
        self._server_args: str | None = None
        self.declared: int | None = None  # ranks writing this log, from server_args

    @property
    def stage(self) -> Stage | None:
        return self.history[-1].stage if self.history else None

    def feed(self, text: str, number: int, offset: int, now: float) -> list[WatchEvent]:
        line = self.normalizer.normalize(text, number, offset)
        markers = len(self.tracker.markers)
        self.tracker.observe(line)
        if len(self.tracker.markers) > markers:
            # A new launch in the same log: what came before belongs to an older one.
            self.scanner = FailureScanner()
            self._reset()
        self.scanner.feed(line)
        at = self.clock.observe(line, now)
        if line.meta.rank_label:
            self.rank_seen[line.meta.rank_label] = now
        if line.text.strip():
            self.recent.append(line.text)
        self._learn(line.text)
        events: list[WatchEvent] = []
        stage = stage_of(line.text, self.tracker.engine)
        if stage is not None and is_later(stage, self.stage):
            if not self.history and stage.key == "args" and self.clock.stamped:
                self.started_at = at
            self.history.append(self.stage_event(stage, at))
            events.append(self.history[-1])
        if self.stage is not None and self.stage.key == "ready":
            warning = self.health.feed(line)
            if warning is not None:
                events.append(WatchEvent("warning", text=warning))
        return events

    def _learn(self, text: str) -> None:
        self.memory.update(memory_in(text))
        self.url = url_in(text) or self.url
        if self.tracker.server_args is not None and self.tracker.server_args != self._server_args:
            self._server_args = self.tracker.server_args
            pairs = parse_server_args(self._server_args)
            self.declared = ranks_declared(pairs)
            self.url = self.url or url_from_server_args(pairs)

    def stage_event(self, stage: Stage, at: float) -> WatchEvent:
        kind: EventKind = "ready" if stage.key == "ready" else "stage"
        url = openable_url(self.url, self.host) if self.url else None
        took = at - self.started_at if kind == "ready" and self.started_at is not None and self.clock.stamped else None
        return WatchEvent(kind, stage=stage, at=at, memory=tuple(self.memory.items()), url=url, launch_seconds=took)

    def progress(self, chunk: bytes) -> WatchEvent | None:
        """A progress event for the latest bar reading in `chunk`, when its percentage moved."""
        reading = progress_in(decode(chunk))
        if reading is None or self.bars.get(reading.label) == reading.percent:
            return None
        self.bars[reading.label] = reading.percent
        return WatchEvent("progress", stage=self.stage, progress=reading, memory=tuple(self.memory.items()))

    def failures(self) -> list[Failure]:
        """The failures found so far, open ones closed (only called once they are complete)."""
        found = self.scanner.finish() if self.scanner.has_open() else self.scanner.failures
        return list({id(failure): failure for failure in found}.values())  # finish() twice repeats fallbacks

    def ranks_settled(self, failures: list[Failure], now: float, since: float, settle: float) -> bool:
        """Every rank of the launch has failed, or has been silent for `settle` seconds since `since` (the
        first failure)."""
        failed = {failure.meta.rank_label for failure in failures} - {None}
        declared = self.declared or max(1, len(self.rank_seen))
        if declared <= 1 or len(failed) >= declared:
            return True
        if any(now - max(seen, since) < settle for rank, seen in self.rank_seen.items() if rank not in failed):
            return False
        unseen = declared - len(failed | set(self.rank_seen))
        return unseen <= 0 or now - since >= settle


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
    last_move: float = 0.0  # watch clock of the latest stage or progress (--stall)
    dismissed: int = 0  # failures found so far that made no report (an older launch's, say): not rebuilt

    def __post_init__(self) -> None:
        self.lines = LineSplitter(self.start)
        self.last_move = self.last_data

    @property
    def end(self) -> int:
        """Offset just past the last byte received (a partial line included)."""
        return self.lines.end

    def failure_due(
        self, now: float, settle: float, tail_quiet: float, incomplete_grace: float, link: _Link
    ) -> list[Failure]:
        """The failures to report now, or [] while they are incomplete or sibling ranks may still fail."""
        scanner = self.launch.scanner
        if scanner.has_open():
            if scanner.has_incomplete():
                if not link.silent_for(incomplete_grace, self.last_data, now):
                    return []
            elif now - self.last_data < tail_quiet:
                return []
        elif not scanner.failures:
            return []
        failures = self.launch.failures()
        if len(failures) <= self.dismissed:
            return []
        self.first_failure_at = self.first_failure_at if self.first_failure_at is not None else now
        return failures if self.launch.ranks_settled(failures, now, self.first_failure_at, settle) else []


@dataclass
class _Link:
    """What the follower said about its link (base.ALIVE).  A source that does not confirm (a local file, a pipe)
    cannot freeze: silence on it is the log's.  One that does (a remote log: base.ConfirmsSilence) is silent also
    while its connection is frozen or being reconnected: there, only a confirmation that came `seconds` after the
    last data proves that the log itself was silent that long."""

    confirms: bool
    confirmed_at: float | None = None  # watch clock of the latest ALIVE

    def confirm(self, now: float) -> None:
        self.confirmed_at = now

    def silent_for(self, seconds: float, last_data: float, now: float) -> bool:
        if not self.confirms:
            return now - last_data >= seconds
        return self.confirmed_at is not None and self.confirmed_at - last_data >= seconds


def _until_lost(chunks: Iterator[bytes], lost: list[SourceError]) -> Iterator[bytes]:
    """The follower's chunks; a SourceError it raises (the connection is gone for good) ends them and is kept in
    `lost`, so that a failure already under way can still be reported."""
    try:
        yield from chunks
    except SourceError as exc:
        lost.append(exc)


# What the `restarted` event says: a followed file was truncated or replaced; a container was started again.
FILE_RESTARTED = "log truncated or rotated; following it from the start"
RUNTIME_RESTARTED = "the container restarted; following the new one from its start"


def watch(
    source: Source,
    follow: Follow,
    options: DiagnoseOptions | None = None,
    *,
    patterns: PatternSet | None = None,
    settle: float = SETTLE_SECONDS,
    tail_quiet: float = TAIL_QUIET_SECONDS,
    incomplete_grace: float = INCOMPLETE_GRACE_SECONDS,
    timeout: float | None = None,
    stall: float | None = None,
    then_follow: bool = False,
    from_start: bool = False,
    details: bool = False,
    restarted_text: str = FILE_RESTARTED,
    confirms_silence: bool | None = None,
    waited_for: bool = False,
    started: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    stop: Callable[[], bool] | None = None,
) -> Iterator[WatchEvent]:
    """Follow the log; yield stage, progress and line events, then `ready`, `failure` or `stall` (and
    `restarted` on rotation).  Raises WatchTimeout after `timeout` seconds without ready.

    The backlog (the end of the log already written when the watch starts; with `from_start` all of it) is read
    first, and only then are the stages of the latest launch in it shown: a "ready" line of an earlier launch
    followed by a later launch that is still loading is not ready.  `stop()`, checked at every poll, ends the
    watch quietly (another log of the same fleet decided the outcome).  With `then_follow`, ready does not end
    the watch: a later crash does (and `warning` events tell a struggling server); stall and timeout stop
    counting at ready.  `confirms_silence`: whether the follower yields ALIVE (base.py; default: what the source
    says, base.ConfirmsSilence).  `waited_for`: the log did not exist when the watch began (a timeout before its
    first byte says it never appeared).  `details`: also yield progress bar readings and the latest line of each chunk (for a view
of the launch)."""
    options = options or DiagnoseOptions()
    patterns = patterns or load_library(options)
    size = source.size()
    start = 0 if from_start else max(0, size - BACKLOG)
    now = clock()
    started = now if started is None else started  # --timeout counts from here (connecting included)
    current = _Generation(_Launch(source.host), start, skip_first=start > 0, last_data=now)
    replaying = size > start  # events wait until the backlog is read
    ready = False
    if confirms_silence is None:
        confirms_silence = isinstance(source, ConfirmsSilence) and source.confirms_silence
    link = _Link(confirms=confirms_silence)
    lost: list[SourceError] = []

    def failure_event(failures: list[Failure], source_lost: str | None = None) -> WatchEvent | None:
        read = current.end - current.start
        result = ReadResult(failures, current.launch.tracker, read, current.end)
        what = (SourceInfo(source.name, read, current.end, host=source.host), result)
        final = build_report([what], options, patterns)
        return WatchEvent("failure", report=final, read=what, source_lost=source_lost) if final.failures else None

    for chunk in _until_lost(follow(start), lost):
        if stop is not None and stop():
            return
        now = clock()
        if chunk == ALIVE:
            link.confirm(now)
            chunk = b""
        if chunk == RESTART:
            yield WatchEvent("restarted", text=restarted_text)
            current = _Generation(_Launch(source.host), 0, skip_first=False, last_data=now)
            replaying = False
            continue
        if chunk:
            current.last_data = now
            events: list[WatchEvent] = []
            if replaying:
                in_backlog = max(0, size - current.end)  # bytes of this chunk that were there at the start
                _feed(current, chunk[:in_backlog], now)
                chunk = chunk[in_backlog:]
                if current.end >= size:
                    replaying = False
                    events.extend(_backlog_state(current.launch))
            events.extend(_feed(current, chunk, now))
            if details and chunk and not replaying:
                events.extend(_chunk_events(current.launch, chunk))
            for event in events:
                if event.kind in ("stage", "progress", "ready"):
                    current.last_move = now
                if event.kind == "ready":
                    if ready:
                        continue
                    ready = True
                    yield event
                    if not then_follow:
                        return
                    continue
                yield event
        failures = current.failure_due(now, settle, tail_quiet, incomplete_grace, link)
        if failures:
            failed = failure_event(failures)
            if failed is not None:
                yield failed
                return
            current.first_failure_at, current.dismissed = None, len(failures)
        if ready:
            continue
        if stall is not None and now - current.last_move >= stall:
            yield _stall_event(current.launch, stall)
            return
        if timeout is not None and now - started >= timeout:
            if waited_for and current.end == 0:
                raise _never_appeared(source.name, timeout)
            raise WatchTimeout(f"{source.name}: not ready after {timeout:g} s (last stage: {_stage_label(current)})")
    if lost:
        # The connection never came back.  A failure under way is reported as far as it arrived, said to be cut
        # short by the lost source (exit 3, not a confident diagnosis); else the error stands alone.
        failed = failure_event(current.launch.failures(), f"{lost[0]}; the failure above is what arrived before "
                               "the source was lost, and may be cut short")
        if failed is None:
            raise lost[0]
        yield failed
        return
    # The stream ended (a pipe's writer closed, the remote tail died): a failure, or an error; never "ready".
    failed = failure_event(current.launch.failures())
    if failed is not None:
        yield failed
        return
    if ready:
        return  # --then-follow: the server was ready and the log ended without a crash
    raise SourceError(f"{source.name}: the log ended before the server was ready (last stage: {_stage_label(current)})")


def _waiting_event(spec: str) -> WatchEvent:
    return WatchEvent("waiting", text=f"waiting for {spec} to appear")


def _never_appeared(spec: str, timeout: float) -> WatchTimeout:
    return WatchTimeout(f"{spec}: not ready after {timeout:g} s (the log never appeared)")


def _stage_label(current: _Generation) -> str:
    return current.launch.stage.label if current.launch.stage else "none seen"


def _stall_event(launch: _Launch, stall: float) -> WatchEvent:
    stage = launch.stage
    label = stage.label if stage else "before the first stage"
    advice = (stage.stall_advice if stage else "") or START_ADVICE
    return WatchEvent("stall", stage=stage, text=f"stalled: no new stage or progress for {stall:g} s while "
                      f"{label}. {advice}", lines=tuple(launch.recent), memory=tuple(launch.memory.items()))


def _backlog_state(launch: _Launch) -> list[WatchEvent]:
    """The stages to show once the backlog is read: those the latest launch in it reached.  "ready" counts
    only if that launch has not failed since."""
    failed = bool(launch.scanner.failures) or launch.scanner.has_open()
    return [event for event in launch.history if not (failed and event.kind == "ready")]


def _chunk_events(launch: _Launch, chunk: bytes) -> list[WatchEvent]:
    """What a chunk read live shows besides stages: its latest progress reading and its last line."""
    events: list[WatchEvent] = []
    progress = launch.progress(chunk)
    if progress is not None:
        events.append(progress)
    if launch.recent:
        events.append(WatchEvent("line", text=launch.recent[-1]))
    return events


def _feed(current: _Generation, chunk: bytes, now: float) -> list[WatchEvent]:
    """Feed the complete lines of `chunk` to the launch; return the events they make (before the backlog is
    read, only the state is kept)."""
    events: list[WatchEvent] = []
    for raw, line_offset in current.lines.feed(chunk):
        if current.skip_first:
            current.skip_first = False
            continue
        current.number += 1
        events.extend(current.launch.feed(decode(raw), current.number, line_offset, now))
    return events


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


class _Library:
    """The pattern library, loaded when there is time: step by step while a remote log connects in the SSH helper
    process (`load_step`), else at once when the watch starts."""

    def __init__(self, options: DiagnoseOptions) -> None:
        self._options = options
        self._patterns: PatternSet | None = None

    def load_step(self) -> bool:
        """One step of loading (the files, then one regex at a time); False when there is nothing left to do."""
        if self._patterns is None:
            self._patterns = load_library(self._options)
            return True
        return self._patterns.compile_next()

    def loaded(self) -> PatternSet:
        if self._patterns is None:
            self._patterns = load_library(self._options)
        return self._patterns


def watch_spec(
    spec: str,
    options: DiagnoseOptions,
    *,
    timeout: float | None = None,
    settle: float = SETTLE_SECONDS,
    stall: float | None = None,
    then_follow: bool = False,
    from_start: bool = False,
    details: bool = False,
    stop: Callable[[], bool] | None = None,
) -> Iterator[WatchEvent]:
    """Watch SPEC: a local file (followed across rotation, waited for while it does not exist), stdin or a FIFO
    (followed as a stream), or HOST:PATH (followed with `tail -F` over SSH).  With `options.ssh.deadline` set,
    `timeout` counts from the moment the deadline was set, so that connecting and following share one bound.
    `details`: as for `watch` (a fleet of logs shows stages only)."""
    started = time.monotonic()
    if timeout is not None and options.ssh.deadline is not None:
        started = options.ssh.deadline - timeout

    library = _Library(options)

    def follow_with(
        source: Source, follow: Follow, *, read_all: bool, restarted_text: str = FILE_RESTARTED,
        confirms_silence: bool | None = None, waited_for: bool = False,
    ) -> Iterator[WatchEvent]:
        return watch(source, follow, options, patterns=library.loaded(), timeout=timeout, started=started,
                     restarted_text=restarted_text, confirms_silence=confirms_silence, waited_for=waited_for,
                     settle=settle, stall=stall, then_follow=then_follow, from_start=read_all, details=details,
                     stop=stop)

    stream = _open_stream(spec)
    if stream is not None:
        source, follow_pipe, fd = stream
        try:
            yield from follow_with(source, follow_pipe, read_all=False)
        finally:
            if fd is not None:
                os.close(fd)
        return
    from logsleuth.sources.open import open_sources
    from logsleuth.sources.source_spec import source_spec

    kind = source_spec(spec).kind  # decided once, where the command line's sources were expanded
    if kind == "runtime":  # a container, unit or pod: its log is there already, or the runtime says why not
        from logsleuth.sources.runtime.follow import open_followed

        followed = open_followed(spec, options.ssh, whole=from_start)
        try:
            yield from follow_with(followed.source, followed.follow, read_all=from_start,
                                   restarted_text=RUNTIME_RESTARTED, confirms_silence=followed.confirms_silence)
        finally:
            followed.close()
        return

    appeared = False
    if kind != "remote" and not os.path.lexists(spec):
        yield _waiting_event(spec)
        for exists in wait_for_file(spec):
            if exists:
                break
            if stop is not None and stop():
                return
            if timeout is not None and time.monotonic() - started >= timeout:
                raise _never_appeared(spec, timeout)
        appeared = True
    # While the SSH helper process connects, the pattern library loads: the diagnosis of a crash needs it.  A remote
    # log that is not there yet opens all the same (the host is reachable), and its follow waits for it.
    ssh = replace(options.ssh, wait_for_missing=True) if kind == "remote" else options.ssh
    opened, *others = open_sources(spec, ssh, while_waiting=library.load_step)
    for other in others:  # a remote glob opens only its newest file (no --all-files here); never leak more
        other.close()
    try:
        remote_missing = getattr(opened, "missing_at_open", False)
        if remote_missing:
            yield _waiting_event(spec)
        follow: Follow = opened.follow if isinstance(opened, Follows) else follow_local(opened.path)  # type: ignore[attr-defined]
        # A log that appeared while we waited is all this launch's: read it from its first byte.
        yield from follow_with(opened, follow, read_all=from_start or appeared or remote_missing,
                               waited_for=remote_missing)
    finally:
        opened.close()
