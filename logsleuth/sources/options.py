"""SSH settings from the command line, as plain data (building them never imports paramiko)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from logsleuth.sources.base import Progress

if TYPE_CHECKING:
    from logsleuth.sources.ssh.known_hosts import NewHostKey

# How a remote source is reached (docs/ssh.md, "Two ways to connect"): paramiko in-process, OpenSSH's own `ssh`
# client, or "auto": ssh when the host's config asks for what paramiko lacks (host certificates, ControlMaster,
# FIDO keys, Match exec), else paramiko.
SSHBackend = Literal["auto", "paramiko", "openssh"]
SSH_BACKENDS: tuple[SSHBackend, ...] = ("auto", "paramiko", "openssh")
SYSTEM_SSH_CONFIG = "/etc/ssh/ssh_config"


@dataclass(frozen=True, slots=True)
class SSHOptions:
    """SSH settings from the command line (kept here so that building them never imports paramiko)."""

    config_file: str | None = None  # -F FILE (then only that file, as OpenSSH; "none": no file); default below
    # Read after ~/.ssh/config when no -F is given (first value wins).  The openssh backend's ssh reads its own.
    system_config_file: str | None = SYSTEM_SSH_CONFIG
    backend: SSHBackend = "auto"
    accept_new_host_key: bool = False  # like StrictHostKeyChecking=accept-new
    all_files: bool = False  # a glob picks every match instead of the newest
    connect_timeout: float = 10.0  # seconds; the config's ConnectTimeout wins when set
    # The fields below are logsleuth-ssh additions (docs/ssh.md).
    connect_attempts: int = 3  # tries for transient failures (refused, reset, timeout); the config's
    # ConnectionAttempts wins when set
    # A time.monotonic() value by which connecting must be over (`watch --timeout`): attempts, and the timeout of
    # each, are cut to fit.  None: only connect_timeout and connect_attempts bound it.
    deadline: float | None = None
    # The seconds the user gave for that bound (`watch --timeout 2`): a connect it cuts short says "timed out
    # after 2 s", the bound the user set, not the time measured (1.9 s, once the program had started).
    deadline_seconds: float | None = None
    # A server that answers no keepalive for this many seconds is stalled: the read fails with "HOST: connection
    # stalled after N s".  The config's ServerAliveInterval × ServerAliveCountMax wins when set.
    read_timeout: float = 30.0
    known_hosts_file: str | None = None  # where accepted keys go; default ~/.config/logsleuth/known_hosts
    # The end of the file fetched with its size in the first round trip: the reader's first window
    # (reader.INITIAL_WINDOW), so a crash at the end of the log costs one exec.
    prefetch_bytes: int = 128 << 10
    # `watch`: a path (not a glob) with no file behind it yet opens as a source that waits for it
    # (files.SSHFileSource.missing_at_open) instead of failing with "no such file"; connecting, logging in and the
    # host key still fail at once.
    wait_for_missing: bool = False
    # Called with short status lines ("connecting to gpu7…", "reading gpu7:/x.log: 4.0 MiB"); the CLI
    # shows them on a TTY.  Sources never print.
    progress: Progress | None = field(default=None, compare=False)
    # Called with lines the user must see whatever the terminal, as OpenSSH prints them ("Permanently added
    # 'gpu7' (ED25519) to the list of known hosts in FILE"); the CLI prints them on stderr.
    notice: Progress | None = field(default=None, compare=False)
    # When set, a host key accepted as new is handed to it instead of being written: the SSH helper process
    # connects before the command line is parsed and writes the key only once the parent asks for the source.
    hold_new_host_key: Callable[[NewHostKey], None] | None = field(default=None, compare=False)
