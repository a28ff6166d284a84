"""Remote sources served by a helper process forked before the command line is parsed.

Why: a remote diagnose has two CPU-bound halves.  Importing paramiko (cryptography, nacl, bcrypt) and
connecting takes ~0.15 s; starting the CLI, importing the parser and loading the patterns takes about as
long.  Threads would take turns on the GIL, so the console entry point forks once, before importing typer
(ssh_prefork.py).  The child imports paramiko at once and then waits; when `diagnose` opens a remote spec,
the child connects and serves the source's reads over two pipes while the parent goes on with its own work.
On 2 cores this takes ~0.1 s off a remote diagnose (bench/bench_ssh.py prints both).

Only the console entry point starts the helper; `logsleuth.api` used as a library (and the tests that call
it) opens remote sources in-process through the same `ssh.open_ssh_sources`.  Messages are length-prefixed
pickles between two processes of the same program.

The child never prints: its stdin, stdout and stderr are /dev/null, so a pipe the parent writes to closes when
the parent exits.  It ignores Ctrl-C (the parent handles it), exits at end of stream, and on Linux also when
the parent dies (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from logsleuth.errors import SourceError
from logsleuth.sources import ssh_prefork
from logsleuth.sources.base import Source, SSHOptions

_HEADER = 8  # bytes of big-endian message length

Progress = Callable[[str], None]
IdleWork = Callable[[], bool]


def _send(fd: int, message: tuple[Any, ...]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(_HEADER, "big") + data)
    while view:
        view = view[os.write(fd, view) :]


def _recv_exact(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    while size > 0:
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            raise EOFError
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _recv(fd: int) -> tuple[Any, ...]:
    size = int.from_bytes(_recv_exact(fd, _HEADER), "big")
    message = pickle.loads(_recv_exact(fd, size))
    if not isinstance(message, tuple):
        raise EOFError  # not our protocol
    return message


# -- the parent side ---------------------------------------------------------------------------------------


class HelperFailed(RuntimeError):
    """The helper process died or hit a bug: a logsleuth bug, reported as an internal error."""


class SSHWorker:
    """The parent's handle on the helper process.  One request at a time, as `api.diagnose` reads."""

    def __init__(self, answers: int, requests: int) -> None:
        self._answers = answers  # fds owned by ssh_prefork, which closes them
        self._requests = requests

    def call(self, *request: Any, progress: Progress | None = None, idle_work: IdleWork | None = None) -> Any:
        """Send one request and return its answer, passing progress lines on.  Until the first message
        arrives, `idle_work()` runs step by step (while it returns True)."""
        self._send(request)
        if idle_work is not None:
            while not select.select([self._answers], [], [], 0)[0] and idle_work():
                pass
        while True:
            kind, payload = self._receive()
            if kind == "progress":
                if progress is not None:
                    progress(payload)
            else:
                return self._answer(kind, payload)

    def stream(self, *request: Any, progress: Progress | None = None) -> Iterator[bytes]:
        """Send a read request and yield its chunks.  An abandoned stream is drained, so that the next answer
        read is the next request's."""
        self._send(request)
        finished = False
        try:
            while True:
                kind, payload = self._receive()
                if kind == "chunk":
                    yield payload
                elif kind == "progress":
                    if progress is not None:
                        progress(payload)
                else:
                    finished = True
                    self._answer(kind, payload)
                    return
        finally:
            while not finished:
                kind, _ = self._receive()
                finished = kind not in ("chunk", "progress")

    def _send(self, request: tuple[Any, ...]) -> None:
        try:
            _send(self._requests, request)
        except OSError as exc:
            raise HelperFailed(f"ssh helper process is gone ({exc})") from None

    def _receive(self) -> tuple[str, Any]:
        try:
            kind, payload = _recv(self._answers)
        except (EOFError, OSError) as exc:
            raise HelperFailed(f"ssh helper process exited unexpectedly ({exc or 'end of stream'})") from None
        return kind, payload

    @staticmethod
    def _answer(kind: str, payload: Any) -> Any:
        if kind == "ok":
            return payload
        if kind == "error":
            raise SourceError(payload)
        raise HelperFailed(f"ssh helper: {payload}")

    def open_sources(self, spec: str, options: SSHOptions) -> list[Source]:
        portable = replace(options, progress=None, idle_work=None)  # callbacks stay here; progress lines come
        described = self.call("open", spec, portable, progress=options.progress, idle_work=options.idle_work)
        return [RemoteSourceProxy(self, *entry, progress=options.progress) for entry in described]


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
            self._worker.call("close", self._handle)


_worker: SSHWorker | None = None


def current() -> SSHWorker | None:
    """The helper forked by the console entry point, if there is one."""
    global _worker
    if ssh_prefork.started is None:
        _worker = None
    elif _worker is None:
        _pid, answers, requests = ssh_prefork.started
        _worker = SSHWorker(answers, requests)
    return _worker


# -- the child side ----------------------------------------------------------------------------------------


