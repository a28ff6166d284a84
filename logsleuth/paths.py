"""Where logsleuth keeps its files, the XDG way: settings under ~/.config/logsleuth, caches under
~/.cache/logsleuth (or $XDG_CONFIG_HOME / $XDG_CACHE_HOME)."""

from __future__ import annotations

import importlib
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


def bundled_patterns_dir() -> Path:
    """The shipped pattern library: `patterns/` of the checkout, installed as the package `logsleuth.patterns`.

    Found through that package's own path, not importlib.resources, whose import (with tempfile) costs
    ~8 ms of every run.  The package is always installed unpacked (a wheel, pipx, an editable checkout);
    logsleuth is never imported from a zip.  A checkout's own `patterns/` comes first: a second checkout (a git
    worktree) run with PYTHONPATH would otherwise read the editable install's, another checkout's library."""
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "patterns" / "__init__.py").is_file() and (checkout / "pyproject.toml").is_file():
        return checkout / "patterns"
    package = importlib.import_module("logsleuth.patterns")
    return Path(next(iter(package.__path__)))
