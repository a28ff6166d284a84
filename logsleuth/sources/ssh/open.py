"""Remote log sources: `open_ssh_sources("gpu7:/var/log/sglang-*.log", options)` (docs/ssh.md), and the one place
that chooses how the host is reached (`SSHOptions.backend`):

- "paramiko": in-process (paramiko_backend.py): fastest to start, and it keeps the SSH helper's early connection.
- "openssh": OpenSSH's own `ssh` client, one process per remote script (openssh.py); paramiko is not imported.
- "auto" (the default): ssh when the host's resolved config asks for what paramiko lacks (`paramiko_lacks`) and
  ssh is installed, else paramiko.

This module is imported only when a spec is remote, and imports paramiko only once it knows which config files
apply (importing.py).  Both backends read the files with the same remote scripts (scripts.py, files.py).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from logsleuth.errors import UsageError
from logsleuth.sources.base import Source
from logsleuth.sources.options import SSH_BACKENDS, SSHOptions
from logsleuth.sources.spec import RemoteError, RemoteSpec, parse_remote_spec

if TYPE_CHECKING:
    import paramiko


def open_ssh_sources(spec: str, options: SSHOptions) -> list[Source]:
    """Connect once and open every file the spec names (a glob: the newest, or all with `all_files`).  Each
    can open itself again (a follow whose connection was lost reconnects through this function)."""
    from logsleuth.sources.ssh.files import SSHFileSource

    sources = _open_with_a_backend(spec, options)
    for source in sources:
        if isinstance(source, SSHFileSource):
            source.opener = open_ssh_sources
    return sources


def _open_with_a_backend(spec: str, options: SSHOptions) -> list[Source]:
    remote = parse_remote_spec(spec)
    if remote is None:
        raise RemoteError(f"{spec}: not a remote source (expected host:path, user@host:port:path or ssh://)")
    if options.backend not in SSH_BACKENDS:
        raise UsageError(f"ssh backend must be one of {', '.join(SSH_BACKENDS)}, not {options.backend!r}")
    if options.backend == "openssh":
        from logsleuth.sources.ssh.openssh import open_openssh_sources

        return open_openssh_sources(remote, options)
    from logsleuth.sources.ssh.importing import load_paramiko

    load_paramiko(options)
    from logsleuth.sources.ssh.config import config_text, parse_config

    text = config_text(options)
    config = parse_config(text)  # parsing runs no `Match exec`; only a lookup would
    reason = _needs_openssh(text, config, remote, options) if options.backend == "auto" else None
    if reason is not None:
        from logsleuth.sources.ssh.openssh import open_openssh_sources

        return open_openssh_sources(remote, options, reason)
    from logsleuth.sources.ssh.paramiko_backend import open_paramiko_sources

    return open_paramiko_sources(remote, options, config)


def _needs_openssh(text: str, config: paramiko.SSHConfig, remote: RemoteSpec, options: SSHOptions) -> str | None:
    """Why "auto" reaches this host with ssh; None for paramiko (also when no ssh is installed)."""
    from logsleuth.sources.ssh.config import has_match_exec
    from logsleuth.sources.ssh.openssh import find_ssh

    if find_ssh() is None:
        return None
    if has_match_exec(text):  # only ssh runs it as the user's ssh does; paramiko needs invoke even to look up
        return "Match exec"
    return paramiko_lacks(config, remote, options)


def paramiko_lacks(config: paramiko.SSHConfig, remote: RemoteSpec, options: SSHOptions) -> str | None:
    """What the host's resolved config asks for that paramiko cannot do, in a few words; None if nothing."""
    from logsleuth.sources.ssh.config import DEFAULT_SECURITY_KEY_FILES, resolve_host
    from logsleuth.sources.ssh.hostkeys import host_key_entries
    from logsleuth.sources.ssh.known_hosts import key_file_type

    settings = resolve_host(config, remote.host, user=remote.user, port=remote.port)
    if settings.certificate_file:
        return "CertificateFile"
    if settings.control_path:  # even with ControlMaster no, ssh uses a master that is already running
        return "ControlMaster"
    keys = settings.identity_files
    if not settings.identity_files_explicit:
        keys += tuple(os.path.expanduser(path) for path in DEFAULT_SECURITY_KEY_FILES)
    if any((key_file_type(path) or "").startswith("sk-") for path in keys if os.path.exists(path)):
        return "FIDO security key"
    if any(entry.marker == "@cert-authority" for entry in host_key_entries(settings, options)):
        return "host certificate authority"
    return None
