"""Where logsleuth keeps its files, the XDG way: settings under ~/.config/logsleuth, caches under
~/.cache/logsleuth (or $XDG_CONFIG_HOME / $XDG_CACHE_HOME)."""

from __future__ import annotations

import os
from pathlib import Path


def config_dir() -> Path:
    """User patterns (`patterns/`) and host keys accepted with --accept-new-host-key (`known_hosts`)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "logsleuth"


def cache_dir() -> Path:
    """The parsed bundled patterns (a speed-up only: any problem with it means parsing the TOML)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "logsleuth"