def child_main(requests: int, answers: int, argv: list[str]) -> None:
    """The helper's whole life (never returns): import paramiko, open the first remote source the command
    line names, then serve requests until end of stream."""
    status = 0
    try:
        _detach()
        from logsleuth.sources.ssh_spec import looks_remote

        line = ssh_prefork.CommandLine(argv)
        remote = [word for word in line.sources if looks_remote(word)]
        if remote:
            options = _ssh_options(line)
            from logsleuth.sources.ssh_paramiko import load_paramiko

            load_paramiko(options.config_file)  # the point of the helper: this runs while the parent starts
            from logsleuth.sources import ssh, ssh_files  # noqa: F401 - imported now, not after the request

            early = None if line.flags & {"-h", "--help"} else _open_early(remote[0], options, ssh.open_ssh_sources)
            _serve(requests, answers, ssh.open_ssh_sources, early)
    except BaseException:  # noqa: BLE001 - the child must never return into the parent's code
        status = 1
    finally:
        os._exit(status)


def _ssh_options(line: ssh_prefork.CommandLine) -> SSHOptions:
    """The SSH options `cli.diagnose_command` will build from these words (compared again on request)."""
    from pathlib import Path

    config = line.value("--ssh-config", "-F")
    return SSHOptions(
        config_file=str(Path(config)) if config else None,  # as typer's Path parameter spells it
        accept_new_host_key="--accept-new-host-key" in line.flags,
        all_files="--all-files" in line.flags,
    )


class EarlyOpen:
    """The first remote source, opened before the parent asked: while the parent is still importing, the
    helper has nothing else to do.  Used only if the parent's request is for the same spec and options."""

    def __init__(self, spec: str, options: SSHOptions) -> None:
        self.spec = spec
        self.options = options
        self.progress: list[str] = []  # replayed to the parent with the answer
        self.sources: list[Source] = []
        self.error: SourceError | None = None

    def matches(self, spec: str, options: SSHOptions) -> bool:
        return (spec, options) == (self.spec, self.options)  # progress and idle_work do not compare

    def close(self) -> None:
        for source in self.sources:
            source.close()


def _open_early(spec: str, options: SSHOptions, open_ssh_sources: OpenSSHSources) -> EarlyOpen:
    early = EarlyOpen(spec, options)
    try:
        early.sources = open_ssh_sources(spec, replace(options, progress=early.progress.append))
    except SourceError as exc:
        early.error = exc
    return early
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


OpenSSHSources = Callable[[str, SSHOptions], list[Source]]


def _serve(requests: int, answers: int, open_ssh_sources: OpenSSHSources, early: EarlyOpen | None) -> None:
    sources: dict[int, Source] = {}

    def progress(text: str) -> None:
        _send(answers, ("progress", text))

    def send_chunk(chunk: bytes) -> None:
        _send(answers, ("chunk", chunk))

    while True:
        try:
            request = _recv(requests)
        except EOFError:
            break
        try:
            if request[0] == "open" and early is not None:
                answer = _answer_open_early(request, early, sources, open_ssh_sources, progress)
                early = None
            else:
                answer = _handle(request, sources, open_ssh_sources, progress, send_chunk)
            _send(answers, ("ok", answer))
        except SourceError as exc:
            _send(answers, ("error", str(exc)))
        except (BrokenPipeError, ConnectionResetError):
            break
        except Exception as exc:  # noqa: BLE001 - a bug: the parent reports it as an internal error
            _send(answers, ("bug", f"{type(exc).__name__}: {exc}"))
    for source in sources.values():
        source.close()
    if early is not None:
        early.close()


def _answer_open_early(
    request: tuple[Any, ...],
    early: EarlyOpen,
    sources: dict[int, Source],
    open_ssh_sources: OpenSSHSources,
    progress: Progress,
) -> Any:
    _, spec, options = request
    if not early.matches(spec, options):
        early.close()
        return _handle(request, sources, open_ssh_sources, progress, lambda chunk: None)
    for line in early.progress:
        progress(line)
    if early.error is not None:
        raise early.error
    return _register(early.sources, sources)


def _register(opened: list[Source], sources: dict[int, Source]) -> list[tuple[int, str, str | None]]:
    described = []
    for source in opened:
        handle = len(sources) + 1
        sources[handle] = source
        described.append((handle, source.name, source.host))
    return described


def _handle(
    request: tuple[Any, ...],
    sources: dict[int, Source],
    open_ssh_sources: OpenSSHSources,
    progress: Progress,
    send_chunk: Callable[[bytes], None],
) -> Any:
    operation, *args = request
    if operation == "open":
        spec, options = args
        return _register(open_ssh_sources(spec, replace(options, progress=progress)), sources)
    source = sources[args[0]]
    if operation == "size":
        return source.size()
    if operation == "read":
        _, start, end, show_progress = args
        if hasattr(source, "progress"):
            source.progress = progress if show_progress else None
        for chunk in source.read_range(start, end):
            send_chunk(chunk)
        return None
    if operation == "anchors":
        find = getattr(source, "find_anchors", None)
        return None if find is None else find(args[1])
    if operation == "close":
        sources.pop(args[0]).close()
        return None
    raise ValueError(f"unknown request {operation!r}")
