"""Run one remote script over a paramiko exec channel and stream its stdout, draining stderr at the same time.

stdout and stderr share the channel's flow-control window: reading only stdout while the remote side writes
to stderr stalls the channel (paramiko #213), so both are drained in one loop.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import paramiko

from logsleuth.sources.base import CHUNK_SIZE
from logsleuth.sources.spec import RemoteError
from logsleuth.sources.ssh.connect import SSHConnection
from logsleuth.sources.ssh.run import FOLLOW_TICK_SECONDS, MAX_STDERR, MarkerFilter, RunResult
from logsleuth.sources.ssh.scripts import command_line, new_marker

_POLL_SECONDS = 0.2


def open_session_promptly(transport: paramiko.Transport) -> paramiko.Channel:
    """open_session() without the 40 ms stall on a fresh connection.

    Right after auth, sshd sends an unsolicited hostkeys-00@openssh.com message; Nagle is on for
    non-interactive sessions, so sshd holds our channel confirmation until that message is ACKed, and our
    kernel delays the ACK by 40 ms because we have nothing to send.  An SSH_MSG_IGNORE every 5 ms while we
    wait carries the ACK (measured on loopback: first exec 43 ms -> 6 ms; later ones are ~1 ms anyway).
    """
    opened = threading.Event()

    def nudge() -> None:
        while not opened.wait(0.005):
            try:
                transport.send_ignore(1)
            except Exception:  # the transport is failing: open_session() reports it
                return

    helper = threading.Thread(target=nudge, name="logsleuth-ssh-ack", daemon=True)
    helper.start()
    try:
        return transport.open_session()
    finally:
        opened.set()
        helper.join()


class ChannelRun(RunResult):
    """One exec: iterate it for the stdout bytes after the marker; `stderr`/`exit_status` are set at the end.
    A connection that goes away meanwhile (lost, or stalled: keepalive.py) ends it with that error."""

    def __init__(
        self,
        connection: SSHConnection,
        script: str,
        *args: str | int,
        host: str,
        idle_ticks: bool = False,
    ) -> None:
        self.marker = new_marker()
        self.idle_ticks = idle_ticks  # yield b"" when nothing arrived for a poll interval (watch keeps time)
        self.host = host
        self.stderr = b""
        self.exit_status: int | None = None
        self._connection = connection
        self._stderr = bytearray()
        transport = connection.transport
        try:
            self._channel = open_session_promptly(transport)
            # As bytes: a path that is not UTF-8 (`caf\xe9.log`) is held with surrogates and goes out as the
            # bytes it was typed as (paramiko would encode the str strictly and fail).
            self._channel.exec_command(command_line(script, self.marker, *args).encode("utf-8", "surrogateescape"))
            self._channel.shutdown_write()  # stdin EOF: a forced sftp-server or cat exits instead of waiting
        except (paramiko.SSHException, OSError, EOFError) as exc:
            if not transport.is_active():  # the server went away or stalled (the watchdog closed it)
                raise connection.lost(host) from None
            raise RemoteError(f"{host}: cannot run a remote command: {exc or 'channel refused'}") from None

    def __iter__(self) -> Iterator[bytes]:
        channel = self._channel
        output = MarkerFilter(self.marker, self.host)
        channel.settimeout(FOLLOW_TICK_SECONDS if self.idle_ticks else _POLL_SECONDS)
        try:
            while True:
                self._drain_stderr()
                # A blocking recv with a short timeout: cheaper than select() per packet, and a timeout returns
                # here to drain stderr, whose unread bytes would otherwise hold the shared window shut.
                try:
                    data = channel.recv(CHUNK_SIZE)
                except TimeoutError:
                    if not self._connection.transport.is_active():
                        raise self._connection.lost(self.host) from None
                    if self.idle_ticks:
                        yield b""
                    continue
                if not data:
                    break
                data = output.feed(data)
                if data:
                    yield data
            channel.settimeout(None)
            self.exit_status = channel.recv_exit_status()  # sent after all output: stderr is complete now
            self._drain_stderr()
            self.stderr = bytes(self._stderr)
            if self.exit_status == -1 and self._transport_gone():
                raise self._connection.lost(self.host)  # closed under us: no exit status ever came
            if not output.seen:
                raise output.no_shell(self.stderr)
        finally:
            channel.close()

    def _transport_gone(self) -> bool:
        """Whether the connection died (a channel closed without exit status also ends that way when the remote
        command was killed by a signal).  paramiko closes the channels just before it marks the transport
        inactive, so a dying transport thread gets a moment to finish."""
        transport = self._connection.transport
        transport.join(_POLL_SECONDS)
        return not transport.is_active()

    def _drain_stderr(self) -> None:
        while self._channel.recv_stderr_ready():
            piece = self._channel.recv_stderr(65536)
            if len(self._stderr) < MAX_STDERR:
                self._stderr += piece
