"""Resolve a host the way OpenSSH would: the user's ~/.ssh/config, then the system-wide /etc/ssh/ssh_config (or
only the -F FILE, or none with `-F none`), through paramiko's SSHConfig.

paramiko parses the files (Host/Match blocks, first value wins, %h/%p/%r tokens) but acts on nothing; this
module turns the lookup into the handful of settings logsleuth honours.  `Include` is expanded here because
paramiko does not support it, and every line is checked here first, so that a bad value is reported with its
file and line (as OpenSSH does) instead of failing later without either.  Unknown keywords are skipped, as
with OpenSSH's `IgnoreUnknown *`: distributions add their own (Apple's UseKeychain, Debian's GSSAPI ones).

Reading and checking the files needs no paramiko (the importer looks for `Match exec` before paramiko is
imported); paramiko is imported by the functions that parse.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from logsleuth.errors import UsageError
from logsleuth.lazyre import compile_lazily
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.spec import printable

if TYPE_CHECKING:
    import paramiko

DEFAULT_IDENTITY_FILES = ("~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa")
# OpenSSH's default FIDO keys: paramiko cannot use them, so only the backend choice looks at them.
DEFAULT_SECURITY_KEY_FILES = ("~/.ssh/id_ecdsa_sk", "~/.ssh/id_ed25519_sk")
USER_CONFIG = "~/.ssh/config"
DEFAULT_KNOWN_HOSTS = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")
GLOBAL_KNOWN_HOSTS = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")  # read, never written
MAX_INCLUDE_DEPTH = 16  # OpenSSH's READCONF_MAX_DEPTH
DEFAULT_SERVER_ALIVE_COUNT_MAX = 3
# paramiko's own reading of a line (paramiko.config.SSHConfig.SETTINGS_REGEX).
_SETTING = compile_lazily(r"^\s*(?P<key>\w+)(?:\s*=\s*|\s+)(?P<value>.+?)\s*$")
_KEYWORD_ALONE = compile_lazily(r"^\s*(?P<key>\w+)\s*=?\s*$")
# OpenSSH's time format (sshd_config(5) TIME FORMATS): 90, 90s, 1m30s, 2h.
# Every part but the last carries its unit: `(?:\d+[unit]?)+` read "1234" in 2**n ways and backtracked exponentially
# on a long run of digits.
_TIME = compile_lazily(r"^(?:\d+[sSmMhHdDwW])*\d+[sSmMhHdDwW]?$")
_TIME_PART = compile_lazily(r"(\d+)([sSmMhHdDwW]?)")
_TIME_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_MATCH_EXEC = compile_lazily(r"^\s*match\b[^\n]*\bexec\b", re.IGNORECASE | re.MULTILINE)


class SSHConfigError(UsageError):
    """A line of the user's ssh config that OpenSSH would refuse too: exit status 2, with file and line."""

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))


@dataclass(frozen=True, slots=True)
class HostSettings:
    """What the ssh config says for one host."""
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
    connection_attempts: int | None  # ConnectionAttempts, when the config sets it
    server_alive_interval: float  # seconds; 0: not set
    server_alive_count_max: int
    known_hosts_files: tuple[str, ...]  # UserKnownHostsFile: read, never written (logsleuth has its own)
    global_known_hosts_files: tuple[str, ...]  # GlobalKnownHostsFile: read, never written
    host_key_alias: str | None
    hash_known_hosts: bool  # HashKnownHosts: store accepted keys under a hashed name
    strict_host_key_checking: str  # yes / accept-new / no / ask (ask behaves like yes: we never prompt)
    # What paramiko cannot do (the backend choice reads these; the paramiko backend ignores them):
    certificate_file: str | None  # CertificateFile: a user certificate
    control_path: str | None  # ControlPath: an OpenSSH master connection to share (None: none)
    control_master: str  # ControlMaster: no / yes / auto / ask / autoask

    @property
    def host_key_name(self) -> str:
        """The name under which known_hosts stores this host's key: the HostKeyAlias exactly as written (no port
        added, ssh_config(5)), else the host name, as `[host]:port` off port 22."""
        if self.host_key_alias:
            return self.host_key_alias
        return self.hostname if self.port == 22 else f"[{self.hostname}]:{self.port}"


@dataclass(frozen=True, slots=True)
class ConfigFile:
    """An ssh config file, read once."""
    path: str
    include_dir: str  # where relative Include names are: ~/.ssh for the user's files, /etc/ssh for the system's
    required: bool  # -F FILE must exist; the default files may be missing


def config_files(options: SSHOptions) -> list[ConfigFile]:
    """The files OpenSSH reads, in its order: `-F FILE` alone (`-F none`: none), else the user's file, then the
    system-wide one (first value wins, so the user's settings come first)."""
    if options.config_file is not None:
        if options.config_file.lower() == "none":
            return []
        return [ConfigFile(os.path.expanduser(options.config_file), os.path.expanduser("~/.ssh"), True)]
    files = [ConfigFile(os.path.expanduser(USER_CONFIG), os.path.expanduser("~/.ssh"), False)]
    if options.system_config_file:
        system = options.system_config_file
        files.append(ConfigFile(system, os.path.dirname(system) or ".", False))
    return files


