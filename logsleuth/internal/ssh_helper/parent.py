"""Remote sources served by a helper process forked before the command line is parsed.

Why: a remote diagnose has two CPU-bound halves.  Importing paramiko (cryptography, nacl, bcrypt) and
connecting takes ~0.15 s; starting the CLI, importing the parser and loading the patterns takes about as
long.  Threads would take turns on the GIL, so the console entry point forks once, before importing typer
(process.py).  The child imports paramiko at once and then waits; when `diagnose` (or `watch`) opens a remote
spec, the child connects and serves the source's reads (or follow) over two pipes while the parent goes on with
its own work.
On 2 cores this takes ~0.1 s off a remote diagnose (bench/bench_ssh.py prints both).

Only the console entry point starts the helper; `logsleuth.api` used as a library (and the tests that call
it) opens remote sources in-process through the same `sources.ssh.open.open_ssh_sources`.

This module is the parent's side (and `open_through_helper`, the one seam the sources use); child.py is the
helper's side, wire.py the messages between them, process.py the fork, argv.py the early look at the command
line.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from logsleuth.errors import SourceError, UsageError
from logsleuth.internal.ssh_helper import process
from logsleuth.internal.ssh_helper.wire import ANSWERS, CREDIT_EVERY, Sender, receive_message
from logsleuth.sources.base import GrepMatches, Progress, Source
from logsleuth.sources.options import SSHOptions

if TYPE_CHECKING:
    from logsleuth.models import ClockOffset

IdleWork = Callable[[], bool]


# -- the parent side ---------------------------------------------------------------------------------------


class HelperFailed(RuntimeError):
    """The helper process died or hit a bug: a logsleuth bug, reported as an internal error."""


_PASSED_ON = ("progress", "notice")  # lines that come before an answer, for the caller's callbacks
_GONE = "gone"  # not on the wire: what a waiting caller is handed when the helper is gone or stopped


class _Pending:
    """One request in flight: the messages the reader thread routed to it, until its answer.  Never more than
    a read's window of chunks pile up here (wire.STREAM_WINDOW), so the reader never waits for a caller."""

    def __init__(self, request_id: int) -> None:
        self.request_id = request_id
        self._messages: deque[tuple[str, Any]] = deque()
        self._changed = threading.Condition()
        self._dropped = False

    def put(self, kind: str, payload: Any) -> None:
        """From the reader thread.  A stream the caller stopped reading is drained here: its messages go."""
        with self._changed:
            if not self._dropped or kind == _GONE:
                self._messages.append((kind, payload))
                self._changed.notify_all()

    def get(self) -> tuple[str, Any]:
        with self._changed:
            while not self._messages:
                self._changed.wait()
            return self._messages.popleft()

    def has_message(self) -> bool:
        return bool(self._messages)

    def drop(self) -> None:
        """The caller stopped reading: what came and what is still to come is thrown away."""
        with self._changed:
            self._dropped = True
            self._messages.clear()


class _Connection:
    """The pipes to one helper process, shared by every caller: requests go out whole under a lock (wire.Sender),
    and one reader thread routes each message to the request it answers by its id.

    Why a reader thread rather than callers taking turns at reading: a caller that stopped reading (a dropped
    stream, a Ctrl-C) would leave its messages in the pipe for another to sort out, and a worker blocked in
    `read()` cannot be woken; with one reader, each caller waits on its own queue, which Ctrl-C interrupts."""

    def __init__(self, answers: int, requests: int) -> None:
        self._sender = Sender(requests)
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._lock = threading.Lock()
        self.gone: str | None = None  # why no request can be answered any more
        # The reader reads its own copy of the fd: process.stop() may close the original at any time.
        threading.Thread(target=self._read, args=(os.dup(answers),), name="logsleuth-ssh-helper", daemon=True).start()

    def start(self, request: tuple[Any, ...]) -> _Pending:
        with self._lock:
            if self.gone is not None:
                raise HelperFailed(self.gone)
            pending = _Pending(next(self._ids))
            self._pending[pending.request_id] = pending
        self.send(pending.request_id, *request)
        return pending

    def send(self, request_id: int, *message: Any) -> None:
        """A request, or a read's flow control (wire.STREAM_CONTROL); a helper that is gone fails the callers."""
        try:
            self._sender.send((request_id, *message))
        except OSError as exc:
            self.stop(f"ssh helper process is gone ({exc})")

    def _read(self, answers: int) -> None:
        try:
            while True:
                request_id, kind, payload = receive_message(answers)
                with self._lock:
                    pending = self._pending.pop(request_id) if kind in ANSWERS else self._pending.get(request_id)
                if pending is not None:
                    pending.put(kind, payload)
        except (EOFError, OSError, ValueError) as exc:
            self.stop(f"ssh helper process exited unexpectedly ({exc or 'end of stream'})")
        finally:
            os.close(answers)

    def stop(self, reason: str) -> None:
        """No more answers: every caller still waiting is handed the reason."""
        with self._lock:
            self.gone = self.gone or reason
            waiting, self._pending = list(self._pending.values()), {}
        for pending in waiting:
            pending.put(_GONE, self.gone)


