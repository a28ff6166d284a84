"""What OpenSSH's `ssh` says went wrong, in the words of the paramiko backend (docs/ssh.md, "Errors").

The openssh backend runs ssh with `-E FILE -o LogLevel=DEBUG1`: ssh's own messages go to that log, apart from
the remote command's stderr, and the debug lines carry what the one-line errors need (the server's key
fingerprint, the keys offered).  ssh exits with status 255 for its own errors; `failure()` turns its log into
the exception to raise: a TransientConnectError (retried) for a refused, timed-out or dropped connection, an
SSHConfigError (exit status 2) for a bad config line, a RemoteError for the rest.  Pure text work: tested on the
logs real ssh runs write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from logsleuth.lazyre import compile_lazily
from logsleuth.sources.spec import ConnectionLost, RemoteError
from logsleuth.sources.ssh.config import SSHConfigError
from logsleuth.sources.ssh.known_hosts import fingerprint, known_host_entries
from logsleuth.sources.ssh.retry import TransientConnectError, seconds

_UNRESOLVED = compile_lazily(r"^ssh: Could not resolve hostname (?P<host>.+?): ")
_CONNECT = compile_lazily(r"^ssh: connect to host (?P<host>\S+) port (?P<port>\d+): (?P<why>.+)$")
_BANNER_TIMEOUT = compile_lazily(r"^Connection to (?P<host>\S+) port (?P<port>\d+) timed out$")
_HANDSHAKE = compile_lazily(r"^kex_exchange_identification: (?P<why>.+)$")
# ProxyJump: ssh runs `ssh … -W '[HOST]:PORT' JUMP`, whose stderr says why the jump host could not connect.
_JUMP = compile_lazily(
    r"^debug1: Executing proxy command: exec \S*ssh .*-W '?\[?(?P<host>[^]']+?)\]?:(?P<port>\d+)'? (?P<jump>\S+)$"
)
_JUMP_FAILED = compile_lazily(r"^channel \d+: open failed: (?P<why>.+)$")
_CLOSED = compile_lazily(r"^Connection (?:closed|reset) by (?:authenticating user \S+ )?(?P<host>\S+) port (?P<port>\d+)")
# A host certificate's fingerprint is its plain key's: shown as the plain key, as paramiko (which sees only that)
# shows it.
_SERVER_KEY = compile_lazily(
    r"^debug1: Server host (?:key|certificate): (?P<type>\S+?)(?:-cert-v01@openssh\.com)? (?P<fp>SHA256:[^\s,]+)"
)
_UNKNOWN_KEY = compile_lazily(r"^No \S+ host key is known for (?P<name>\S+) and you have requested strict checking\.$")
_CHANGED_KEY = compile_lazily(r"^Host key for (?P<name>\S+) has changed and you have requested strict checking\.$")
_OFFENDING = compile_lazily(r"^Offending \S+ key in (?P<path>.+):(?P<line>\d+)$")
_REVOKED_KEY = compile_lazily(r"^\S+ host key for (?P<name>\S+) was revoked and you have requested strict checking\.$")
_KEY_FAILED = "Host key verification failed."
_DENIED = compile_lazily(r"^(?P<who>\S+@\S+): Permission denied \((?P<methods>[^)]*)\)\.$")
_OFFERED = compile_lazily(r"^debug1: Offering public key: (?P<what>.+?) \S+ (?P<fp>SHA256:\S+)(?P<how>.*)$")
_ACCEPTED = compile_lazily(r"^debug1: Server accepts key: (?P<what>.+?) \S+ (?P<fp>SHA256:\S+)(?P<how>.*)$")
_STALLED = compile_lazily(r"^Timeout, server \S+ not responding\.$")
# The session had started (authenticated, before the script printed its marker, or during it).
_LOST = compile_lazily(r"^(?:Connection to \S+ closed by remote host\.|client_loop: send disconnect: .+)$")
_CONFIG_LINE = compile_lazily(r"^(?P<path>/.+?):? line (?P<line>\d+): (?P<why>.+?)\.?$")
_CONFIG_FILE = compile_lazily(r"^Can't open user config file (?P<path>.+?): (?P<why>.+)$")
_BAD_OWNER = compile_lazily(r"^Bad owner or permissions on (?P<path>.+)$")
# ssh's lines that say nothing about what went wrong.
_NOISE = compile_lazily(r"^(?:debug\d: |Pseudo-terminal |Transferred: |Bytes per second: |Authenticated to |OpenSSH_)")


@dataclass(frozen=True, slots=True)
class HostKeyFiles:
    """Where ssh looked the host key up: to name the file and line of a `@revoked` entry, as the paramiko backend
    does (ssh's own message names neither)."""

    name: str  # as known_hosts spells it: `gpu7`, `[gpu7]:2222`, or the HostKeyAlias
    paths: tuple[str, ...]


def lines_of(log: str) -> list[str]:
    return [line.strip() for line in log.splitlines() if line.strip()]


def config_error(log: str) -> SSHConfigError | None:
    """A bad config file or line in ssh's words, as the paramiko backend words it (exit status 2)."""
    for line in lines_of(log):
        if line.startswith("debug"):
            continue
        if found := _CONFIG_LINE.match(line):
            return SSHConfigError(f"ssh config {found['path']} line {found['line']}: {found['why']}")
        if found := _CONFIG_FILE.match(line):
            return SSHConfigError(f"ssh config {found['path']}: {found['why']}")
        if found := _BAD_OWNER.match(line):
            return SSHConfigError(f"ssh config {found['path']}: bad owner or permissions (ssh refuses it)")
    return None


def failure(
    log: str, alias: str, *, connected: bool, timeout: float, stall_limit: float, keys: HostKeyFiles
) -> Exception:
    """The error for an ssh that exited with status 255.  `connected`: the remote script had started (then the
    connection went away while reading); `timeout`: the ConnectTimeout it ran with."""
    lines = lines_of(log)
    if any(_STALLED.match(line) for line in lines):
        return ConnectionLost(f"{alias}: connection stalled after {seconds(stall_limit)} s")
    if connected or any(_LOST.match(line) for line in lines):
        return ConnectionLost(f"{alias}: connection lost while reading")
    found = config_error(log) or _connect_failure(lines, alias, timeout) or _host_key_failure(lines, alias, keys)
    return found or _auth_failure(lines, alias) or _other_failure(lines, alias)


def _first(pattern: re.Pattern[str], lines: list[str]) -> re.Match[str] | None:
    """The first of ssh's lines that `pattern` matches, as its match."""
    return next((found for line in lines if (found := pattern.match(line))), None)


def _connect_failure(lines: list[str], alias: str, timeout: float) -> Exception | None:
    jump = _first(_JUMP, lines)
    jump_failed = _first(_JUMP_FAILED, lines)
    if jump is not None and jump_failed is not None:
        return TransientConnectError(
            f"{alias}: jump host {jump['jump']} could not connect to {jump['host']} port {jump['port']} "
            f"({jump_failed['why']})"
        )
    for line in lines:
        if found := _UNRESOLVED.match(line):
            return RemoteError(f"{alias}: unknown host name '{found['host']}'")
        if found := _CONNECT.match(line):
            where, why = f"{found['host']} port {found['port']}", found["why"]
            if why == "Connection refused":
                return TransientConnectError(f"{alias}: connection refused by {where}")
            if why == "Connection timed out":
                return TransientConnectError(f"{alias}: connection to {where}", timeout=timeout)
            return TransientConnectError(f"{alias}: cannot reach {where}: {why}")
        if found := _BANNER_TIMEOUT.match(line):
            where = f"{found['host']} port {found['port']}"
            return TransientConnectError(
                f"{alias}: connection to {where}", timeout=timeout, detail=" (no SSH handshake)"
            )
    handshake = _first(_HANDSHAKE, lines)
    closed = _first(_CLOSED, lines)
    if handshake is not None and closed is not None:
        return TransientConnectError(
            f"{alias}: {closed['host']} port {closed['port']} closed the connection during the SSH handshake "
            f"({handshake['why']})"
        )
    return None


def _host_key_failure(lines: list[str], alias: str, keys: HostKeyFiles) -> Exception | None:
    if _KEY_FAILED not in lines:
        return None
    server_key = _first(_SERVER_KEY, lines)
    described = f"{server_key['type']} {server_key['fp']}" if server_key else "a key"
    for line in lines:
        if found := _UNKNOWN_KEY.match(line):
            return RemoteError(
                f"{alias}: unknown host key for {found['name']} ({described}); verify it, then rerun with "
                "--accept-new-host-key to trust it"
            )
        if found := _CHANGED_KEY.match(line):
            name = found["name"]
            offending = _first(_OFFENDING, lines)
            where = offending["path"] if offending else "your known_hosts"
            return RemoteError(
                f"{alias}: HOST KEY CHANGED for {name}: the server now presents {described}, which does not match "
                f"{where}; refusing to connect (possible man-in-the-middle). If the change is expected, remove the "
                f"old key with: ssh-keygen -R '{name}' -f {where}"
            )
        if found := _REVOKED_KEY.match(line):
            where = _revoked_entry(keys, described) or "a known_hosts @revoked line (or RevokedHostKeys)"
            return RemoteError(
                f"{alias}: REVOKED HOST KEY for {found['name']}: the server presents {described}, which {where} "
                "marks as revoked; refusing to connect"
            )
    reason = _last_words(lines[: lines.index(_KEY_FAILED)]) or "ssh refused it"
    return RemoteError(f"{alias}: host key verification failed for {keys.name} ({described}): {reason}")


def _revoked_entry(keys: HostKeyFiles, described: str) -> str | None:
    """`FILE line N` of the @revoked entry that holds the server's key, found by its fingerprint."""
    wanted = described.split()[-1]
    for entry in known_host_entries(keys.paths, keys.name):
        if entry.marker == "@revoked" and fingerprint(entry.blob) == wanted:
            return entry.where
    return None


def _auth_failure(lines: list[str], alias: str) -> Exception | None:
    denied = _first(_DENIED, lines)
    if denied is None:
        return None
    offered = [_key_label(found) for line in lines if (found := _OFFERED.match(line))]
    locked = [found["what"] for line in lines if (found := _ACCEPTED.match(line)) and "agent" not in found["how"]]
    who = denied["who"]
    if locked and len(offered) == len(locked):
        # The server would take the key, yet ssh could not sign with it: BatchMode asks no passphrase.
        return RemoteError(
            f"{alias}: authentication failed for {who}: key {locked[0]} is passphrase-protected and logsleuth does "
            f"not prompt; load it into ssh-agent with: ssh-add {locked[0]}"
        )
    tried = ", ".join(dict.fromkeys(offered)) or "no keys (no ssh-agent keys, no key files)"
    message = f"{alias}: authentication failed for {who} (tried publickey with: {tried}; "
    message += f"server allows: {denied['methods'].replace(',', ', ') or 'nothing'})"
    if locked:
        message += f"; passphrase-protected keys need ssh-add first: {', '.join(locked)}"
    return RemoteError(message)


def _key_label(found: re.Match[str]) -> str:
    return f"agent key {found['fp']}" if "agent" in found["how"] else found["what"]


def _other_failure(lines: list[str], alias: str) -> Exception:
    words = _last_words(lines)
    return RemoteError(f"{alias}: ssh failed: {words}" if words else f"{alias}: ssh failed (exit status 255)")


def _last_words(lines: Iterable[str]) -> str | None:
    said = [line for line in lines if not _NOISE.match(line) and not line.startswith("@")]
    return said[-1] if said else None
