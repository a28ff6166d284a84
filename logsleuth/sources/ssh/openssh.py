"""The openssh backend: OpenSSH's own `ssh` client carries every remote script (docs/ssh.md, "Two ways to connect").

Why: ssh does what paramiko cannot (host certificates, ControlMaster, FIDO keys, `Match exec`, every ssh_config
keyword), and it is the user's own ssh.  How: one `ssh -G` per spec reads the host's resolved config; then each
script is one process,

    ssh -T -x -a -o BatchMode=yes … [-F CONFIG] [-p PORT] [-l USER] -- HOST '/bin/sh -c SCRIPT logsleuth ARGS…'

with the same scripts and quoting as the paramiko backend (scripts.command_line), read by the same sources
(files.py).  stdout and stderr are drained together.  Without the user's ControlMaster each script is a new
connection: a diagnose costs one (the probe) or a few.

What logsleuth adds to the user's config, and why:
- `BatchMode=yes`, `-T`: never a prompt, never a terminal (RequestTTY would turn `\\n` into `\\r\\n`).
- `-x -a`, `ClearAllForwardings=yes`, `RemoteCommand=none`: reading a log forwards nothing and runs only our
  script.
- Host keys stay OpenSSH's own checking (StrictHostKeyChecking as configured, `accept-new` with
  --accept-new-host-key; `ask` is passed as `yes`, which is what it means without a prompt, and makes ssh name
  the host).  `UserKnownHostsFile` gets logsleuth's own known_hosts added, so that keys accepted with either
  backend are known to both, and a private file in front, so that a key ssh accepts is written by logsleuth into
  its own file (or held by the SSH helper until the command line has parsed), never into your ssh files;
  `UpdateHostKeys=no` for the same reason.
- `ConnectionAttempts=1`: logsleuth retries itself, with backoff and the same messages as paramiko.
- `ConnectTimeout`: the config's, else SSHOptions.connect_timeout, cut to SSHOptions.deadline.
- `ServerAliveInterval`: when the config sets none, SSHOptions.read_timeout / 3 with a count of 3, so that a
  frozen server ends the read ("connection stalled after 30 s") as with paramiko.
- `-E LOG -o LogLevel=DEBUG1`: ssh's messages apart from the remote stderr, with what the errors need
  (openssh_log.py).
"""

from __future__ import annotations

import contextlib
import math
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from logsleuth.sources.base import CHUNK_SIZE, Progress, Source
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.spec import RemoteError, RemoteSpec
from logsleuth.sources.ssh.files import open_files
from logsleuth.sources.ssh.known_hosts import NewHostKey, logsleuth_known_hosts, parse_line, store_host_key
from logsleuth.sources.ssh.openssh_log import HostKeyFiles, config_error, failure
from logsleuth.sources.ssh.retry import time_left, with_retries
from logsleuth.sources.ssh.run import (
    FOLLOW_TICK_SECONDS,
    MAX_STDERR,
    MarkerFilter,
    NoShell,
    RunResult,
    Shared,
)
from logsleuth.sources.ssh.scripts import command_line, new_marker

_POLL_SECONDS = 0.2
_RESOLVE_TIMEOUT = 30.0  # `ssh -G` runs the config's `Match exec` commands: one that hangs must not hang us
_MAX_LOG = 256 << 10  # of ssh's debug log, read for messages
_STOP_GRACE = 2.0  # seconds an ssh told to stop gets before it is killed
_PR_SET_PDEATHSIG = 1  # prctl(2)
_DIRECTORY_PREFIX = "logsleuth-ssh-"  # + the owning process's pid: what a killed logsleuth left is swept later


def find_ssh() -> str | None:
    return shutil.which("ssh")


