"""Keepalives that expect an answer, and the verdict on a server that stopped answering.

A frozen host (a hung kernel, a stopped sshd, a dead link that drops packets) sends nothing and closes
nothing: without this, a read waits forever.  Silence on the channel alone proves nothing (a remote `grep`
over 100 GB or a quiet log being followed are silent too), so liveness is asked for, as OpenSSH's
ServerAliveInterval does: every `interval` seconds a `keepalive@openssh.com` global request with want-reply
(sshd answers it with a failure message, which is all we need).  A probe unanswered for `limit` seconds makes
the connection *stalled*: the transport is closed, which wakes every call blocked on it (recv, exec, open,
SFTP), and `stalled` tells the reader to say "connection stalled after N s" rather than "connection lost".

Timing: the config's ServerAliveInterval × ServerAliveCountMax when set, as ssh does; otherwise probes every
third of SSHOptions.read_timeout (30 s by default) and the limit is read_timeout.
"""

from __future__ import annotations

import threading
import time

import paramiko

_KEEPALIVE = "keepalive@openssh.com"
_TICK = 0.25  # seconds between looks at the clock while a probe is out


def stall_limits(server_alive_interval: float, server_alive_count_max: int, read_timeout: float) -> tuple[float, float]:
    """(probe interval, limit) in seconds."""
    if server_alive_interval > 0:
        return server_alive_interval, server_alive_interval * max(1, server_alive_count_max)
    return read_timeout / 3, read_timeout


class Watchdog:
    """One per connection: a daemon thread probing the server, plus one short-lived thread per probe (paramiko's
    `global_request` blocks until the answer, so the waiting is done beside it)."""

    def __init__(self, transport: paramiko.Transport, interval: float, limit: float) -> None:
        self.transport = transport
        self.interval = interval
        self.limit = limit
        self.stalled = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="logsleuth-ssh-keepalive", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            if not self.transport.is_active():
                return
            answered = threading.Event()
            threading.Thread(target=self._probe, args=(answered,), name="logsleuth-ssh-probe", daemon=True).start()
            sent = time.monotonic()
            while not answered.wait(_TICK):
                if self._stop.is_set() or not self.transport.is_active():
                    return
                if time.monotonic() - sent >= self.limit:
                    self.stalled = True
                    self.transport.close()  # wakes every reader; they ask `stalled` for the words
                    return

    def _probe(self, answered: threading.Event) -> None:
        try:
            self.transport.global_request(_KEEPALIVE, wait=True)  # returns on the answer, or when closed
        except (paramiko.SSHException, OSError, EOFError):
            return
        if self.transport.is_active():
            answered.set()
