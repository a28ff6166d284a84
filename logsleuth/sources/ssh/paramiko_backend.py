"""The paramiko backend: one in-process connection per spec (connect.py), its exec channels running the remote
scripts (exec.py, files.py), SFTP for an account without a usable shell (sftp.py)."""

from __future__ import annotations

import paramiko

from logsleuth.sources.base import Source
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.spec import RemoteSpec
from logsleuth.sources.ssh.connect import connect
from logsleuth.sources.ssh.files import open_files
from logsleuth.sources.ssh.run import NoShell
from logsleuth.sources.ssh.shared import SharedConnection


def open_paramiko_sources(remote: RemoteSpec, options: SSHOptions, config: paramiko.SSHConfig) -> list[Source]:
    connection = connect(
        remote.host, options, config, user=remote.user, port=remote.port, progress=options.progress
    )
    shared = SharedConnection(connection, remote.host).acquire()  # held until the sources are built
    if options.progress:
        options.progress(f"reading {remote.name_for(remote.path)}…")
    try:
        return open_files(remote, shared, options)
    except NoShell:
        from logsleuth.sources.ssh.sftp import open_sftp_sources

        return open_sftp_sources(remote, shared, options)
    finally:
        shared.release()