def open_openssh_sources(remote: RemoteSpec, options: SSHOptions, reason: str | None = None) -> list[Source]:
    """Every file the spec names, read through ssh.  `reason`: why "auto" chose ssh, for the progress line."""
    ssh = find_ssh()
    if ssh is None:
        raise RemoteError(f"{remote.host}: the openssh backend needs OpenSSH's ssh client, and none is on PATH")
    target = OpenSSHTarget(ssh, remote, options, resolve(ssh, remote, options), reason=reason).acquire()
    try:
        return open_files(remote, target, options)
    except NoShell:
        raise RemoteError(
            f"{remote.name_for(remote.path)}: the account on {remote.host} has no usable shell (only the paramiko "
            "backend falls back to SFTP)"
        ) from None
    finally:
        target.release()


# -- the host's resolved config (`ssh -G`) ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResolvedHost:
    """The settings ssh will use for the host (`ssh -G`), those logsleuth needs to know."""

    hostname: str
    port: int
    host_key_alias: str | None
    connect_timeout: float | None  # None: the config sets none
    connection_attempts: int
    server_alive_interval: int  # 0: the config sets none
    server_alive_count_max: int
    user_known_hosts: tuple[str, ...]
    global_known_hosts: tuple[str, ...]
    strict_host_key_checking: str  # ask / true / false / accept-new, as -G prints it
    hash_known_hosts: bool

    @property
    def host_key_name(self) -> str:
        """The name known_hosts stores the key under, as config.HostSettings.host_key_name."""
        if self.host_key_alias:
            return self.host_key_alias
        return self.hostname if self.port == 22 else f"[{self.hostname}]:{self.port}"

    @property
    def where(self) -> str:
        return f"{self.hostname} port {self.port}"


def resolve(ssh: str, remote: RemoteSpec, options: SSHOptions) -> ResolvedHost:
    """`ssh -G`: the host's settings after every Host and Match block.  A bad config is a usage error (exit 2)."""
    argv = [ssh, *_spec_args(remote, options), "-G", "--", remote.host]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=_RESOLVE_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise RemoteError(
            f"{remote.host}: 'ssh -G' did not answer in {_RESOLVE_TIMEOUT:.0f} s (a Match exec that hangs?)"
        ) from None
    said = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        raise config_error(said) or failure(
            said, remote.host, connected=False, timeout=0.0, stall_limit=0.0, keys=HostKeyFiles(remote.host, ())
        )
    values: dict[str, list[str]] = {}
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        values.setdefault(key.lower(), []).append(value.strip())

    def one(key: str, default: str = "") -> str:
        return values.get(key, [default])[0]

    timeout = one("connecttimeout", "none")
    return ResolvedHost(
        hostname=one("hostname", remote.host),
        port=int(one("port", "22")),
        host_key_alias=one("hostkeyalias") or None,
        connect_timeout=None if timeout == "none" else float(timeout),
        connection_attempts=int(one("connectionattempts", "1")),
        server_alive_interval=int(one("serveraliveinterval", "0")),
        server_alive_count_max=int(one("serveralivecountmax", "3")),
        user_known_hosts=tuple(_files(one("userknownhostsfile", "none"))),
        global_known_hosts=tuple(_files(one("globalknownhostsfile", "none"))),
        strict_host_key_checking=one("stricthostkeychecking", "ask").lower(),
        hash_known_hosts=one("hashknownhosts", "no").lower() in ("yes", "true"),
    )


def _files(value: str) -> list[str]:
    # -G prints the list space-separated (a path with a space in it cannot be told apart: a known limit)
    return [] if value.lower() == "none" else value.split()


def _spec_args(remote: RemoteSpec, options: SSHOptions) -> list[str]:
    """The user's choices: the config file and the spec's port and user (which beat the config, as for ssh)."""
    args: list[str] = []
    if options.config_file is not None:
        args += ["-F", os.path.expanduser(options.config_file)]
    if remote.port is not None:
        args += ["-p", str(remote.port)]
    if remote.user is not None:
        args += ["-l", remote.user]
    return args


def _option_path(path: str) -> str:
    """A path as an ssh `-o` value word: `%` escaped (ssh expands %-tokens in known_hosts paths), quoted when it
    has a space."""
    path = path.replace("%", "%%")
    return f'"{path}"' if any(char.isspace() for char in path) else path


