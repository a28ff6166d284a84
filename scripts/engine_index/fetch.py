"""Each indexed release's Python sources and their raise sites, kept in one local cache (never installed or run).

A vLLM wheel is 200-1000 MB; its Python files are ~14 MB compressed, and from one release to the next about half
of them are unchanged.  So a release is read over HTTP Range requests (scripts/wheel_files.py): its central
directory first, then only the members whose content the cache lacks.  A content is known by its file name, CRC-32
and size, read from the directory before any member is fetched; zipfile checks each CRC as it reads.  Each
distinct content is read with ast once (extract.py), and what it found is kept next to it under the extractor's
own hash, so a rebuild after a change to extract.py reads the sources again but not the network.

The cache is one SQLite file, ~/.cache/logsleuth/engine-index/cache.sqlite ($LOGSLEUTH_ENGINE_INDEX_CACHE
overrides the directory): per release its wheel (name, sha256) and its files' keys; per key the source
(zlib) and its sites.  With it filled, `build.py --check` runs offline.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import zipfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import wheel_files  # noqa: E402

DEFAULT_CACHE = Path(os.environ.get("LOGSLEUTH_ENGINE_INDEX_CACHE")
                     or Path.home() / ".cache" / "logsleuth" / "engine-index")
# The package each indexed distribution's wheel installs: every Python file under it is fetched unless the caller
# narrows it (build.py chooses what it indexes).  The engines, and the packages whose code they run (issue 29 item 5).
PACKAGES = {"sglang": "sglang/", "vllm": "vllm/", "flashinfer": "flashinfer/", "sgl_kernel": "sgl_kernel/",
            "xgrammar": "xgrammar/", "transformers": "transformers/",
            # transformers' per-architecture tree, which the raise-site index leaves out: classes.py reads only
            # the class names it defines.  Its own key, so the cached "transformers" release stays narrowed.
            "transformers_models": "transformers/models/"}
# The name PyPI knows a distribution by, where it is not the package's.
PROJECTS = {"flashinfer": "flashinfer-python", "sgl_kernel": "sgl-kernel", "transformers_models": "transformers"}


@dataclass(frozen=True)
class Release:
    engine: str
    version: str
    wheel: str  # the wheel's file name
    sha256: str  # as PyPI publishes it
    files: dict[str, str]  # member name -> content key


def content_key(info: zipfile.ZipInfo) -> str:
    """A member's content, known before it is read: its name, CRC-32 and size (the name makes two different
    contents with the same CRC and size, a 1 in 2**32 chance per pair, a pair of the same file too)."""
    return f"{info.filename}:{info.CRC:08x}:{info.file_size}"


class Cache:
    """The SQLite file: releases, sources and sites.  One connection per process (build.py's workers read)."""

    def __init__(self, directory: Path, read_only: bool = False) -> None:
        self.path = directory / "cache.sqlite"
        if read_only:  # build.py's workers: they read sources while the main process writes (WAL allows it)
            self.db = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True)
            return
        directory.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(
            "CREATE TABLE IF NOT EXISTS releases (engine TEXT, version TEXT, wheel TEXT, sha256 TEXT, files TEXT,"
            " PRIMARY KEY (engine, version));"
            "CREATE TABLE IF NOT EXISTS sources (key TEXT PRIMARY KEY, source BLOB);"
            "CREATE TABLE IF NOT EXISTS sites (extractor TEXT, key TEXT, sites TEXT, PRIMARY KEY (extractor, key));"
        )

    def release(self, engine: str, version: str) -> Release | None:
        row = self.db.execute("SELECT wheel, sha256, files FROM releases WHERE engine = ? AND version = ?",
                              (engine, version)).fetchone()
        return None if row is None else Release(engine, version, row[0], row[1], json.loads(row[2]))

    def known(self, keys: Iterable[str]) -> set[str]:
        wanted = list(keys)
        found: set[str] = set()
        for start in range(0, len(wanted), 500):  # SQLite's limit on a statement's parameters
            chunk = wanted[start:start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(row[0] for row in self.db.execute(f"SELECT key FROM sources WHERE key IN ({marks})", chunk))
        return found

    def add_release(self, release: Release, sources: dict[str, bytes]) -> None:
        with self.db:
            self.db.executemany("INSERT OR IGNORE INTO sources VALUES (?, ?)",
                                ((key, zlib.compress(data, 6)) for key, data in sources.items()))
            self.db.execute("INSERT OR REPLACE INTO releases VALUES (?, ?, ?, ?, ?)",
                            (release.engine, release.version, release.wheel, release.sha256,
                             json.dumps(release.files, sort_keys=True)))

    def source(self, key: str) -> bytes:
        (blob,) = self.db.execute("SELECT source FROM sources WHERE key = ?", (key,)).fetchone()
        return zlib.decompress(blob)

    def sites(self, extractor: str, keys: Iterable[str]) -> dict[str, str]:
        wanted = list(keys)
        found: dict[str, str] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(self.db.execute(f"SELECT key, sites FROM sites WHERE extractor = ? AND key IN ({marks})",
                                         [extractor, *chunk]))
        return found

    def add_sites(self, extractor: str, found: dict[str, str]) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO sites VALUES (?, ?, ?)",
                                ((extractor, key, text) for key, text in found.items()))