_connection: _Connection | None = None
_connection_for: tuple[int, int, int] | None = None  # the process.started it was made for
_connection_lock = threading.Lock()


def _shared_connection() -> _Connection | None:
    global _connection, _connection_for
    with _connection_lock:
        if process.started is None:
            return None
        if _connection_for != process.started:
            _connection, _connection_for = _Connection(*process.started[1:]), process.started
        return _connection


class SSHWorker:
    """The parent's handle on the helper process.  Any number of threads may call it at once (api.diagnose
    reads several sources at a time); each request waits only for its own answer.

    The parent never waits on a helper that cannot answer: an exception while a caller waits (Ctrl-C) stops the
    helper at once, as its reads may be stuck on a frozen server, and the handle is abandoned: its sources'
    `close()` does nothing more, and any other request fails with HelperFailed."""

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection

    @property
    def abandoned(self) -> bool:
        return self._connection.gone is not None

    def call(
        self,
        *request: Any,
        progress: Progress | None = None,
        notice: Progress | None = None,
        idle_work: IdleWork | None = None,
    ) -> Any:
        """Send one request and return its answer, passing progress and notice lines on.  Until the first
        message arrives, `idle_work()` runs step by step (while it returns True)."""
        pending = self._connection.start(request)
        if idle_work is not None:
            self._waiting(lambda: _until(pending.has_message, idle_work))
        while True:
            kind, payload = self._receive(pending)
            if kind not in _PASSED_ON:
                return self._answer(kind, payload)
            _pass_on(kind, payload, progress, notice)

    def stream(
        self, *request: Any, progress: Progress | None = None, notice: Progress | None = None
    ) -> Iterator[bytes]:
        """Send a stream request ("read", "follow") and yield its chunks, acknowledging them as they are taken
        (wire.py).  A stream the caller stops reading is cancelled (a follow's remote tail ends with it), and what
        is already on its way is dropped by the reader thread: no other request ever sees it."""
        pending = self._connection.start(request)
        finished = False
        taken = 0  # bytes taken and not yet acknowledged
        try:
            while True:
                kind, payload = self._receive(pending)
                if kind == "chunk":
                    taken += len(payload)
                    if taken >= CREDIT_EVERY:
                        self._connection.send(pending.request_id, "credit", taken)
                        taken = 0
                    yield payload
                elif kind in _PASSED_ON:
                    _pass_on(kind, payload, progress, notice)
                else:
                    finished = True
                    self._answer(kind, payload)
                    return
        finally:
            if not finished:
                pending.drop()
                if not self.abandoned:
                    self._connection.send(pending.request_id, "cancel")

    def _receive(self, pending: _Pending) -> tuple[str, Any]:
        return self._waiting(pending.get)

    def _waiting(self, wait: Callable[[], Any]) -> Any:
        """`wait()`, but an exception while it runs (Ctrl-C) abandons the helper: see the class."""
        try:
            return wait()
        except BaseException:
            self._abandon()
            raise

    def _abandon(self) -> None:
        self._connection.stop("ssh helper process was stopped")
        process.stop(grace=0.0)

    @staticmethod
    def _answer(kind: str, payload: Any) -> Any:
        if kind == "ok":
            return payload
        if kind == "error":
            raise SourceError(payload)
        if kind == "usage":
            raise UsageError(payload)
        if kind == _GONE:
            raise HelperFailed(payload)
        raise HelperFailed(f"ssh helper: {payload}")

    def open_sources(self, spec: str, options: SSHOptions, *, while_waiting: IdleWork | None = None) -> list[Source]:
        # Callbacks stay here (their lines come over the pipe); holding a new host key is the helper's business.
        portable = replace(options, progress=None, notice=None, hold_new_host_key=None)
        described = self.call(
            "open", spec, portable, progress=options.progress, notice=options.notice, idle_work=while_waiting
        )
        return [
            RemoteSourceProxy(self, *entry, progress=options.progress, notice=options.notice) for entry in described
        ]


