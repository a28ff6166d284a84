"""The SSH helper process's side (see parent.py): import paramiko, open the command line's remote
sources early (as many as `diagnose` or `watch` reads at once, `--parallel`), then serve requests until the
parent closes the pipes, each in a thread of its own: the parent reads several sources at once
(sources/fanout.py), and a `watch` follows its log in one request that lasts as long as the watch.

The early openings run before the command line is parsed, so they change nothing on disk: a host key they
accept as new (`--accept-new-host-key`) is held, and written only when the parent's `open` request for that
source arrives, which happens only once typer has accepted the command line.

The child never prints: its stdin, stdout and stderr are /dev/null, so a pipe the parent writes to closes when
the parent exits.  It ignores Ctrl-C (the parent handles it), exits at end of stream, and on Linux also when
the parent dies (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from logsleuth.errors import LogsleuthError, SourceError, UsageError
from logsleuth.internal.ssh_helper.argv import HelperArgv
from logsleuth.internal.ssh_helper.wire import STREAM_CONTROL, STREAM_WINDOW, Sender, receive_message
from logsleuth.sources.base import (
    FindsAnchors,
    Follows,
    Progress,
    ReadsRanges,
    ReportsProgress,
    Source,
    anchors_in_chunks,
    matches_in_chunks,
)
from logsleuth.sources.fanout import DEFAULT_PARALLEL
from logsleuth.sources.options import SSH_BACKENDS, SSHOptions

if TYPE_CHECKING:
    from logsleuth.sources.ssh.known_hosts import NewHostKey

OpenSSHSources = Callable[[str, SSHOptions], list[Source]]
Send = Callable[[str, Any], None]  # one message to the parent: ("progress", text), ("notice", text), ...


def child_main(requests: int, answers: int, argv: list[str]) -> None:
    """The helper's whole life (never returns): import paramiko, open the remote sources the command line
    names, then serve requests until end of stream."""
    status = 0
    try:
        _detach()
        line = HelperArgv(argv)
        remote = remote_specs(line)
        if remote:
            options = _ssh_options(line)
            if options.backend != "openssh":  # OpenSSH's ssh does the SSH: paramiko would be ~0.2 s of CPU for nothing
                from logsleuth.sources.ssh.importing import load_paramiko

                load_paramiko(options)  # the point of the helper: this runs while the parent starts
                from logsleuth.sources.ssh import paramiko_backend  # noqa: F401 - imported now, not after the request
            from logsleuth.sources.ssh.open import open_ssh_sources

            early = _open_early(early_specs(line, remote), options, open_ssh_sources)
            _serve(requests, answers, open_ssh_sources, early)
    except BaseException:  # noqa: BLE001 - the child must never return into the parent's code
        status = 1
    finally:
        os._exit(status)


def remote_specs(line: HelperArgv) -> list[str]:
    """The remote specs `diagnose` (or `watch`) will read: the sources expanded as the CLI expands them (`node[01-16]:/x`,
    `--hosts-file`).  Empty when the expansion fails: the CLI reports that and reads nothing."""
    from logsleuth.sources.fleet import expand_sources
    from logsleuth.sources.runtime.spec import looks_runtime
    from logsleuth.sources.spec import looks_remote

    try:
        specs = expand_sources(line.sources, line.value("--hosts-file"))
    except LogsleuthError:
        return []
    # Not stdin, not a local file, and not a container or unit on a host (`gpu7:docker:web`): those run a
    # command there (sources/runtime/remote.py), not the helper's file probe.
    return [spec for spec in dict.fromkeys(specs) if looks_remote(spec) and not looks_runtime(spec)]


def early_specs(line: HelperArgv, remote: list[str]) -> list[str]:
    """The remote specs to open before the parent asks: as many as `diagnose` reads at once (`--parallel N`),
    and none for `--help`."""
    if line.flags & {"-h", "--help"}:
        return []
    try:
        parallel = int(line.value("--parallel") or DEFAULT_PARALLEL)
    except ValueError:  # the CLI rejects the command line; early openings would never be asked for
        return []
    return remote[: max(1, parallel)]


def _ssh_options(line: HelperArgv) -> SSHOptions:
    """The SSH options `cli.diagnose_command` (or `watch_command`) will build from these words (compared again on
    request, deadline aside: see EarlyOpen.matches)."""
    from pathlib import Path

    config = line.value("--ssh-config", "-F")
    backend = line.value("--ssh-backend")
    return SSHOptions(
        config_file=str(Path(config)) if config else None,  # as typer's Path parameter spells it
        backend=backend if backend in SSH_BACKENDS else "auto",
        accept_new_host_key="--accept-new-host-key" in line.flags,
        all_files="--all-files" in line.flags,
        wait_for_missing=line.command == "watch",  # as watch_spec opens a remote log
        deadline=_deadline(line.value("--timeout")),
        deadline_seconds=_timeout_seconds(line.value("--timeout")),
    )


def _deadline(timeout: str | None) -> float | None:
    """`watch --timeout S` bounds the whole watch, connecting included: counted from now, the process's start
    (time.monotonic() is the same clock in both processes), so an early connection never outlasts it."""
    import time

    seconds = _timeout_seconds(timeout)
    return time.monotonic() + seconds if seconds is not None else None


def _timeout_seconds(timeout: str | None) -> float | None:
    """The seconds of `--timeout S` as the CLI reads them; None when absent or not a positive number (the CLI
    rejects it)."""
    import math

    try:
        seconds = float(timeout) if timeout is not None else math.nan
    except ValueError:
        return None
    return seconds if seconds > 0 and math.isfinite(seconds) else None


_PROGRESS_POLL = 0.05  # seconds between progress checks while the parent waits for an early opening


class EarlyOpen:
    """A remote source opened before the parent asked, in a thread of its own: while the parent is still
    importing, the helper has nothing else to do, and several hosts connect at the same time instead of one
    after the other.  Used only if the parent's request is for the same spec and options."""

    def __init__(self, spec: str, options: SSHOptions, open_ssh_sources: OpenSSHSources) -> None:
        self.spec = spec
        self.options = options
        self.messages: list[tuple[str, str]] = []  # ("progress"|"notice", text), passed on with the answer
        self.new_host_keys: list[NewHostKey] = []  # accepted, but written only when the parent asks
        self.sources: list[Source] = []
        self.error: Exception | None = None
        self._thread = threading.Thread(target=self._open, args=(open_ssh_sources,), daemon=True)
        self._thread.start()

    def _open(self, open_ssh_sources: OpenSSHSources) -> None:
        options = replace(
            self.options,
            progress=lambda text: self.messages.append(("progress", text)),
            notice=lambda text: self.messages.append(("notice", text)),
            hold_new_host_key=self.new_host_keys.append,
        )
        try:
            self.sources = open_ssh_sources(self.spec, options)
        except Exception as exc:  # noqa: BLE001 - handed to the parent with the answer
            self.error = exc

    def matches(self, spec: str, options: SSHOptions) -> bool:
        """The callbacks do not compare, nor does the deadline: `watch --timeout` sets the parent's a little later
        than the helper's own (_deadline)."""
        return (spec, replace(options, deadline=None)) == (self.spec, replace(self.options, deadline=None))

    def wait(self, send: Send) -> None:
        """Wait for the opening to finish, passing its lines on as they come (a slow host shows
        "connecting to gpu7… (attempt 2)" while it happens, not afterwards)."""
        sent = 0
        while True:
            self._thread.join(_PROGRESS_POLL)
            while sent < len(self.messages):
                send(*self.messages[sent])
                sent += 1
            if not self._thread.is_alive():
                return

    def write_host_keys(self, send: Send) -> None:
        """The parent asked for this source, so its command line parsed: write the host keys accepted early
        (as OpenSSH does, even when the connection failed after the key was accepted)."""
        from logsleuth.sources.ssh.known_hosts import store_host_key

        for new in self.new_host_keys:
            store_host_key(new, lambda text: send("notice", text))
        self.new_host_keys.clear()

    def close(self) -> None:
        """Close what was opened; a connection still being made is left to the helper's exit."""
        if not self._thread.is_alive():
            for source in self.sources:
                source.close()


