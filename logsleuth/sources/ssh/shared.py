"""One SSH connection shared by every file a spec names (a glob), and its SFTP session when one is needed."""

from __future__ import annotations

import threading

import paramiko

from logsleuth.sources.ssh.connect import SSHConnection


class SharedConnection:
    """A connection used by several sources; closed when the last of them is."""

    def __init__(self, connection: SSHConnection) -> None:
        self.connection = connection
        self.transport = connection.transport
        self._users = 0
        self._lock = threading.Lock()
        self._sftp: paramiko.SFTPClient | None = None

    def acquire(self) -> SharedConnection:
        with self._lock:
            self._users += 1
        return self

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            last = self._users <= 0
        if last:
            if self._sftp is not None:
                self._sftp.close()
            self.connection.close()

    def sftp(self) -> paramiko.SFTPClient:
        if self._sftp is None:
            self._sftp = self.transport.open_sftp_client()
            if self._sftp is None:
                raise paramiko.SSHException("SFTP subsystem unavailable")
        return self._sftp