# -- the runner: one ssh process per script ----------------------------------------------------------------------


class OpenSSHTarget(Shared):
    """The openssh backend's `run.Runner`: the ssh command line for one host, shared by the files of a spec.  Its
    private directory (ssh's logs, the keys ssh accepts) goes with the last of them."""

    backend = "openssh"

    def __init__(
        self, ssh: str, remote: RemoteSpec, options: SSHOptions, resolved: ResolvedHost, *, reason: str | None = None
    ) -> None:
        super().__init__()
        self.alias = remote.host
        self.options = options
        self.resolved = resolved
        self._directory = private_directory()
        self._accepted = os.path.join(self._directory, "accepted_known_hosts")  # the first UserKnownHostsFile
        self._own_known_hosts = logsleuth_known_hosts(options.known_hosts_file)
        self._stored: set[bytes] = set()
        self._runs = 0
        self._lock = threading.Lock()
        self.progress_name = f"{remote.host} with ssh" + (f" ({reason})" if reason else "")
        self._announced = False  # only the first run (the probe) says "connecting to …"
        self.stall_limit = float(
            resolved.server_alive_interval * max(1, resolved.server_alive_count_max)
            if resolved.server_alive_interval
            else _our_alive_interval(options) * 3
        )
        self._argv = [ssh, *_spec_args(remote, options), *self._our_options()]

    def _our_options(self) -> list[str]:
        resolved, options = self.resolved, self.options
        known = [self._accepted, self._own_known_hosts, *resolved.user_known_hosts]
        pairs = {
            "BatchMode": "yes",
            "ClearAllForwardings": "yes",
            "RemoteCommand": "none",
            "UpdateHostKeys": "no",
            "ConnectionAttempts": "1",
            "LogLevel": "DEBUG1",
            "UserKnownHostsFile": " ".join(_option_path(path) for path in known),
        }
        if options.accept_new_host_key:
            pairs["StrictHostKeyChecking"] = "accept-new"
        elif resolved.strict_host_key_checking == "ask":
            pairs["StrictHostKeyChecking"] = "yes"  # what `ask` means without a prompt, and ssh says which host
        if not resolved.server_alive_interval:
            pairs["ServerAliveInterval"] = str(_our_alive_interval(options))
            pairs["ServerAliveCountMax"] = "3"
        return ["-T", "-x", "-a", *(word for key, value in pairs.items() for word in ("-o", f"{key}={value}"))]

    @property
    def attempts(self) -> int:
        # ConnectionAttempts 1 is ssh's default: only another number is the config's own
        configured = self.resolved.connection_attempts
        return configured if configured != 1 else self.options.connect_attempts

    @property
    def host_key_files(self) -> HostKeyFiles:
        paths = (self._own_known_hosts, *self.resolved.user_known_hosts, *self.resolved.global_known_hosts)
        return HostKeyFiles(self.resolved.host_key_name, paths)

    def run(self, script: str, *args: str | int, idle_ticks: bool = False) -> SSHProcessRun:
        return SSHProcessRun(self, script, *args, idle_ticks=idle_ticks)

    def argv(self, command: str, log: str) -> tuple[list[str], float]:
        """The ssh command line for one attempt, and the ConnectTimeout it gets (cut to the deadline)."""
        timeout = self.resolved.connect_timeout or self.options.connect_timeout
        timeout = time_left(self.alias, self.resolved.where, timeout, self.options.deadline)
        seconds = max(1, math.ceil(timeout))
        return [*self._argv, "-o", f"ConnectTimeout={seconds}", "-E", log, "--", self.alias, command], seconds

    def new_log(self) -> str:
        with self._lock:
            self._runs += 1
            return os.path.join(self._directory, f"ssh-{self._runs}.log")

    def progress_for_first_run(self) -> Progress | None:
        """The callback for the first run's "connecting to …" lines (the probe's); None for the others."""
        with self._lock:
            if self._announced:
                return None
            self._announced = True
        return self.options.progress

    def take_accepted_keys(self) -> None:
        """Keys ssh accepted as new (written into the private first UserKnownHostsFile): into logsleuth's own
        known_hosts with OpenSSH's notice, or to the SSH helper's hold until the command line has parsed."""
        try:
            with open(self._accepted, encoding="ascii", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            return
        for line in lines:
            parsed = parse_line(line)
            if parsed is None or parsed[3] in self._stored:
                continue
            blob = parsed[3]
            self._stored.add(blob)
            name = self.resolved.host_key_name
            new = NewHostKey(self._own_known_hosts, name, blob, hashed=self.resolved.hash_known_hosts)
            if self.options.hold_new_host_key is not None:
                self.options.hold_new_host_key(new)
            else:
                store_host_key(new, self.options.notice)

    def close_shared(self) -> None:
        shutil.rmtree(self._directory, ignore_errors=True)


def private_directory() -> str:
    """A new directory for one target's ssh logs and accepted keys, named after this process.  The directories of
    processes that are gone (a helper stopped by Ctrl-C, a logsleuth killed) are removed first."""
    base = tempfile.gettempdir()
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            if name.startswith(_DIRECTORY_PREFIX) and _owner_is_gone(os.path.join(base, name), name):
                shutil.rmtree(os.path.join(base, name), ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"{_DIRECTORY_PREFIX}{os.getpid()}-")


def _owner_is_gone(path: str, name: str) -> bool:
    pid = name[len(_DIRECTORY_PREFIX) :].partition("-")[0]
    if not pid.isdigit() or os.stat(path).st_uid != os.getuid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _our_alive_interval(options: SSHOptions) -> int:
    return max(1, round(options.read_timeout / 3))



class SSHProcessRun(RunResult):
    """One script in one ssh process: iterate it for the stdout bytes after the marker; `stderr` (the remote
    command's only: ssh's own messages go to its log) and `exit_status` are set at the end.

    Until the marker comes, the run is connecting: an ssh that fails then is retried like a paramiko connect
    (a new process: the script has not run).  After it, an ssh that ends with status 255 lost the connection."""

    def __init__(self, target: OpenSSHTarget, script: str, *args: str | int, idle_ticks: bool = False) -> None:
        self.marker = new_marker()
        self.idle_ticks = idle_ticks
        self._target = target
        self._command = command_line(script, self.marker, *args)

    def __iter__(self) -> Iterator[bytes]:
        target = self._target
        process, first = with_retries(
            target.progress_name,
            target.attempts,
            target.options.deadline,
            self._connect,
            progress=target.progress_for_first_run(),
            deadline_seconds=target.options.deadline_seconds,
        )
        try:
            if first:
                yield first
            tick = FOLLOW_TICK_SECONDS if self.idle_ticks else _POLL_SECONDS
            while (data := process.read(tick)) is not None:
                if data or self.idle_ticks:
                    yield data
            process.finish()
            self.stderr, self.exit_status = bytes(process.stderr), process.returncode
            if process.returncode == 255:
                raise self._failure(process, connected=True)
        finally:
            process.close()

    def _connect(self) -> tuple[SSHProcess, bytes]:
        """Start ssh and read until the marker: (the process, the script's first bytes).  Raises what ssh said
        when it ends before (a TransientConnectError is retried), NoShell when the account printed something
        else."""
        target = self._target
        argv, timeout = target.argv(self._command, target.new_log())
        # A follow (the only run with idle ticks) lasts as long as the watch: its ssh, and so the remote tail, must
        # not outlive a watch that is killed outright.
        process = SSHProcess(argv, log=argv[argv.index("-E") + 1], timeout=timeout, die_with_us=self.idle_ticks)
        output = MarkerFilter(self.marker, target.alias)
        try:
            while (data := process.read(_POLL_SECONDS)) is not None:
                first = output.feed(data)
                if output.seen:
                    return process, first
            process.finish()
            if process.returncode == 255:
                raise self._failure(process, connected=False)
            self.stderr, self.exit_status = bytes(process.stderr), process.returncode
            raise output.no_shell(self.stderr)
        except BaseException:
            process.close()
            raise
        finally:
            target.take_accepted_keys()  # as OpenSSH, a key accepted is kept even if what follows fails

    def _failure(self, process: SSHProcess, *, connected: bool) -> Exception:
        target = self._target
        said = process.log() + "\n" + process.stderr.decode("utf-8", "replace")  # a ProxyJump's ssh writes there
        return failure(
            said,
            target.alias,
            connected=connected,
            timeout=process.timeout,
            stall_limit=target.stall_limit,
            keys=target.host_key_files,
        )


def _parent_death_signal() -> Callable[[], None] | None:
    """What the forked ssh runs before exec so that it gets SIGTERM when this process dies, even by SIGKILL
    (Linux's PR_SET_PDEATHSIG; None elsewhere).  Only for long runs: a preexec_fn makes every spawn a fork."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: only a follow needs it

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # loaded here: the child only calls it
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def in_child() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # died before prctl took effect
            os._exit(1)

    return in_child


class SSHProcess:
    """An ssh process whose stdout and stderr are drained together (a full stderr pipe would stop it)."""

    def __init__(self, argv: list[str], *, log: str, timeout: float, die_with_us: bool = False) -> None:
        self.timeout = timeout
        self.stderr = bytearray()
        self.returncode: int | None = None
        self._log = log
        self._popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=_parent_death_signal() if die_with_us else None,  # noqa: PLW1509 - only prctl, see there
        )
        self._selector = selectors.DefaultSelector()
        assert self._popen.stdout is not None and self._popen.stderr is not None
        self._stdout = self._popen.stdout.fileno()
        self._selector.register(self._stdout, selectors.EVENT_READ)
        self._selector.register(self._popen.stderr.fileno(), selectors.EVENT_READ)

    def read(self, timeout: float) -> bytes | None:
        """stdout bytes; b"" when none came within `timeout`; None once stdout has ended."""
        while self._stdout in self._open_fds():
            events = self._selector.select(timeout)
            if not events:
                # ssh has exited but something else holds its pipes (a ControlPersist master it forked): nothing
                # more will come from ssh itself
                return None if self._popen.poll() is not None else b""
            for key, _ in events:
                data = os.read(key.fd, CHUNK_SIZE)
                if key.fd != self._stdout:
                    self._keep_stderr(key.fd, data)
                elif data:
                    return data
                else:
                    self._selector.unregister(key.fd)
        return None

    def finish(self) -> None:
        """Drain stderr to its end and wait for ssh's exit status."""
        while self._open_fds():
            events = self._selector.select(_POLL_SECONDS)
            if not events and self._popen.poll() is not None:
                break
            for key, _ in events:
                self._keep_stderr(key.fd, os.read(key.fd, CHUNK_SIZE))
        self.returncode = self._popen.wait()

    def _keep_stderr(self, fd: int, data: bytes) -> None:
        if not data:
            self._selector.unregister(fd)
        elif len(self.stderr) < MAX_STDERR:
            self.stderr += data

    def _open_fds(self) -> set[int]:
        return {key.fd for key in self._selector.get_map().values()}

    def log(self) -> str:
        try:
            with open(self._log, "rb") as handle:
                handle.seek(max(0, os.fstat(handle.fileno()).st_size - _MAX_LOG))
                return handle.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def close(self) -> None:
        """Stop ssh if it still runs (a read that stopped early, a follow that ended): the remote script goes with
        its connection."""
        if self._popen.poll() is None:
            self._popen.terminate()
            try:
                self._popen.wait(_STOP_GRACE)
            except subprocess.TimeoutExpired:
                self._popen.kill()
                self._popen.wait()
        self._selector.close()
        for pipe in (self._popen.stdout, self._popen.stderr):
            if pipe is not None:
                pipe.close()
        with contextlib.suppress(OSError):
            os.unlink(self._log)
