"""Remote log sources: `open_ssh_sources("gpu7:/var/log/sglang-*.log", options)` (docs/ssh.md).

This module is imported only when a spec is remote, and imports paramiko only once it knows which ssh config
file applies (see ssh_paramiko.py).  The work is in ssh_files.py (exec channel), ssh_sftp.py (fallback),
ssh_connect.py (connection, host keys, auth) and ssh_remote.py (the remote shell scripts).
"""

from __future__ import annotations

from logsleuth.sources.base import Source
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.spec import RemoteError, parse_remote_spec
from logsleuth.sources.ssh.importing import load_paramiko


def open_ssh_sources(spec: str, options: SSHOptions) -> list[Source]:
    """Connect once and open every file the spec names (a glob: the newest, or all with `all_files`)."""
    remote = parse_remote_spec(spec)
    if remote is None:
        raise RemoteError(f"{spec}: not a remote source (expected host:path, user@host:port:path or ssh://)")
    load_paramiko(options.config_file)
    from logsleuth.sources.ssh.files import open_remote_files

    return open_remote_files(remote, options)
