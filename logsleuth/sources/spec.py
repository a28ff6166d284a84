"""Parse the remote spellings of a source: `host:path`, `user@host:port:path`, `ssh://user@host:port/path`.

Pure string work (no paramiko), so the CLI can tell local from remote specs cheaply.  Also the one place that
makes remote text safe for a terminal (`printable`, `RemoteError`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from logsleuth.errors import SourceError, UsageError
from logsleuth.lazyre import compile_lazily

# [user@]host — host is a name, an IPv4 address or a bracketed IPv6 address.  A `/` before the first
# colon means a local path (`./a:b`, `dir/x:y`), as in scp.
_USER_HOST = r"(?:(?P<user>[^@/:\[\]\s]+)@)?(?P<host>\[[0-9A-Fa-f:.%\w]+\]|[\w.\-]+)"
# A number between two colons is the port, whatever its size: `gpu7:99999:/x` is an error, not a path.
_SCP_SPEC = compile_lazily(rf"^{_USER_HOST}:(?:(?P<port>\d+):(?=.))?(?P<path>.*)$", re.DOTALL)
_URL_SPEC = compile_lazily(rf"^ssh://{_USER_HOST}(?::(?P<port>\d+))?(?P<path>/.*)$", re.DOTALL)
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """`text` with every character a terminal would act on escaped the way repr() writes it (ESC as `\\x1b`,
    a bidi override as `\\u202e`, a byte that was not UTF-8 as `\\xff`); printable text, any script, stays."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else _escape(char) for char in text)


def _escape(char: str) -> str:
    code = ord(char)
    if char in _ESCAPES:
        return _ESCAPES[char]
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the undecodable byte it stands for
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


class RemoteError(SourceError):
    """A SourceError about a remote source.  Its message may quote remote file names and remote stderr, so its
    control characters are escaped when it is built: a file named with a terminal escape cannot act on the
    terminal that shows the error."""

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))


class ConnectionLost(RemoteError):
    """The connection went away (or stalled) while a remote script ran, after it had been made: a follow
    reconnects (ssh/follow.py), where an error the host gave (a missing file, a failed login) would only repeat."""


@dataclass(frozen=True, slots=True)
class RemoteSpec:
    """The parts of a remote source's spelling."""

    host: str  # as written (an ssh config alias or an address); IPv6 without brackets
    path: str  # remote path, may contain a glob; relative paths are relative to the login directory
    user: str | None = None
    port: int | None = None
    prefix: str = ""  # the spec text before the path, used to name each matched file

    def name_for(self, path: str) -> str:
        """The user-facing name of one remote file, in the same spelling the user chose."""
        if self.prefix.startswith("ssh://") and not path.startswith("/"):
            return f"{self.prefix}/~/{path}"
        return f"{self.prefix}{path}"


def parse_remote_spec(spec: str) -> RemoteSpec | None:
    """Return the remote parts of `spec`, or None when it is not a remote spelling.

    Raises UsageError for a remote spelling with a port out of range, or an ssh:// URL with a password."""
    if spec.startswith("ssh://"):
        _refuse_password(spec)
    url = _URL_SPEC.match(spec)
    if url:
        path = url["path"]
        if path.startswith("/~"):  # ssh://host/~/logs/x.log names a path under the login directory
            path = path[1:]
        return _build(spec, url, path, prefix=spec[: url.start("path")])
    if spec.startswith(("/", "./", "../", "~")) or "://" in spec:
        return None
    scp = _SCP_SPEC.match(spec)
    if not scp or not scp["path"]:
        return None
    return _build(spec, scp, scp["path"], prefix=spec[: scp.start("path")])


def _refuse_password(url: str) -> None:
    """`ssh://user:password@host/x`: refused, in a message without the password.  A password on the command
    line shows in process lists and shell history, and logsleuth never types one in: keys only.  The user
    part is the URL's authority (up to its first `/`, RFC 3986), so `ssh://host:22/run:1@night.log` is a path."""
    authority = url[len("ssh://") :].split("/", 1)[0]
    user_info, at, host = authority.rpartition("@")
    if at and ":" in user_info:
        user = user_info.split(":", 1)[0]
        raise UsageError(
            printable(f"ssh://{user}:…@{host}: a password in an ssh:// URL is not supported (it would show in "
                      "process lists and shell history): use a key (IdentityFile in ~/.ssh/config, or ssh-agent)")
        )


def _build(spec: str, match: re.Match[str], path: str, prefix: str) -> RemoteSpec:
    host = match["host"]
    if host.startswith("["):
        host = host[1:-1]
    port = int(match["port"]) if match["port"] else None
    if port is not None and not 0 < port < 65536:
        raise UsageError(printable(f"{spec}: port {port} out of range (1-65535)"))
    if path.startswith("~/"):  # exec channels and SFTP both start in the login directory
        path = path[2:] or "."
    return RemoteSpec(host=host, path=path, user=match["user"], port=port, prefix=prefix)


def looks_remote(spec: str) -> bool:
    """A spec is remote when it has a remote spelling and no local file of that name exists (as in scp).
    A remote spelling with a bad port is remote too: opening it reports the port."""
    if spec == "-" or (not spec.startswith("ssh://") and os.path.exists(spec)):
        return False
    try:
        return parse_remote_spec(spec) is not None
    except UsageError:
        return True
