"""Remote sources served by a helper process forked before the command line is parsed.

Why: a remote diagnose has two CPU-bound halves.  Importing paramiko (cryptography, nacl, bcrypt) and
connecting takes ~0.15 s; starting the CLI, importing the parser and loading the patterns takes about as
long.  Threads would take turns on the GIL, so the console entry point forks once, before importing typer
(process.py).  The child imports paramiko at once and then waits; when `diagnose` opens a remote spec,
the child connects and serves the source's reads over two pipes while the parent goes on with its own work.
On 2 cores this takes ~0.1 s off a remote diagnose (bench/bench_ssh.py prints both).

Only the console entry point starts the helper; `logsleuth.api` used as a library (and the tests that call
it) opens remote sources in-process through the same `sources.ssh.open.open_ssh_sources`.

This module is the parent's side (and `open_through_helper`, the one seam the sources use); child.py is the
helper's side, wire.py the messages between them, process.py the fork, argv.py the early look at the command
line.
"""

from __future__ import annotations

import select
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from logsleuth.errors import SourceError, UsageError
from logsleuth.internal.ssh_helper import process
from logsleuth.internal.ssh_helper.wire import receive_message, send_message
from logsleuth.sources.base import Progress, Source
from logsleuth.sources.options import SSHOptions

IdleWork = Callable[[], bool]


# -- the parent side ---------------------------------------------------------------------------------------


class HelperFailed(RuntimeError):
    """The helper process died or hit a bug: a logsleuth bug, reported as an internal error."""


_PASSED_ON = ("progress", "notice")  # lines that come before an answer, for the caller's callbacks


class SSHWorker:
    """The parent's handle on the helper process.  One request at a time, as `api.diagnose` reads.

    The parent never waits on a helper that cannot answer: an exception while it waits (Ctrl-C) stops the
    helper at once, as its read may be stuck on a frozen server, and the handle is abandoned: its sources'
    `close()` does nothing more, and any other request fails with HelperFailed."""

    def __init__(self, answers: int, requests: int) -> None:
        self._answers = answers  # fds owned by process.py, which closes them
        self._requests = requests
        self.abandoned = False

    def call(
        self,
        *request: Any,
        progress: Progress | None = None,
        notice: Progress | None = None,
        idle_work: IdleWork | None = None,
    ) -> Any:
        """Send one request and return its answer, passing progress and notice lines on.  Until the first
        message arrives, `idle_work()` runs step by step (while it returns True)."""
        self._send(request)
        if idle_work is not None:
            try:
                while not select.select([self._answers], [], [], 0)[0] and idle_work():
                    pass
            except BaseException:  # Ctrl-C while the helper works: as in _receive
                self._abandon()
                raise
        while True:
            kind, payload = self._receive()
            if kind not in _PASSED_ON:
                return self._answer(kind, payload)
            _pass_on(kind, payload, progress, notice)

    def stream(self, *request: Any, progress: Progress | None = None) -> Iterator[bytes]:
        """Send a read request and yield its chunks.  A stream the caller stops reading is drained, so that
        the next answer read is the next request's."""
        self._send(request)
        finished = False
        try:
            while True:
                kind, payload = self._receive()
                if kind == "chunk":
                    yield payload
                elif kind in _PASSED_ON:
                    _pass_on(kind, payload, progress, None)
                else:
                    finished = True
                    self._answer(kind, payload)
                    return
        finally:
            while not finished and not self.abandoned:
                kind, _ = self._receive()
                finished = kind not in ("chunk", *_PASSED_ON)

    def _send(self, request: tuple[Any, ...]) -> None:
        if self.abandoned:
            raise HelperFailed("ssh helper process was stopped")
        try:
            send_message(self._requests, request)
        except OSError as exc:
            raise HelperFailed(f"ssh helper process is gone ({exc})") from None

    def _receive(self) -> tuple[str, Any]:
        try:
            kind, payload = receive_message(self._answers)
        except (EOFError, OSError) as exc:
            self._abandon()
            raise HelperFailed(f"ssh helper process exited unexpectedly ({exc or 'end of stream'})") from None
        except BaseException:  # Ctrl-C while the helper works
            self._abandon()
            raise
        return kind, payload

    def _abandon(self) -> None:
        self.abandoned = True
        process.stop(grace=0.0)

    @staticmethod
    def _answer(kind: str, payload: Any) -> Any:
        if kind == "ok":
            return payload
        if kind == "error":
            raise SourceError(payload)
        if kind == "usage":
            raise UsageError(payload)
        raise HelperFailed(f"ssh helper: {payload}")

    def open_sources(self, spec: str, options: SSHOptions, *, while_waiting: IdleWork | None = None) -> list[Source]:
        # Callbacks stay here (their lines come over the pipe); holding a new host key is the helper's business.
        portable = replace(options, progress=None, notice=None, hold_new_host_key=None)
        described = self.call(
            "open", spec, portable, progress=options.progress, notice=options.notice, idle_work=while_waiting
        )
        return [RemoteSourceProxy(self, *entry, progress=options.progress) for entry in described]


def _pass_on(kind: str, text: str, progress: Progress | None, notice: Progress | None) -> None:
    callback = progress if kind == "progress" else notice
    if callback is not None:
        callback(text)


class RemoteSourceProxy:
    """A remote `Source` living in the helper process: every call is one request."""

    def __init__(
        self, worker: SSHWorker, handle: int, name: str, host: str | None, *, progress: Progress | None
    ) -> None:
        self._worker = worker
        self._handle = handle
        self.name = name
        self.host = host
        self.progress = progress  # api.diagnose sets this to show bytes read
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

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if not self._worker.abandoned:  # a stopped helper took its connections with it
                self._worker.call("close", self._handle)


def current() -> SSHWorker | None:
    """The helper forked by the console entry point, if there is one (a handle holds no state but its fds)."""
    if process.started is None:
        return None
    _pid, answers, requests = process.started
    return SSHWorker(answers, requests)


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
