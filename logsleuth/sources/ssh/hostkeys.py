"""Host key policy: OpenSSH's `StrictHostKeyChecking` with logsleuth's own store for accepted keys.

The files read, in OpenSSH's order: UserKnownHostsFile (default ~/.ssh/known_hosts, known_hosts2), logsleuth's
own file, GlobalKnownHostsFile (default /etc/ssh/ssh_known_hosts, ssh_known_hosts2).  The name looked up is
`host`, `[host]:port` off port 22, or the HostKeyAlias exactly as written (ssh_known_hosts.py reads the files).

- revoked: a `@revoked` line holds the server's key → always refused.
- known: a plain line holds it → connect.
- changed: the host is known under other keys only → always refused, whatever the options.  A host known
  under another key type is treated as changed (OpenSSH would prompt; we never prompt).
- unknown: refused, with the command line that accepts it; `--accept-new-host-key` (or the config's
  StrictHostKeyChecking accept-new/no) stores it in logsleuth's file, never in the user's ssh files, and says
  so as OpenSSH does ("Permanently added ...", through SSHOptions.notice).
- `@cert-authority` lines: paramiko cannot check host certificates, so they vouch for nothing; an unknown key
  on a host that such a line covers says so in its message.
"""

from __future__ import annotations

import os

import paramiko

from logsleuth import paths
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.spec import RemoteError
from logsleuth.sources.ssh.config import HostSettings
from logsleuth.sources.ssh.known_hosts import KnownHost, NewHostKey, known_host_entries


def logsleuth_known_hosts(options: SSHOptions) -> str:
    if options.known_hosts_file:
        return os.path.expanduser(options.known_hosts_file)
    return str(paths.config_dir() / "known_hosts")


def _entries(settings: HostSettings, options: SSHOptions) -> list[KnownHost]:
    files = [*settings.known_hosts_files, logsleuth_known_hosts(options), *settings.global_known_hosts_files]
    return known_host_entries(files, settings.host_key_name)


def preferred_key_types(
    settings: HostSettings, options: SSHOptions, offered: tuple[str, ...]
) -> tuple[str, ...]:
    """Ask the server for a key type we already know (as OpenSSH orders HostKeyAlgorithms)."""
    known: list[str] = []
    for entry in _entries(settings, options):
        if entry.marker:
            continue
        names = ["rsa-sha2-512", "rsa-sha2-256"] if entry.key_type == "ssh-rsa" else [entry.key_type]
        known.extend(n for n in names if n in offered and n not in known)
    return tuple(known) + tuple(t for t in offered if t not in known)


def check_host_key(settings: HostSettings, options: SSHOptions, server_key: paramiko.PKey) -> None:
    name = settings.host_key_name
    entries = _entries(settings, options)
    blob = server_key.asbytes()
    described = f"{server_key.get_name()} {server_key.fingerprint}"
    revoked = next((e for e in entries if e.marker == "@revoked" and e.blob == blob), None)
    if revoked is not None:
        raise RemoteError(
            f"{settings.alias}: REVOKED HOST KEY for {name}: the server presents {described}, which "
            f"{revoked.where} marks as revoked; refusing to connect"
        )
    plain = [e for e in entries if e.marker is None]
    if any(e.blob == blob for e in plain):
        return
    if plain:
        where = plain[0].path
        raise RemoteError(
            f"{settings.alias}: HOST KEY CHANGED for {name}: the server now presents {described}, which does "
            f"not match {where}; refusing to connect (possible man-in-the-middle). If the change is expected, "
            f"remove the old key with: ssh-keygen -R '{name}' -f {where}"
        )
    accept = options.accept_new_host_key or settings.strict_host_key_checking in ("accept-new", "no", "off")
    if not accept:
        authority = next((e for e in entries if e.marker == "@cert-authority"), None)
        note = (
            f"; {authority.where} trusts a certificate authority for this host, but logsleuth cannot check host "
            "certificates; verify the key"
            if authority
            else "; verify it"
        )
        raise RemoteError(
            f"{settings.alias}: unknown host key for {name} ({described}){note}, then rerun with "
            "--accept-new-host-key to trust it"
        )
    new = NewHostKey(logsleuth_known_hosts(options), name, blob, hashed=settings.hash_known_hosts)
    if options.hold_new_host_key is not None:
        options.hold_new_host_key(new)  # the SSH helper: written once the parent asks (internal/ssh_helper/child.py)
    else:
        store_host_key(new, options)


def store_host_key(new: NewHostKey, options: SSHOptions) -> None:
    """Write an accepted key to logsleuth's known_hosts and tell the user, as OpenSSH does."""
    try:
        added = new.write()
    except OSError as exc:
        raise RemoteError(
            f"cannot record the host key of {new.name} in {new.path}: {exc.strerror or exc}"
        ) from None
    if added and options.notice is not None:
        options.notice(added)
