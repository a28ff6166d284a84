"""Shipped TOML files (the bundled pattern files, the facts tables) as parsed TOML, cached as JSON between runs.

Why: tomllib is pure Python and spends ~20 ms on the ~50 bundled files at every start, a tenth of a remote
diagnose, and ~10 ms more on the facts tables a failure with no pattern reads.  `json` parses the same data in C in ~1 ms.  The cache file is named after a hash of every bundled
file's path and text, so an edited, added or removed pattern file simply misses the cache: it can never be
stale.  Any problem with the cache (unwritable directory, a corrupt or foreign file) means parsing the TOML
as if there were no cache.  Only shipped files are cached; user patterns are parsed every run, so that
their errors are reported every run.

Every upgrade (and every edit of a shipped file) leaves the old cache files behind, so a write also removes the
files of the same kind that no run has used for `_UNUSED_DAYS` (a hit refreshes a file's time at most once a day).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from logsleuth import paths

_FORMAT = 1  # bump when the cached structure changes
_UNUSED_DAYS = 30
_DAY = 24 * 3600


def cache_dir() -> Path:
    return paths.cache_dir()


def _cache_path(files: list[tuple[str, str]], name: str) -> Path:
    digest = hashlib.sha256(str(_FORMAT).encode())
    for path, text in files:
        digest.update(f"\0{path}\0{text}".encode("utf-8", "surrogateescape"))
    return cache_dir() / f"{name}-{digest.hexdigest()[:32]}.json"


def parsed_files(files: list[tuple[str, str]], *, use_cache: bool = True, name: str = "patterns") -> list[dict[str, Any]]:
    """`tomllib.loads(text)` for each (path, text), from the cache when it holds exactly these files
    (`use_cache=False`: parse, and overwrite the cache); `name` starts the cache file's name.  TOML errors
    propagate (a broken shipped file is a bug the tests catch)."""
    path = _cache_path(files, name)
    try:
        cached = json.loads(path.read_text(encoding="utf-8")) if use_cache else None
        if isinstance(cached, list) and len(cached) == len(files) and all(isinstance(d, dict) for d in cached):
            _mark_used(path)
            return cached
    except (OSError, ValueError):
        pass
    import tomllib  # only on a cache miss: importing it costs ~3 ms of every start

    parsed = [tomllib.loads(text) for _, text in files]
    _write(path, json.dumps(parsed))
    _remove_unused(name, keep=path)
    return parsed


def _mark_used(path: Path) -> None:
    """Refresh the file's time, at most once a day (a stat per cached file read), so pruning spares it."""
    try:
        if time.time() - path.stat().st_mtime > _DAY:
            os.utime(path)
    except OSError:
        pass


def _remove_unused(name: str, *, keep: Path) -> None:
    """Delete this kind's cache files that no run has used for _UNUSED_DAYS; silently, like every cache step."""
    cutoff = time.time() - _UNUSED_DAYS * _DAY
    try:
        for old in keep.parent.glob(f"{name}-*.json"):
            if old != keep and old.stat().st_mtime < cutoff:
                old.unlink()
    except OSError:
        pass


def _write(path: Path, text: str) -> None:
    """Atomically (a reader never sees half a file), and silently: the cache is only a speed-up."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile

        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False, suffix=".tmp") as out:
            out.write(text)
        os.replace(out.name, path)
    except OSError:
        pass
