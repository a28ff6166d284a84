"""Parse the remote spellings of a source: `host:path`, `user@host:port:path`, `ssh://user@host:port/path`.

Pure string work (no paramiko), so the CLI can tell local from remote specs cheaply.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

# [user@]host — host is a name, an IPv4 address or a bracketed IPv6 address.  A `/` before the first
# colon means a local path (`./a:b`, `dir/x:y`), as in scp.
_USER_HOST = r"(?:(?P<user>[^@/:\[\]\s]+)@)?(?P<host>\[[0-9A-Fa-f:.%\w]+\]|[\w.\-]+)"
_SCP_SPEC = re.compile(rf"^{_USER_HOST}:(?:(?P<port>\d{{1,5}}):(?=.))?(?P<path>.*)$", re.DOTALL)
_URL_SPEC = re.compile(rf"^ssh://{_USER_HOST}(?::(?P<port>\d{{1,5}}))?(?P<path>/.*)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class RemoteSpec:
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
    """Return the remote parts of `spec`, or None when it is not a remote spelling."""
    url = _URL_SPEC.match(spec)
    if url:
        path = url["path"]
        if path.startswith("/~"):  # ssh://host/~/logs/x.log names a path under the login directory
            path = path[1:]
        return _build(url, path, prefix=spec[: url.start("path")])
    if spec.startswith(("/", "./", "../", "~")) or "://" in spec:
        return None
    scp = _SCP_SPEC.match(spec)
    if not scp or not scp["path"]:
        return None
    return _build(scp, scp["path"], prefix=spec[: scp.start("path")])


def _build(match: re.Match[str], path: str, prefix: str) -> RemoteSpec | None:
    host = match["host"]
    if host.startswith("["):
        host = host[1:-1]
    port = int(match["port"]) if match["port"] else None
    if port is not None and not 0 < port < 65536:
        return None
    if path.startswith("~/"):  # exec channels and SFTP both start in the login directory
        path = path[2:] or "."
    return RemoteSpec(host=host, path=path, user=match["user"], port=port, prefix=prefix)


def looks_remote(spec: str) -> bool:
    """A spec is remote when it has a remote spelling and no local file of that name exists (as in scp)."""
    if spec == "-" or (not spec.startswith("ssh://") and os.path.exists(spec)):
        return False
    return parse_remote_spec(spec) is not None