def config_text(options: SSHOptions) -> str:
    """The text of every config file, Includes expanded and every line checked; each file starts a new
    `Host *` section, as each file does for OpenSSH.  Raises SSHConfigError for a bad file or line."""
    parts = []
    for file in config_files(options):
        if file.required or os.path.exists(file.path):
            parts.append("Host *\n" + _expand_includes(file.path, file.include_dir, depth=0))
    return "\n".join(parts)


def has_match_exec(text: str) -> bool:
    """Whether a `Match ... exec` line is in the text (only paramiko's optional `invoke` can run it)."""
    return bool(_MATCH_EXEC.search(text))


def load_config(options: SSHOptions) -> paramiko.SSHConfig:
    """The config (Includes expanded, every line checked).  Raises SSHConfigError for a bad file or line."""
    return parse_config(config_text(options))


# A fleet opens dozens of sources from one config: it is parsed once per text, and each host resolved once.
# (Measured with a 64-host config on 2 cores: parsing ~17 ms and a lookup ~11 ms, each per source.)
_PARSED: dict[str, paramiko.SSHConfig] = {}
_RESOLVED: dict[tuple[int, str, str | None, int | None, str, str], HostSettings] = {}
_PARSING = threading.Lock()


def parse_config(text: str) -> paramiko.SSHConfig:
    """paramiko's reading of `config_text()` (the same text is parsed once per process)."""
    import paramiko

    with _PARSING:  # the sources of a fleet open at once: one thread parses, the others wait for it
        parsed = _PARSED.get(text)
        if parsed is not None:
            return parsed
        _ask_local_user_once(paramiko)
        try:
            parsed = paramiko.SSHConfig.from_text(text)
        except paramiko.ConfigParseError as exc:  # what the line checks below do not foresee
            raise SSHConfigError(f"ssh config: {exc}") from None
        if len(_PARSED) > 8:  # tests write many configs; a run has one or two
            _PARSED.clear()
            _RESOLVED.clear()
        _PARSED[text] = parsed
        return parsed


class _LocalUserOnce:
    """Stands in for the `getpass` module inside paramiko's config code, which asks `getpass.getuser()` for
    every Host block of every lookup: a passwd lookup each time, two thirds of a lookup's cost in a 64-host
    config.  The local user cannot change while logsleuth runs."""

    @staticmethod
    @functools.cache
    def getuser() -> str:
        import getpass

        return getpass.getuser()


def _ask_local_user_once(paramiko: Any) -> None:
    if getattr(paramiko.config, "getpass", None) is not _LocalUserOnce:
        paramiko.config.getpass = _LocalUserOnce


def _expand_includes(path: str, include_dir: str, depth: int) -> str:
    """The text of `path`, checked line by line, with every `Include` line replaced by the files it names
    (relative names under `include_dir`)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError as exc:
        raise SSHConfigError(f"ssh config {path}: {exc.strerror or exc}") from None
    out: list[str] = []
    for number, line in enumerate(lines, 1):
        setting = _check_line(path, number, line)
        if setting is None or setting[0] != "include":
            out.append(line)
            continue
        if depth >= MAX_INCLUDE_DEPTH:
            raise SSHConfigError(
                f"ssh config {path} line {number}: Include nested more than {MAX_INCLUDE_DEPTH} deep "
                "(does a file include itself?)"
            )
        for pattern in setting[1].split():
            pattern = os.path.expanduser(pattern)
            if not os.path.isabs(pattern):
                pattern = os.path.join(include_dir, pattern)
            for included in sorted(glob.glob(pattern)):
                out.append(_expand_includes(included, include_dir, depth + 1))
    return "\n".join(out)


def _check_line(path: str, number: int, line: str) -> tuple[str, str] | None:
    """(keyword in lower case, value) of one config line, or None for a blank or comment line.  A line OpenSSH
    would refuse raises SSHConfigError naming the file and line."""
    if not line.strip() or line.lstrip().startswith("#"):
        return None
    where = f"ssh config {path} line {number}"
    setting = _SETTING.match(line)
    if setting is None:
        alone = _KEYWORD_ALONE.match(line)
        if alone:
            raise SSHConfigError(f"{where}: no value after {alone['key']}")
        raise SSHConfigError(f"{where}: cannot read '{line.strip()}'")
    key, value = setting["key"].lower(), setting["value"]
    check = _VALUE_CHECKS.get(key)
    if check is not None:
        name, test, expected = check
        if not test(value):
            raise SSHConfigError(f"{where}: bad {name} '{value}' ({expected})")
    return key, value


def parse_time(text: str) -> float | None:
    """Seconds in OpenSSH's time format (`90`, `90s`, `1m30s`), or None if it is not one."""
    if not _TIME.match(text):
        return None
    return float(sum(int(n) * _TIME_UNITS[unit.lower()] for n, unit in _TIME_PART.findall(text)))


