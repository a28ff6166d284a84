"""known_hosts files read as OpenSSH reads them (sshd(8), "SSH_KNOWN_HOSTS FILE FORMAT").

paramiko's HostKeys is not used: it raises on `@cert-authority`/`@revoked` lines (every connection failed with
an internal error), knows no patterns (`*.cluster`, `!bad.host`) and keeps one key per type and host.  Here:

- `[@marker] patterns keytype base64 [comment]`; markers `@revoked` and `@cert-authority`.
- Patterns are comma-separated, with `*` and `?` wildcards and `!` negation (a negated match excludes the line);
  `[host]:port` is matched as text; names match without regard to case; `|1|salt|hash` is one hashed name.
- A line OpenSSH would skip (unknown marker, missing or undecodable key, key type that is not the blob's) is
  skipped here too, silently: one bad line never stops a connection.

Pure Python, no paramiko: the key is compared as the blob the server sends.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from logsleuth import paths
from logsleuth.sources.base import Progress
from logsleuth.sources.spec import RemoteError

MARKERS = ("@revoked", "@cert-authority")
_HASH_PREFIX = "|1|"


@dataclass(frozen=True, slots=True)
class KnownHost:
    """One usable known_hosts line that matched a host name."""

    path: str
    line: int
    marker: str | None  # "@revoked", "@cert-authority", or None for a plain host key
    key_type: str
    blob: bytes  # the public key as the SSH protocol carries it

    @property
    def where(self) -> str:
        return f"{self.path} line {self.line}"


def known_host_entries(paths: Iterable[str], name: str) -> list[KnownHost]:
    """Every usable line of these files whose host patterns match `name` (as known_hosts spells it: `gpu7`,
    `[gpu7]:2222`), in file order.  Missing or unreadable files hold nothing, as for OpenSSH."""
    name = name.lower()
    return [entry for path in paths for patterns, entry in _read(path) if _host_matches(patterns, name)]


# Parsed files by path, valid while the file's inode, size and mtime stay: the hosts of a fleet share one
# known_hosts, and a key written meanwhile (`--accept-new-host-key`) changes its size and mtime.
_PARSED_FILES: dict[str, tuple[tuple[int, int, int], list[tuple[str, KnownHost]]]] = {}


def _read(path: str) -> list[tuple[str, KnownHost]]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            info = os.fstat(handle.fileno())
            stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
            cached = _PARSED_FILES.get(path)
            if cached is not None and cached[0] == stamp:
                return cached[1]
            lines = handle.read().splitlines()
    except OSError:
        return []
    entries = []
    for number, text in enumerate(lines, 1):
        parsed = parse_line(text)
        if parsed is not None:
            marker, patterns, key_type, blob = parsed
            entries.append((patterns, KnownHost(path, number, marker, key_type, blob)))
    _PARSED_FILES[path] = (stamp, entries)
    return entries


def parse_line(text: str) -> tuple[str | None, str, str, bytes] | None:
    """(marker, host patterns, key type, key blob) of a usable known_hosts line; None for a line OpenSSH skips."""
    fields = text.split()
    if not fields or fields[0].startswith("#"):
        return None
    marker = None
    if fields[0].startswith("@"):
        if fields[0] not in MARKERS:
            return None
        marker, fields = fields[0], fields[1:]
    if len(fields) < 3:
        return None
    patterns, key_type, encoded = fields[:3]
    try:
        blob = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None
    if blob_key_type(blob) != key_type:
        return None  # OpenSSH: "key type mismatch"
    return marker, patterns, key_type, blob


def blob_key_type(blob: bytes) -> str | None:
    """The key type a public key blob names in its first field (`ssh-ed25519`, ...)."""
    if len(blob) < 4:
        return None
    (length,) = struct.unpack(">I", blob[:4])
    if length > len(blob) - 4:
        return None
    return blob[4 : 4 + length].decode("ascii", "replace")


def fingerprint(blob: bytes) -> str:
    """A key's fingerprint as OpenSSH and paramiko print it: `SHA256:` and the unpadded base64 of the digest."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def key_file_type(path: str) -> str | None:
    """The key type of a key file (`ssh-ed25519`, `sk-ssh-ed25519@openssh.com`, ...): from `path.pub`, else from the
    public half an OpenSSH private key file keeps unencrypted.  None when neither can be read."""
    try:
        with open(path + ".pub", encoding="utf-8", errors="replace") as handle:
            words = handle.read().split()
        return words[0] if words else None
    except OSError:
        pass
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            text = handle.read(64 << 10)
    except OSError:
        return None
    body = "".join(line for line in text.splitlines() if line and not line.startswith("-----"))
    try:
        data = base64.b64decode(body, validate=False)
    except (binascii.Error, ValueError):
        return None
    return _private_key_container_type(data)


