"""One paramiko connection shared by every file a spec names (a glob), and its SFTP session when one is needed."""

from __future__ import annotations

import paramiko

from logsleuth.sources.ssh.connect import SSHConnection
from logsleuth.sources.ssh.exec import ChannelRun
from logsleuth.sources.ssh.run import Shared


class SharedConnection(Shared):
    """A connection used by several sources (the paramiko backend's `run.Runner`); closed when the last of them
    is."""

    backend = "paramiko"

    def __init__(self, connection: SSHConnection, host: str) -> None:
        super().__init__()
        self.connection = connection
        self.host = host  # as the spec names it, for messages
        self.transport = connection.transport
        self._sftp: paramiko.SFTPClient | None = None

    def run(self, script: str, *args: str | int, idle_ticks: bool = False) -> ChannelRun:
        return ChannelRun(self.connection, script, *args, host=self.host, idle_ticks=idle_ticks)

    def close_shared(self) -> None:
        if self._sftp is not None:
            self._sftp.close()
        self.connection.close()

    def sftp(self) -> paramiko.SFTPClient:
        if self._sftp is None:
            self._sftp = self.transport.open_sftp_client()
            if self._sftp is None:
                raise paramiko.SSHException("SFTP subsystem unavailable")
        return self._sftp
