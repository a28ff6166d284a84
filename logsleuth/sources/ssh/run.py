"""One run of a remote script, whatever carries it: an exec channel of paramiko (exec.py) or one `ssh` process
(openssh.py).  No paramiko here: the openssh backend never imports it.

What both share: the marker that ends a login shell's noise, the end of a run (stdout bytes, then stderr and the
exit status), and the words for coreutils' and gzip's errors.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Protocol, Self

from logsleuth.sources.spec import RemoteError

_MAX_NOISE = 4 << 20  # a login banner bigger than this before our marker is not a banner
MAX_STDERR = 64 << 10  # kept for error messages; the rest is drained and dropped
# A follow's idle tick (`idle_ticks` runs, both backends): watch learns that a crash's traceback has ended only
# from the silence after it, so the silence must be seen soon.  A tick costs a wake-up, nothing on the wire.
FOLLOW_TICK_SECONDS = 0.04


class NoShell(Exception):
    """The marker never came: the account has no usable shell (nologin, ForceCommand, restricted)."""


class MarkerFilter:
    """Drops what a remote login shell prints before the script's marker line (a ~/.bashrc banner)."""

    def __init__(self, marker: str, host: str) -> None:
        self._tag = marker.encode() + b"\n"
        self._host = host
        self._before: bytearray | None = bytearray()

    @property
    def seen(self) -> bool:
        return self._before is None

    def feed(self, data: bytes) -> bytes:
        """The script's bytes in `data` (b"" while the marker has not come)."""
        if self._before is None:
            return data
        self._before += data
        index = self._before.find(self._tag)
        if index >= 0:
            rest = bytes(self._before[index + len(self._tag) :])
            self._before = None
            return rest
        if len(self._before) > _MAX_NOISE:
            raise RemoteError(f"{self._host}: the remote login shell prints too much before commands run")
        return b""

    def no_shell(self, stderr: bytes) -> NoShell:
        """The error for a run that ended before the marker came: what the account printed instead."""
        return NoShell(bytes((self._before or b"")[-500:]) + stderr[-500:])


class RemoteRun(Protocol):
    """One remote script: iterate it for its stdout bytes after the marker; `stderr` and `exit_status` are set
    at the end.  A connection that goes away meanwhile ends it with a RemoteError saying so."""

    marker: str
    stderr: bytes
    exit_status: int | None

    def __iter__(self) -> Iterator[bytes]: ...

    def collect(self) -> bytes: ...

    def error_text(self) -> str: ...


class Runner(Protocol):
    """Runs remote scripts on one host for every source a spec names; closed with the last of them."""

    backend: str  # "paramiko" or "openssh"

    def run(self, script: str, *args: str | int, idle_ticks: bool = False) -> RemoteRun:
        """A run of `script` with these arguments (scripts.command_line).  `idle_ticks`: iterating it yields b""
        when nothing arrived for a while (watch keeps time)."""

    def acquire(self) -> Runner: ...

    def release(self) -> None: ...


class Shared:
    """Held by every source of a spec (`acquire`), closed when the last lets go (`release` calls `close_shared`)."""

    def __init__(self) -> None:
        self._users = 0
        self._users_lock = threading.Lock()

    def acquire(self) -> Self:
        with self._users_lock:
            self._users += 1
        return self

    def release(self) -> None:
        with self._users_lock:
            self._users -= 1
            last = self._users <= 0
        if last:
            self.close_shared()

    def close_shared(self) -> None:
        raise NotImplementedError


class RunResult:
    """What every run has once it ended: its stderr and exit status, and the words for them."""

    marker: str
    stderr: bytes = b""
    exit_status: int | None = None

    def __iter__(self) -> Iterator[bytes]:
        raise NotImplementedError

    def collect(self) -> bytes:
        return b"".join(self)

    def error_text(self) -> str:
        """The last meaningful stderr line (after any login noise), for messages."""
        lines = [line.strip() for line in self.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        return lines[-1] if lines else f"remote command failed with status {self.exit_status}"


def classify_remote_error(text: str) -> str:
    """Map a coreutils/gzip error line to the words local sources use."""
    lowered = text.lower()
    if "no such file" in lowered:
        return "no such file"
    if "permission denied" in lowered:
        return "permission denied"
    if "is a directory" in lowered:
        return "is a directory"
    if "not in gzip format" in lowered or "unexpected end of file" in lowered or "crc error" in lowered:
        return f"not a valid gzip file ({text})"
    return text