def _private_key_container_type(data: bytes) -> str | None:
    """The first public key's type in an `openssh-key-v1` container (PROTOCOL.key): magic, cipher, kdf, kdf
    options, key count, then the public keys."""
    magic = b"openssh-key-v1\0"
    if not data.startswith(magic):
        return None
    position = len(magic)
    for _ in range(3):  # cipher name, kdf name, kdf options
        if position + 4 > len(data):
            return None
        (length,) = struct.unpack(">I", data[position : position + 4])
        position += 4 + length
    position += 4  # number of keys
    if position + 4 > len(data):
        return None
    (length,) = struct.unpack(">I", data[position : position + 4])
    return blob_key_type(data[position + 4 : position + 4 + length])


def _host_matches(patterns: str, name: str) -> bool:
    if patterns.startswith(_HASH_PREFIX):
        return _hashed_name_matches(patterns, name)
    matched = False
    for pattern in patterns.lower().split(","):
        negated = pattern.startswith("!")
        if _pattern(pattern[1:] if negated else pattern).fullmatch(name):
            if negated:
                return False  # OpenSSH: a negated match excludes the line, whatever else matches
            matched = True
    return matched


@lru_cache(maxsize=256)
def _pattern(pattern: str) -> re.Pattern[str]:
    """OpenSSH's match_pattern: `*` and `?` are wildcards, everything else (`[`, `]` included) is literal."""
    return re.compile(re.escape(pattern).replace(r"\*", ".*").replace(r"\?", "."), re.DOTALL)


def _hashed_name_matches(field: str, name: str) -> bool:
    parts = field.split("|")  # "", "1", salt, hash
    if len(parts) != 4:
        return False
    try:
        salt, expected = base64.b64decode(parts[2], validate=True), base64.b64decode(parts[3], validate=True)
    except (binascii.Error, ValueError):
        return False
    return hmac.compare_digest(hmac.new(salt, name.encode(), hashlib.sha1).digest(), expected)


def hashed_name(name: str) -> str:
    """`name` as `HashKnownHosts yes` writes it: `|1|salt|HMAC-SHA1(salt, name)`, both base64."""
    salt = os.urandom(20)
    digest = hmac.new(salt, name.lower().encode(), hashlib.sha1).digest()
    return f"{_HASH_PREFIX}{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"


# OpenSSH's short names for key types, as in "Permanently added 'gpu7' (ED25519) ..." (sshkey_type()).
_TYPE_LABELS = {
    "ssh-ed25519": "ED25519",
    "ssh-rsa": "RSA",
    "ssh-dss": "DSA",
    "sk-ssh-ed25519@openssh.com": "ED25519-SK",
    "sk-ecdsa-sha2-nistp256@openssh.com": "ECDSA-SK",
}


def key_type_label(key_type: str) -> str:
    return "ECDSA" if key_type.startswith("ecdsa-sha2-") else _TYPE_LABELS.get(key_type, key_type)


@dataclass(frozen=True, slots=True)
class NewHostKey:
    """A host key accepted as new, to be appended to `path` (logsleuth's own known_hosts)."""

    path: str
    name: str  # as known_hosts spells it: `gpu7`, `[gpu7]:2222`, or the HostKeyAlias
    blob: bytes
    hashed: bool = False  # HashKnownHosts yes

    @property
    def key_type(self) -> str:
        return blob_key_type(self.blob) or "unknown"

    def write(self) -> str | None:
        """Append the key unless the file already has it; OpenSSH's line about it, or None if nothing was new.
        Raises OSError."""
        if any(known.blob == self.blob for known in known_host_entries([self.path], self.name) if not known.marker):
            return None  # two early connections to one host both accepted the key
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        name = hashed_name(self.name) if self.hashed else self.name
        with open(self.path, "a", encoding="ascii") as handle:
            handle.write(f"{name} {self.key_type} {base64.b64encode(self.blob).decode()}\n")
        return (
            f"Permanently added '{self.name}' ({key_type_label(self.key_type)}) to the list of known hosts in "
            f"{self.path}"
        )


def logsleuth_known_hosts(configured: str | None) -> str:
    """logsleuth's own known_hosts (`SSHOptions.known_hosts_file`, else under ~/.config/logsleuth): where accepted
    keys go, never the user's ssh files; both backends read it."""
    if configured:
        return os.path.expanduser(configured)
    return str(paths.config_dir() / "known_hosts")


def store_host_key(new: NewHostKey, notice: Progress | None) -> None:
    """Write an accepted key to logsleuth's known_hosts and tell the user (`notice`), as OpenSSH does."""
    try:
        added = new.write()
    except OSError as exc:
        raise RemoteError(
            f"cannot record the host key of {new.name} in {new.path}: {exc.strerror or exc}"
        ) from None
    if added and notice is not None:
        notice(added)