def _open_early(specs: list[str], options: SSHOptions, open_ssh_sources: OpenSSHSources) -> dict[str, EarlyOpen]:
    return {spec: EarlyOpen(spec, options, open_ssh_sources) for spec in specs}


def _detach() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: go when the parent goes
        except (OSError, AttributeError):
            pass
        if os.getppid() == 1:  # the parent died before prctl took effect
            os._exit(0)


def _serve(requests: int, answers: int, open_ssh_sources: OpenSSHSources, early: dict[str, EarlyOpen]) -> None:
    """Read requests until end of stream, each served in a thread of its own: the parent sends at most as many
    at once as it reads sources at once (its `--parallel`), and a slow host holds up only its own."""
    server = _Server(Sender(answers), open_ssh_sources, early)
    while True:
        try:
            request = receive_message(requests)
        except (EOFError, OSError):
            break
        server.accept(*request)
    server.close()


class _Flow:
    """A stream's window (wire.py): the bytes it may still send before the parent acknowledges more."""

    def __init__(self) -> None:
        self._room = STREAM_WINDOW
        self._cancelled = False
        self._changed = threading.Condition()

    def take(self, size: int) -> bool:
        """Wait for room, then count a chunk of `size` bytes as sent; False when the parent cancelled."""
        with self._changed:
            while self._room <= 0 and not self._cancelled:
                self._changed.wait()
            self._room -= size
            return not self._cancelled

    def control(self, operation: str, *args: Any) -> None:
        with self._changed:
            if operation == "credit":
                self._room += args[0]
            else:
                self._cancelled = True
            self._changed.notify_all()


