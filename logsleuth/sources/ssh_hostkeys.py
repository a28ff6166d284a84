"""Host key policy: OpenSSH's `StrictHostKeyChecking` with logsleuth's own store for accepted keys.

- known: the key is in ~/.ssh/known_hosts, a UserKnownHostsFile, or logsleuth's known_hosts → connect.
- unknown: refused, with the command line that accepts it; `--accept-new-host-key` (or the config's
  StrictHostKeyChecking accept-new/no) stores it in logsleuth's file, never in the user's ssh files.
- changed: always refused, whatever the options.  A host known under another key type is treated as changed
  (OpenSSH would prompt; we never prompt).
"""

from __future__ import annotations

import os

import paramiko

from logsleuth.errors import SourceError
from logsleuth.sources.base import SSHOptions
from logsleuth.sources.ssh_config import HostSettings


def logsleuth_known_hosts(options: SSHOptions) -> str:
    if options.known_hosts_file:
        return os.path.expanduser(options.known_hosts_file)
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(config_home, "logsleuth", "known_hosts")


def _known_files(settings: HostSettings, options: SSHOptions) -> list[str]:
    return [*settings.known_hosts_files, logsleuth_known_hosts(options)]


def _load(path: str) -> paramiko.HostKeys:
    keys = paramiko.HostKeys()
    if os.path.exists(path):
        try:
            keys.load(path)
        except (OSError, paramiko.SSHException, ValueError) as exc:
            raise SourceError(f"known_hosts file {path}: {exc}") from None
    return keys


def _known_keys(settings: HostSettings, options: SSHOptions) -> list[tuple[str, paramiko.PKey]]:
    """(file, key) for every key any known_hosts file holds for this host."""
    found: list[tuple[str, paramiko.PKey]] = []
    for path in _known_files(settings, options):
        entry = _load(path).lookup(settings.host_key_name)
        if entry:
            found.extend((path, entry[key_type]) for key_type in entry)
    return found


def preferred_key_types(
    settings: HostSettings, options: SSHOptions, offered: tuple[str, ...]
) -> tuple[str, ...]:
    """Ask the server for a key type we already know (as OpenSSH orders HostKeyAlgorithms)."""
    known: list[str] = []
    for _, key in _known_keys(settings, options):
        name = key.get_name()
        names = ["rsa-sha2-512", "rsa-sha2-256"] if name == "ssh-rsa" else [name]
        known.extend(n for n in names if n in offered and n not in known)
    return tuple(known) + tuple(t for t in offered if t not in known)


def check_host_key(settings: HostSettings, options: SSHOptions, server_key: paramiko.PKey) -> None:
    name = settings.host_key_name
    known = _known_keys(settings, options)
    described = f"{server_key.get_name()} {server_key.fingerprint}"
    if any(key == server_key for _, key in known):
        return
    if known:
        where = known[0][0]
        raise SourceError(
            f"{settings.alias}: HOST KEY CHANGED for {name}: the server now presents {described}, which does "
            f"not match {where}; refusing to connect (possible man-in-the-middle). If the change is expected, "
            f"remove the old key with: ssh-keygen -R '{name}' -f {where}"
        )
    accept = options.accept_new_host_key or settings.strict_host_key_checking in ("accept-new", "no", "off")
    if not accept:
        raise SourceError(
            f"{settings.alias}: unknown host key for {name} ({described}); verify it, then rerun with "
            "--accept-new-host-key to trust it"
        )
    _store(logsleuth_known_hosts(options), name, server_key)


def _store(path: str, name: str, key: paramiko.PKey) -> None:
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(path, "a", encoding="ascii") as handle:
            handle.write(f"{name} {key.get_name()} {key.get_base64()}\n")
    except OSError as exc:
        raise SourceError(f"cannot record the host key of {name} in {path}: {exc.strerror or exc}") from None
