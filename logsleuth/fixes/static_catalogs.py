"""The static flag catalogs: each release's flags as its source declares them (read with `ast` by
scripts/static_catalog/build.py, shipped as `catalogs/static.json.gz`), for the releases no real parser was run on.

A static catalog proves that a flag exists in a release and, where the source wrote it literally, its choices and
default; it never proves that a value passes the engine's validation.  A value the source computed is recorded as
unknown (`UNKNOWN`); callers read it as "not known" and never as "none".
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from logsleuth import versions

UNKNOWN = "<unknown>"
# Package data next to this module (a path, not importlib.resources: see paths.bundled_patterns_dir).
_FILE = Path(__file__).resolve().parent / "catalogs" / "static.json.gz"


@lru_cache(maxsize=1)
def _document() -> dict[str, Any]:
    try:
        return json.loads(gzip.decompress(_FILE.read_bytes()))
    except (OSError, ValueError):
        return {"flags": [], "releases": {}}


def releases(engine: str) -> tuple[str, ...]:
    """The releases of `engine` with a static catalog, oldest first."""
    return tuple(entry["version"] for entry in _document()["releases"].get(engine, ()))


def release_named(engine: str, version: str | None) -> str | None:
    """The release a version string names exactly (`0.5.9+cu124` is 0.5.9), or None: no nearest-release guess."""
    wanted = versions.version_key(version) if version else None
    if wanted is None:
        return None
    return next((known for known in releases(engine) if versions.version_key(known) == wanted), None)


@lru_cache(maxsize=16)
def flag_records(engine: str, version: str) -> tuple[dict[str, Any], ...] | None:
    """The flag records of exactly that release (as build.py wrote them), or None when it has none."""
    document = _document()
    for entry in document["releases"].get(engine, ()):
        if entry["version"] == version:
            return tuple(document["flags"][number] for number in entry["flags"])
    return None


def source(engine: str, version: str) -> dict[str, str] | None:
    """Which wheel the release's catalog was read from: its file name and sha256."""
    for entry in _document()["releases"].get(engine, ()):
        if entry["version"] == version:
            return dict(entry["source"])
    return None


@lru_cache(maxsize=2)
def _releases_by_flag(engine: str) -> dict[str, tuple[str, ...]]:
    """Every option string of the engine (names, aliases, negations) -> the releases that have it, oldest first."""
    document = _document()
    found: dict[str, list[str]] = {}
    for entry in document["releases"].get(engine, ()):
        names = {name for number in entry["flags"] for record in (document["flags"][number],)
                 for name in (record["name"], *record.get("aliases", ()), *record.get("negations", ()))}
        for name in names:
            found.setdefault(name, []).append(entry["version"])
    return {name: tuple(releases) for name, releases in found.items()}


def releases_with(engine: str, flag: str) -> tuple[str, ...]:
    """The releases whose static catalog has `flag`, oldest first (none: not a flag of any release)."""
    return _releases_by_flag(engine).get(flag, ())


def releases_with_choices(engine: str, flag: str, choices: frozenset[str]) -> tuple[str, ...]:
    """The releases whose static catalog gives `flag` exactly these choices, oldest first: argparse's `invalid
    choice: … (choose from …)` prints the running release's list, which narrows the release a log does not name
    (api.py: the newest of them; a flag's list is often the same for a while)."""
    document = _document()
    found = []
    for entry in document["releases"].get(engine, ()):
        for number in entry["flags"]:
            record = document["flags"][number]
            if record["name"] == flag or flag in record.get("aliases", ()):
                if isinstance(record.get("choices"), list) and frozenset(map(str, record["choices"])) == choices:
                    found.append(entry["version"])
                break
    return tuple(found)


@lru_cache(maxsize=2)
def all_flags(engine: str) -> frozenset[str]:
    """Every flag some release of `engine` has."""
    return frozenset(_releases_by_flag(engine))