class _Server:
    """What the request threads share: the pipe to the parent, the sources opened, the early openings."""

    def __init__(self, answers: Sender, open_ssh_sources: OpenSSHSources, early: dict[str, EarlyOpen]) -> None:
        self._answers = answers
        self._open_ssh_sources = open_ssh_sources
        self._early = early
        self._sources: dict[int, Source] = {}
        self._handles = itertools.count(1)
        self._flows: dict[int, _Flow] = {}  # reads in flight, by request id
        self._lock = threading.Lock()

    def accept(self, request_id: int, operation: str, *args: Any) -> None:
        """One message from the parent: flow control for a read is applied here, in the order it came; a
        request is served in a thread of its own."""
        with self._lock:
            if operation in STREAM_CONTROL:
                flow = self._flows.get(request_id)  # None: the read has ended meanwhile
                if flow is not None:
                    flow.control(operation, *args)
                return
            if operation in _STREAMS:  # before its thread starts: a credit may come before the first chunk
                self._flows[request_id] = _Flow()
        threading.Thread(target=self.serve, args=(request_id, operation, *args), daemon=True).start()

    def serve(self, request_id: int, operation: str, *args: Any) -> None:
        def send(kind: str, payload: Any) -> None:
            self._answers.send((request_id, kind, payload))

        try:
            answer: tuple[str, Any] = ("ok", self._answer(request_id, operation, args, send))
        except SourceError as exc:
            answer = ("error", str(exc))
        except UsageError as exc:
            answer = ("usage", str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug (or the parent gone): reported as an internal error
            answer = ("bug", f"{type(exc).__name__}: {exc}")
        with self._lock:
            self._flows.pop(request_id, None)
        with contextlib.suppress(OSError):  # the parent is gone: the main thread meets the end of the requests
            send(*answer)

    def _answer(self, request_id: int, operation: str, args: tuple[Any, ...], send: Send) -> Any:
        if operation == "open":
            spec, options = args
            with self._lock:
                early = self._early.pop(spec, None)
            if early is not None:
                return self._open_early(early, spec, options, send)
            return self._register(self._open_ssh_sources(spec, _sending_lines(options, send)))
        if operation == "close":
            with self._lock:
                source = self._sources.pop(args[0])
            source.close()
            return None
        with self._lock:
            source = self._sources[args[0]]
            flow = self._flows.get(request_id)
        if flow is not None:
            return _STREAMS[operation](source, *args[1:], send=send, flow=flow)
        return _use(source, operation, args[1:], send)

    def _open_early(self, early: EarlyOpen, spec: str, options: SSHOptions, send: Send) -> Any:
        if not early.matches(spec, options):
            early.close()
            return self._register(self._open_ssh_sources(spec, _sending_lines(options, send)))
        early.wait(send)
        early.write_host_keys(send)
        if early.error is not None:
            raise early.error
        return self._register(early.sources)

    def _register(self, opened: list[Source]) -> list[tuple[int, str, str | None, bool]]:
        described = []
        with self._lock:
            for source in opened:
                handle = next(self._handles)
                self._sources[handle] = source
                described.append((handle, source.name, source.host, getattr(source, "missing_at_open", False)))
        return described

    def close(self) -> None:
        """The parent is gone or done: close what is open (a read still running on it ends with it)."""
        with self._lock:
            opened, self._sources = list(self._sources.values()), {}
            unused, self._early = list(self._early.values()), {}
        for source in opened:
            source.close()
        for opening in unused:
            opening.close()  # its held host keys are dropped: the parent never asked (the command line failed)


def _sending_lines(options: SSHOptions, send: Send) -> SSHOptions:
    return replace(options, progress=lambda text: send("progress", text), notice=lambda text: send("notice", text))


def _read(source: Source, start: int, end: int, show_progress: bool, *, send: Send, flow: _Flow) -> None:
    """A read request: its chunks as they come, within the window the parent allows."""
    if isinstance(source, ReportsProgress):
        source.progress = (lambda text: send("progress", text)) if show_progress else None
    _send_chunks(source.read_range(start, end), send, flow)


@runtime_checkable
class _Notices(Protocol):
    notice: Progress | None  # a follow's "reconnecting (attempt n)…" (files.SSHFileSource)


def _follow(source: Source, offset: int, *, send: Send, flow: _Flow) -> None:
    """A follow request (`watch HOST:PATH`): the log's bytes from `offset` on as it grows, each RESTART a chunk of
    its own and b"" idle ticks (watch keeps time with them, and a cancel is seen within a tick).  It ends only with
    an error or the parent's cancel.

    The whole follow runs in this request's thread, its end included: the openssh backend's `ssh` processes
    die with the thread that started them (PR_SET_PDEATHSIG is per thread), so a reconnect must not outlive it."""
    if not isinstance(source, Follows):
        raise SourceError(f"{source.name}: cannot be followed")
    if isinstance(source, _Notices):
        source.notice = lambda text: send("notice", text)
    chunks = source.follow(offset)
    try:
        _send_chunks(chunks, send, flow)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()  # ends the remote tail at once


def _send_chunks(chunks: Iterable[bytes], send: Send, flow: _Flow) -> None:
    for chunk in chunks:
        if not flow.take(len(chunk)):
            return  # the parent stopped reading (and drops the answer)
        send("chunk", chunk)


# The requests whose answer is a stream of chunks under flow control (wire.py), and what serves each.
_STREAMS: dict[str, Callable[..., None]] = {"read": _read, "follow": _follow}


def _use(source: Source, operation: str, args: tuple[Any, ...], send: Send) -> Any:
    """Any other request on an open source."""
    if operation == "size":
        return source.size()
    if operation == "clock":
        from logsleuth.sources.ssh.clock import KnowsRemoteClock

        if not isinstance(source, KnowsRemoteClock):
            raise SourceError(f"{source.name}: cannot tell its host's clock")
        return source.remote_clock()
    if operation == "anchors":
        anchors, limit = args
        if isinstance(source, FindsAnchors):
            return source.find_anchors(anchors, limit)
        return anchors_in_chunks(source.read_range(0, source.size()), 0, anchors, limit)  # SFTP: read it all
    if operation == "matches":  # health's search: which anchor each hit is
        anchors, limit = args
        find_matches = getattr(source, "find_matches", None)
        if find_matches is not None:
            return find_matches(anchors, limit)
        return matches_in_chunks(source.read_range(0, source.size()), 0, anchors, limit)
    if operation == "ranges":  # health's windows, all in one request
        (ranges,) = args
        if isinstance(source, ReadsRanges):
            return source.read_ranges(ranges)
        return [b"".join(source.read_range(start, end)) for start, end in ranges]
    raise ValueError(f"unknown request {operation!r}")
