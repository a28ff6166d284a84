"""The SSH helper process's side (see parent.py): import paramiko, open the command line's remote
sources early, then serve requests until the parent closes the pipes.

The early openings run before the command line is parsed, so they change nothing on disk: a host key they
accept as new (`--accept-new-host-key`) is held, and written only when the parent's `open` request for that
source arrives, which happens only once typer has accepted the command line.

The child never prints: its stdin, stdout and stderr are /dev/null, so a pipe the parent writes to closes when
the parent exits.  It ignores Ctrl-C (the parent handles it), exits at end of stream, and on Linux also when
the parent dies (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from logsleuth.errors import SourceError, UsageError
from logsleuth.internal.ssh_helper.argv import HelperArgv
from logsleuth.internal.ssh_helper.wire import receive_message, send_message
from logsleuth.sources.base import FindsAnchors, ReportsProgress, Source, anchors_in_chunks
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
        from logsleuth.sources.spec import looks_remote

        line = HelperArgv(argv)
        remote = [word for word in line.sources if looks_remote(word)]
        if remote:
            options = _ssh_options(line)
            from logsleuth.sources.ssh.importing import load_paramiko

            load_paramiko(options)  # the point of the helper: this runs while the parent starts
            from logsleuth.sources.ssh import paramiko_backend  # noqa: F401 - imported now, not after the request
            from logsleuth.sources.ssh.open import open_ssh_sources

            early = {} if line.flags & {"-h", "--help"} else _open_early(remote, options, open_ssh_sources)
            _serve(requests, answers, open_ssh_sources, early)
    except BaseException:  # noqa: BLE001 - the child must never return into the parent's code
        status = 1
    finally:
        os._exit(status)


def _ssh_options(line: HelperArgv) -> SSHOptions:
    """The SSH options `cli.diagnose_command` will build from these words (compared again on request)."""
    from pathlib import Path

    config = line.value("--ssh-config", "-F")
    backend = line.value("--ssh-backend")  # None until argv.DIAGNOSE_VALUE_OPTIONS lists it (with cli.py's option)
    return SSHOptions(
        config_file=str(Path(config)) if config else None,  # as typer's Path parameter spells it
        backend=backend if backend in SSH_BACKENDS else "auto",
        accept_new_host_key="--accept-new-host-key" in line.flags,
        all_files="--all-files" in line.flags,
    )


MAX_EARLY = 16  # remote sources opened at once before the parent asks (one thread and connection each)
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
        return (spec, options) == (self.spec, self.options)  # the callbacks do not compare

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
    return {spec: EarlyOpen(spec, options, open_ssh_sources) for spec in list(dict.fromkeys(specs))[:MAX_EARLY]}


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
    sources: dict[int, Source] = {}

    def send(kind: str, payload: Any) -> None:
        send_message(answers, (kind, payload))

    while True:
        try:
            request = receive_message(requests)
        except EOFError:
            break
        try:
            if request[0] == "open" and request[1] in early:
                answer = _answer_open_early(request, early.pop(request[1]), sources, open_ssh_sources, send)
            else:
                answer = _handle(request, sources, open_ssh_sources, send)
            send("ok", answer)
        except SourceError as exc:
            send("error", str(exc))
        except UsageError as exc:
            send("usage", str(exc))
        except (BrokenPipeError, ConnectionResetError):
            break
        except Exception as exc:  # noqa: BLE001 - a bug: the parent reports it as an internal error
            send("bug", f"{type(exc).__name__}: {exc}")
    for source in sources.values():
        source.close()
    for unused in early.values():
        unused.close()  # its held host keys are dropped: the parent never asked (the command line failed)


def _answer_open_early(
    request: tuple[Any, ...],
    early: EarlyOpen,
    sources: dict[int, Source],
    open_ssh_sources: OpenSSHSources,
    send: Send,
) -> Any:
    _, spec, options = request
    if not early.matches(spec, options):
        early.close()
        return _handle(request, sources, open_ssh_sources, send)
    early.wait(send)
    early.write_host_keys(send)
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
    request: tuple[Any, ...], sources: dict[int, Source], open_ssh_sources: OpenSSHSources, send: Send
) -> Any:
    operation, *args = request

    def progress(text: str) -> None:
        send("progress", text)

    def notice(text: str) -> None:
        send("notice", text)

    if operation == "open":
        spec, options = args
        return _register(open_ssh_sources(spec, replace(options, progress=progress, notice=notice)), sources)
    source = sources[args[0]]
    if operation == "size":
        return source.size()
    if operation == "read":
        _, start, end, show_progress = args
        if isinstance(source, ReportsProgress):
            source.progress = progress if show_progress else None
        for chunk in source.read_range(start, end):
            send("chunk", chunk)
        return None
    if operation == "anchors":
        _, anchors, limit = args
        if isinstance(source, FindsAnchors):
            return source.find_anchors(anchors, limit)
        return anchors_in_chunks(source.read_range(0, source.size()), 0, anchors, limit)  # SFTP: read it all
    if operation == "close":
        sources.pop(args[0]).close()
        return None
    raise ValueError(f"unknown request {operation!r}")