def fetch_release(engine: str, version: str, cache: Cache, wanted: Callable[[str], bool] | None = None) -> Release:
    """The release's Python files in the cache: read from its wheel (only the contents the cache lacks) unless the
    cache has the release already.  `wanted`, when given, narrows the files kept to those it accepts (transformers'
    wheel is mostly models/, which the index leaves out): the cache then holds only those, for this release."""
    cached = cache.release(engine, version)
    if cached is not None:
        return cached
    project = PROJECTS.get(engine, engine)

    def ours(name: str) -> bool:
        return name.startswith(PACKAGES[engine]) and name.endswith(".py") and (wanted is None or wanted(name))

    try:
        wheel = wheel_files.release_wheel(project, version)
    except LookupError:  # a release published as an sdist only (flashinfer-python before 0.5)
        return _fetch_sdist(engine, version, cache, ours)
    files: dict[str, str] = {}

    def missing(entries: list[zipfile.ZipInfo]) -> list[zipfile.ZipInfo]:
        ours_ = [entry for entry in entries if ours(entry.filename)]
        files.update((entry.filename, content_key(entry)) for entry in ours_)
        have = cache.known(files.values())
        return [entry for entry in ours_ if content_key(entry) not in have]

    try:
        contents = wheel_files.read_chosen(wheel.url, missing)
        sha256 = wheel.sha256
    except wheel_files.RangesRefused as refused:
        print(f"{refused}; downloading the whole wheel with pip instead", file=sys.stderr, flush=True)
        with wheel_files.downloaded_wheel(project, version) as path, zipfile.ZipFile(path) as archive:
            sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
            contents = {entry.filename: archive.read(entry) for entry in missing(archive.infolist())}
    release = Release(engine, version, wheel.filename, sha256, files)
    cache.add_release(release, {files[name]: data for name, data in contents.items()})
    return release


def _fetch_sdist(engine: str, version: str, cache: Cache, ours: Callable[[str], bool]) -> Release:
    """A release from its sdist, read whole (a tar has no directory to read ranges by): its files are keyed like a
    wheel's members, by name, CRC-32 and size, so the same content in a later wheel is not read again."""
    sdist = wheel_files.release_sdist(PROJECTS.get(engine, engine), version)
    contents = wheel_files.sdist_members(sdist, ours)
    files = {name: f"{name}:{zlib.crc32(data):08x}:{len(data)}" for name, data in contents.items()}
    release = Release(engine, version, sdist.filename, sdist.sha256, files)
    cache.add_release(release, {files[name]: data for name, data in contents.items()})
    return release
