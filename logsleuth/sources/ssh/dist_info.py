"""paramiko's installed version, read from its `.dist-info` directory's name: without importing paramiko
(~0.2 s) or importlib.metadata (~25 ms), so `logsleuth --version` and paramiko's own import (importing.py) stay
cheap, and an installation whose paramiko is broken can still say which one it has."""

from __future__ import annotations

import os
import re
from importlib.util import find_spec

_DIST_INFO = re.compile(r"^paramiko-(?P<version>[^-]+)\.dist-info$", re.IGNORECASE)


def installed_version() -> str | None:
    """paramiko's version from its `.dist-info` directory name, None when it is not installed or unclear."""
    spec = find_spec("paramiko")
    if spec is None or not spec.origin:
        return None
    site_dir = os.path.dirname(os.path.dirname(spec.origin))
    try:
        names = os.listdir(site_dir)
    except OSError:
        return None
    versions = [m["version"] for name in names if (m := _DIST_INFO.match(name))]
    return versions[0] if len(versions) == 1 else None  # two dist-infos: let the real lookup decide
