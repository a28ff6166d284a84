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
- `@cert-authority` lines: paramiko cannot check host certificates, so they vouch for nothing here; an unknown
  key on a host that such a line covers says so in its message.  (With the default backend "auto", such a host
  is reached through OpenSSH's ssh, which checks them: sources/ssh/open.py.)
"""

from __future__ import annotations

import paramiko

from logsleuth.sources.options import SSHOptions
from logsleuth.sources.spec import RemoteError
from logsleuth.sources.ssh.config import HostSettings
from logsleuth.sources.ssh.known_hosts import (
    KnownHost,
    NewHostKey,
    known_host_entries,
    logsleuth_known_hosts,
    store_host_key,
)


def host_key_entries(settings: HostSettings, options: SSHOptions) -> list[KnownHost]:
    files = [*settings.known_hosts_files, logsleuth_known_hosts(options.known_hosts_file), *settings.global_known_hosts_files]
    return known_host_entries(files, settings.host_key_name)


def preferred_key_types(
    settings: HostSettings, options: SSHOptions, offered: tuple[str, ...]
) -> tuple[str, ...]:
    """Ask the server for a key type we already know (as OpenSSH orders HostKeyAlgorithms)."""
    known: list[str] = []
    for entry in host_key_entries(settings, options):
        if entry.marker:
            continue
        names = ["rsa-sha2-512", "rsa-sha2-256"] if entry.key_type == "ssh-rsa" else [entry.key_type]
        known.extend(n for n in names if n in offered and n not in known)
    return tuple(known) + tuple(t for t in offered if t not in known)


def check_host_key(settings: HostSettings, options: SSHOptions, server_key: paramiko.PKey) -> None:
    name = settings.host_key_name
    entries = host_key_entries(settings, options)
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
            f"; {authority.where} trusts a certificate authority for this host, but the paramiko backend cannot "
            "check host certificates (the openssh backend can); verify the key"
            if authority
            else "; verify it"
        )
        raise RemoteError(
            f"{settings.alias}: unknown host key for {name} ({described}){note}, then rerun with "
            "--accept-new-host-key to trust it"
        )
    new = NewHostKey(logsleuth_known_hosts(options.known_hosts_file), name, blob, hashed=settings.hash_known_hosts)
    if options.hold_new_host_key is not None:
        options.hold_new_host_key(new)  # the SSH helper: written once the parent asks (internal/ssh_helper/child.py)
    else:
        store_host_key(new, options.notice)
