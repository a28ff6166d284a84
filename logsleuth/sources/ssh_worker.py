"""Remote sources served by a helper process forked before the command line is parsed.

Why: a remote diagnose has two CPU-bound halves.  Importing paramiko (cryptography, nacl, bcrypt) and
connecting takes ~0.15 s; starting the CLI, importing the parser and loading the patterns takes about as
long.  Threads would take turns on the GIL, so the console entry point forks once, before importing typer
(ssh_prefork.py).  The child imports paramiko at once and then waits; when `diagnose` opens a remote spec,
the child connects and serves the source's reads over two pipes while the parent goes on with its own work.
On 2 cores this takes ~0.1 s off a remote diagnose (bench/bench_ssh.py prints both).

Only the console entry point starts the helper; `logsleuth.api` used as a library (and the tests that call
it) opens remote sources in-process through the same `ssh.open_ssh_sources`.  Messages are length-prefixed
pickles between two processes of the same program: a request one way; the other way, its answer ("ok",
"error" for a SourceError, "usage" for a UsageError, "bug"), after any number of ("progress", text),
("notice", text) and, for a read, ("chunk", bytes).

This module is the wire format and the parent's side; ssh_worker_child.py is the helper's side.
"""

from __future__ import annotations

import os
import pickle
import select
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from logsleuth.errors import SourceError, UsageError
from logsleuth.sources import ssh_prefork
from logsleuth.sources.base import Source, SSHOptions

_HEADER = 8  # bytes of big-endian message length

Progress = Callable[[str], None]
IdleWork = Callable[[], bool]


def send_message(fd: int, message: tuple[Any, ...]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(_HEADER, "big") + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive_exact(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    while size > 0:
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            raise EOFError
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def receive_message(fd: int) -> tuple[Any, ...]:
    size = int.from_bytes(_receive_exact(fd, _HEADER), "big")
    message = pickle.loads(_receive_exact(fd, size))
    if not isinstance(message, tuple):
        raise EOFError  # not our protocol
    return message


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
        self._answers = answers  # fds owned by ssh_prefork, which closes them
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
        ssh_prefork.stop(grace=0.0)

    @staticmethod
    def _answer(kind: str, payload: Any) -> Any:
        if kind == "ok":
            return payload
        if kind == "error":
            raise SourceError(payload)
        if kind == "usage":
            raise UsageError(payload)
        raise HelperFailed(f"ssh helper: {payload}")

    def open_sources(self, spec: str, options: SSHOptions) -> list[Source]:
        # Callbacks stay here (their lines come over the pipe); holding a new host key is the helper's business.
        portable = replace(options, progress=None, idle_work=None, notice=None, hold_new_host_key=None)
        described = self.call(
            "open", spec, portable, progress=options.progress, notice=options.notice, idle_work=options.idle_work
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

    def find_anchors(self, anchors: tuple[bytes, ...]) -> list[int] | None:
        found = self._worker.call("anchors", self._handle, anchors, progress=self.progress)
        return None if found is None else list(found)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if not self._worker.abandoned:  # a stopped helper took its connections with it
                self._worker.call("close", self._handle)


def current() -> SSHWorker | None:
    """The helper forked by the console entry point, if there is one (a handle holds no state but its fds)."""
    if ssh_prefork.started is None:
        return None
    _pid, answers, requests = ssh_prefork.started
    return SSHWorker(answers, requests)
