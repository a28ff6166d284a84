"""The small interface every log source implements (local file, stdin, SSH)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from logsleuth.sources.ssh_known_hosts import NewHostKey

# Bytes read per request.  Large enough that syscalls and SSH round trips are
# amortized, small enough to keep memory flat.
CHUNK_SIZE = 1 << 20
# The one chunk a follower (`follow(offset)`) yields when the file was truncated or replaced: what comes after
# it is the new file from its first byte.
RESTART = b"\x00LOGSLEUTH-RESTART\x00"


class Source(Protocol):
    """A random-access byte source.

    `size()` is the current size; `read_range(start, end)` yields the bytes in
    [start, end) in chunks of at most CHUNK_SIZE.  Implementations raise
    `logsleuth.errors.SourceError` with a one-line message for anything the
    user can fix (missing file, permission, network).
    """

    name: str  # as the user wrote it, e.g. "gpu7:/var/log/sglang.log"
    host: str | None  # the host the log lives on; None for local files

    def size(self) -> int: ...

    def read_range(self, start: int, end: int) -> Iterator[bytes]: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class SSHOptions:
    """SSH settings from the command line (kept here so that building them never imports paramiko)."""

    config_file: str | None = None  # -F FILE; default ~/.ssh/config
    accept_new_host_key: bool = False  # like StrictHostKeyChecking=accept-new
    all_files: bool = False  # a glob picks every match instead of the newest
    connect_timeout: float = 10.0  # seconds; the config's ConnectTimeout wins when set
    # The fields below are logsleuth-ssh additions (docs/ssh.md).
    connect_attempts: int = 3  # tries for transient failures (refused, reset, timeout); the config's
    # ConnectionAttempts wins when set
    # A time.monotonic() value by which connecting must be over (`watch --timeout`): attempts, and the timeout of
    # each, are cut to fit.  None: only connect_timeout and connect_attempts bound it.
    deadline: float | None = None
    # A server that answers no keepalive for this many seconds is stalled: the read fails with "HOST: connection
    # stalled after N s".  The config's ServerAliveInterval × ServerAliveCountMax wins when set.
    read_timeout: float = 30.0
    known_hosts_file: str | None = None  # where accepted keys go; default ~/.config/logsleuth/known_hosts
    # The end of the file fetched with its size in the first round trip: the reader's first window
    # (reader.INITIAL_WINDOW), so a crash at the end of the log costs one exec.
    prefetch_bytes: int = 128 << 10
    # Called with short status lines ("connecting to gpu7…", "reading gpu7:/x.log: 4.0 MiB"); the CLI
    # shows them on a TTY.  Sources never print.
    progress: Callable[[str], None] | None = field(default=None, compare=False)
    # Called again and again while the SSH helper process (ssh_worker.py) is connecting, until it returns
    # False: work the parent would otherwise do later (compiling pattern regexes).
    idle_work: Callable[[], bool] | None = field(default=None, compare=False)
    # Called with lines the user must see whatever the terminal, as OpenSSH prints them ("Permanently added
    # 'gpu7' (ED25519) to the list of known hosts in FILE"); the CLI prints them on stderr.
    notice: Callable[[str], None] | None = field(default=None, compare=False)
    # When set, a host key accepted as new is handed to it instead of being written: the SSH helper process
    # connects before the command line is parsed and writes the key only once the parent asks for the source.
    hold_new_host_key: Callable[[NewHostKey], None] | None = field(default=None, compare=False)


def open_sources(spec: str, ssh_options: SSHOptions | None = None) -> list[Source]:
    """Open every source a spec names (a remote glob may name several files)."""
    from logsleuth.sources.ssh_spec import looks_remote

    if spec != "-" and looks_remote(spec):
        from logsleuth.sources import ssh_prefork, ssh_worker

        options = ssh_options or SSHOptions()
        worker = ssh_worker.current()  # the console entry point's helper process, if it started one
        if worker is not None:
            try:
                return worker.open_sources(spec, options)
            except ssh_worker.HelperFailed:
                ssh_prefork.stop()  # it died before opening anything (a broken install?): open in-process
        from logsleuth.sources import ssh  # lazy: paramiko is slow to import

        return ssh.open_ssh_sources(spec, options)
    return [open_source(spec)]


def open_source(spec: str) -> Source:
    """Open a local source from its command-line spelling.

    `-` is stdin; anything else is a local path.
    """
    from logsleuth.sources.local import LocalFileSource, open_stdin

    if spec == "-":
        return open_stdin()
    return LocalFileSource(spec)
