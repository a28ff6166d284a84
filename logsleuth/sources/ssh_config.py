"""Resolve a host the way OpenSSH would: ~/.ssh/config (or -F FILE) through paramiko's SSHConfig.

paramiko parses the file (Host/Match blocks, first value wins, %h/%p/%r tokens) but acts on nothing; this
module turns the lookup into the handful of settings logsleuth honours.  `Include` is expanded here because
paramiko does not support it.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass

import paramiko

DEFAULT_IDENTITY_FILES = ("~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa")
DEFAULT_KNOWN_HOSTS = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")


@dataclass(frozen=True, slots=True)
class HostSettings:
    alias: str  # the name the user wrote
    hostname: str  # what to connect to
    port: int
    user: str
    identity_files: tuple[str, ...]
    identity_files_explicit: bool  # IdentityFile given: the default key files are not tried (as OpenSSH)
    identities_only: bool
    proxy_command: str | None
    proxy_jump: tuple[str, ...]  # hops, outermost first
    connect_timeout: float | None
    server_alive_interval: int
    known_hosts_files: tuple[str, ...]
    host_key_alias: str | None
    strict_host_key_checking: str  # yes / accept-new / no / ask (ask behaves like yes: we never prompt)

    @property
    def host_key_name(self) -> str:
        """The name under which known_hosts stores this host's key (`[host]:port` off port 22)."""
        name = self.host_key_alias or self.hostname
        return name if self.port == 22 else f"[{name}]:{self.port}"


def load_config(config_file: str | None) -> paramiko.SSHConfig:
    path = os.path.expanduser(config_file or "~/.ssh/config")
    if config_file is None and not os.path.exists(path):
        return paramiko.SSHConfig.from_text("")
    try:
        return paramiko.SSHConfig.from_text(_expand_includes(path, depth=0))
    except OSError as exc:
        from logsleuth.errors import SourceError

        raise SourceError(f"ssh config {path}: {exc.strerror or exc}") from None


def _expand_includes(path: str, depth: int) -> str:
    """The text of `path` with every `Include` line replaced by the files it names (relative to ~/.ssh)."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        lines = handle.read().splitlines()
    if depth > 16:  # OpenSSH's own limit against include loops
        return ""
    out: list[str] = []
    for line in lines:
        words = line.strip().replace("=", " ", 1).split()
        if words and words[0].lower() == "include":
            for pattern in words[1:]:
                pattern = os.path.expanduser(pattern)
                if not os.path.isabs(pattern):
                    pattern = os.path.join(os.path.expanduser("~/.ssh"), pattern)
                for included in sorted(glob.glob(pattern)):
                    out.append(_expand_includes(included, depth + 1))
        else:
            out.append(line)
    return "\n".join(out)


def resolve_host(
    config: paramiko.SSHConfig,
    alias: str,
    *,
    user: str | None = None,
    port: int | None = None,
) -> HostSettings:
    """Settings for `alias`; a user or port in the spec beats the config file, as on the ssh command line."""
    entry = config.lookup(alias)
    identity = tuple(entry.get("identityfile", []))
    jump = entry.get("proxyjump")
    timeout = entry.get("connecttimeout")
    known_hosts = tuple(os.path.expanduser(p) for p in entry.get("userknownhostsfile", "").split())
    return HostSettings(
        alias=alias,
        hostname=entry.get("hostname", alias),
        port=port or int(entry.get("port", 22)),
        user=user or entry.get("user") or _local_user(),
        identity_files=tuple(os.path.expanduser(p) for p in identity or DEFAULT_IDENTITY_FILES),
        identity_files_explicit=bool(identity),
        identities_only=entry.get("identitiesonly", "no").lower() == "yes",
        proxy_command=_none_if_none(entry.get("proxycommand")),
        proxy_jump=tuple(h.strip() for h in jump.split(",")) if jump and jump.lower() != "none" else (),
        connect_timeout=float(timeout) if timeout else None,
        server_alive_interval=int(entry.get("serveraliveinterval", 0) or 0),
        known_hosts_files=known_hosts or tuple(os.path.expanduser(p) for p in DEFAULT_KNOWN_HOSTS),
        host_key_alias=entry.get("hostkeyalias"),
        strict_host_key_checking=entry.get("stricthostkeychecking", "ask").lower(),
    )


def _none_if_none(value: str | None) -> str | None:
    return None if value is None or value.lower() == "none" else value


def _local_user() -> str:
    import getpass

    return getpass.getuser()


def split_jump(hop: str) -> tuple[str, str | None, int | None]:
    """`[user@]host[:port]` of one ProxyJump hop (also `ssh://user@host:port`)."""
    hop = hop.removeprefix("ssh://")
    user, _, hostport = hop.rpartition("@")
    host, port = hostport, None
    if hostport.startswith("["):
        host, _, rest = hostport[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else None
    elif hostport.count(":") == 1:
        host, port_text = hostport.split(":")
        port = int(port_text)
    return host, user or None, port