def _until(done: Callable[[], bool], step: IdleWork) -> None:
    """`step()` again and again until `done()`, or until it has nothing more to do."""
    while not done() and step():
        pass


def _pass_on(kind: str, text: str, progress: Progress | None, notice: Progress | None) -> None:
    callback = progress if kind == "progress" else notice
    if callback is not None:
        callback(text)


class RemoteSourceProxy:
    """A remote `Source` living in the helper process: every call is one request."""

    def __init__(
        self,
        worker: SSHWorker,
        handle: int,
        name: str,
        host: str | None,
        missing_at_open: bool = False,
        *,
        progress: Progress | None,
        notice: Progress | None = None,
    ) -> None:
        self._worker = worker
        self._handle = handle
        self.name = name
        self.host = host
        self.missing_at_open = missing_at_open  # no file yet: a watch waits for it (SSHOptions.wait_for_missing)
        self.progress = progress  # api.diagnose sets this to show bytes read
        self.notice = notice  # hears a follow's "reconnecting (attempt n)…"
        self.confirms_silence = True  # a follow here is files.SSHFileSource's, which yields ALIVE
        self._size: int | None = None
        self._closed = False

    def size(self) -> int:
        if self._size is None:
            self._size = int(self._worker.call("size", self._handle, progress=self.progress))
        return self._size

    def read_range(self, start: int, end: int) -> Iterator[bytes]:
        show = self.progress is not None
        return self._worker.stream("read", self._handle, start, end, show, progress=self.progress)

    def find_anchors(self, anchors: tuple[bytes, ...], limit: int | None = None) -> list[int] | None:
        found = self._worker.call("anchors", self._handle, anchors, limit, progress=self.progress)
        return None if found is None else list(found)

    def find_matches(
        self, anchors: tuple[bytes, ...], limit: int | None = None, start: int = 0, end: int | None = None
    ) -> GrepMatches | None:
        """find_anchors with each match's length (files.SSHFileSource.find_matches, run in the helper)."""
        found: GrepMatches | None = self._worker.call("matches", self._handle, anchors, limit, progress=self.progress)
        if found is None or (start == 0 and end is None):
            return found
        return found.between(start, end)

    def read_ranges(self, ranges: list[tuple[int, int]]) -> list[bytes]:
        """Every range in one request (files.SSHFileSource.read_ranges, run in the helper)."""
        data: list[bytes] = self._worker.call("ranges", self._handle, list(ranges), progress=self.progress)
        return data

    def follow(self, offset: int) -> Iterator[bytes]:
        """The log's bytes from `offset` on as it grows (files.SSHFileSource.follow, run in the helper).  Closing
        the iterator cancels the follow, which ends the remote tail."""
        return self._worker.stream("follow", self._handle, offset, notice=self.notice)

    def remote_clock(self) -> ClockOffset:
        """The host's clock against ours (sources/ssh/clock.py), measured by the helper over the source's
        connection.  The helper's clock is ours: both processes read the same system clock."""
        clock: ClockOffset = self._worker.call("clock", self._handle)
        return clock

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if not self._worker.abandoned:  # a stopped helper took its connections with it
                self._worker.call("close", self._handle)


def current() -> SSHWorker | None:
    """The helper forked by the console entry point, if there is one (every handle shares its one connection)."""
    connection = _shared_connection()
    return None if connection is None else SSHWorker(connection)


def open_through_helper(spec: str, options: SSHOptions, *, while_waiting: IdleWork | None = None) -> list[Source] | None:
    """The one seam between the sources and the helper: the remote sources of `spec`, opened by the helper
    process when the console entry point started one, else None (then the caller opens them in-process).
    A helper that died before opening anything is stopped, and None returned.  `while_waiting` runs step
    by step while the helper connects (work the caller would do later anyway)."""
    worker = current()
    if worker is None:
        return None
    try:
        return worker.open_sources(spec, options, while_waiting=while_waiting)
    except HelperFailed:
        process.stop()  # a broken install? the caller opens in-process
        return None