def _is_port(text: str) -> bool:
    return text.isdigit() and 0 < int(text) < 65536


def _jump_ports_ok(text: str) -> bool:
    if text.lower() == "none":
        return True
    try:
        for hop in text.split(","):
            split_jump(hop.strip())
    except ValueError:
        return False
    return True


_VALUE_CHECKS: dict[str, tuple[str, Callable[[str], bool], str]] = {
    "port": ("Port", _is_port, "a number from 1 to 65535"),
    "connecttimeout": ("ConnectTimeout", lambda v: parse_time(v) is not None, "a number of seconds"),
    "serveraliveinterval": ("ServerAliveInterval", lambda v: parse_time(v) is not None, "a number of seconds"),
    "serveralivecountmax": ("ServerAliveCountMax", str.isdigit, "a whole number"),
    "connectionattempts": ("ConnectionAttempts", lambda v: v.isdigit() and int(v) > 0, "a whole number above 0"),
    "proxyjump": ("ProxyJump", _jump_ports_ok, "bad port"),
}


def resolve_host(
    config: paramiko.SSHConfig,
    alias: str,
    *,
    user: str | None = None,
    port: int | None = None,
) -> HostSettings:
    """Settings for `alias`; a user or port in the spec beats the config file, as on the ssh command line.
    Resolved once per config, host, user and port (and home directory: paths expand under it)."""
    if not any(parsed is config for parsed in _PARSED.values()):  # not ours: its id may be reused later
        return _resolve_host(config, alias, user=user, port=port)
    key = (id(config), alias, user, port, os.path.expanduser("~"), os.environ.get("USER", ""))
    resolved = _RESOLVED.get(key)
    if resolved is None:
        resolved = _RESOLVED[key] = _resolve_host(config, alias, user=user, port=port)
    return resolved


def _resolve_host(config: paramiko.SSHConfig, alias: str, *, user: str | None, port: int | None) -> HostSettings:
    import paramiko

    try:
        entry = config.lookup(alias)
    except paramiko.ConfigParseError as exc:  # a Match line paramiko cannot evaluate
        raise SSHConfigError(f"ssh config: {exc}") from None
    identity = tuple(entry.get("identityfile", []))
    jump = entry.get("proxyjump")
    attempts = entry.get("connectionattempts")
    return HostSettings(
        alias=alias,
        hostname=entry.get("hostname", alias),
        port=port or int(entry.get("port", 22)),
        user=user or entry.get("user") or _local_user(),
        identity_files=tuple(os.path.expanduser(p) for p in identity or DEFAULT_IDENTITY_FILES),
        identity_files_explicit=bool(identity),
        identities_only=_yes(entry.get("identitiesonly")),
        proxy_command=_none_if_none(entry.get("proxycommand")),
        proxy_jump=tuple(h.strip() for h in jump.split(",")) if jump and jump.lower() != "none" else (),
        connect_timeout=parse_time(entry.get("connecttimeout", "")),
        connection_attempts=int(attempts) if attempts else None,
        server_alive_interval=parse_time(entry.get("serveraliveinterval", "")) or 0.0,
        server_alive_count_max=int(entry.get("serveralivecountmax", DEFAULT_SERVER_ALIVE_COUNT_MAX)),
        known_hosts_files=_files(entry.get("userknownhostsfile"), DEFAULT_KNOWN_HOSTS),
        global_known_hosts_files=_files(entry.get("globalknownhostsfile"), GLOBAL_KNOWN_HOSTS),
        host_key_alias=entry.get("hostkeyalias"),
        hash_known_hosts=_yes(entry.get("hashknownhosts")),
        strict_host_key_checking=entry.get("stricthostkeychecking", "ask").lower(),
        certificate_file=_none_if_none(entry.get("certificatefile")),
        control_path=_none_if_none(entry.get("controlpath")),
        control_master=entry.get("controlmaster", "no").lower(),
    )


def _files(value: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    """A known-hosts file list: the config's words (`none`: no file), else the default."""
    if value is None:
        return tuple(os.path.expanduser(p) for p in default)
    return tuple(os.path.expanduser(p) for p in value.split() if p.lower() != "none")


def _yes(value: str | None) -> bool:
    return (value or "").lower() == "yes"


def _none_if_none(value: str | None) -> str | None:
    return None if value is None or value.lower() == "none" else value


def _local_user() -> str:
    import getpass

    return getpass.getuser()


def split_jump(hop: str) -> tuple[str, str | None, int | None]:
    """`[user@]host[:port]` of one ProxyJump hop (also `ssh://user@host:port`).  ValueError for a bad port."""
    hop = hop.removeprefix("ssh://")
    user, _, hostport = hop.rpartition("@")
    host, port = hostport, None
    if hostport.startswith("["):
        host, _, rest = hostport[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else None
    elif hostport.count(":") == 1:
        host, port_text = hostport.split(":")
        port = int(port_text)
    if port is not None and not 0 < port < 65536:
        raise ValueError(f"port {port} out of range")
    return host, user or None, port
