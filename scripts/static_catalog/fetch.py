"""Fetch each release's argument-declaring sources into a small local cache (never installed, never imported).

The cache keeps, per release, a zip of only the Python files the catalog reads (`<engine>-<version>.src.zip`) and
the wheel's name and published sha256 beside it (`.source.json`), so `build.py --check` can run offline once it is
filled.  The sources come from the wheel pip would pick, read member by member over HTTP Range requests
(scripts/wheel_files.py): a vLLM wheel is 200-500 MB, its argument files a few hundred KB.  Only when the server
refuses ranges is the whole wheel downloaded with `pip download` (and deleted once read).  A wheel, not an sdist:
`pip download` of a vLLM sdist prepares its metadata, which runs setup.py and needs torch.

The cache is ~/.cache/logsleuth/static-catalog, or $LOGSLEUTH_STATIC_CATALOG_CACHE when set (an empty directory
there shows what a fresh CI machine pays).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import wheel_files  # noqa: E402

DEFAULT_CACHE = Path(os.environ.get("LOGSLEUTH_STATIC_CATALOG_CACHE")
                     or Path.home() / ".cache" / "logsleuth" / "static-catalog")
OLDEST = {"sglang": (0, 3, 0), "vllm": (0, 6, 0)}
# The sources each engine's CLI flags are declared in (and the dataclasses their defaults come from).
KEPT = {
    "sglang": ("sglang/srt/server_args", "sglang/srt/arg_groups/"),
    "vllm": ("vllm/engine/arg_utils.py", "vllm/entrypoints/", "vllm/config", "vllm/utils"),
}
_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)((?:\.\d+)*)(\.post\d+)?$")


def release_key(version: str) -> tuple[int, ...]:
    match = _RELEASE.match(version)
    if match is None:
        raise ValueError(version)
    extra = [int(part) for part in match[4].split(".")[1:]] or [0]  # vLLM's 0.9.0.1
    post = int(match[5][5:]) + 1 if match[5] else 0
    return (int(match[1]), int(match[2]), int(match[3]), *extra, post)


def published(engine: str) -> list[str]:
    """Every final release of `engine` from the oldest covered one on, oldest first (one `pip index` query)."""
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", engine], check=True, capture_output=True, text=True,
    ).stdout
    line = next(row for row in listing.splitlines() if row.startswith("Available versions:"))
    found = [v.strip() for v in line.partition(":")[2].split(",") if _RELEASE.match(v.strip())]
    return sorted((v for v in found if release_key(v)[:3] >= OLDEST[engine]), key=release_key)


def kept(engine: str, name: str) -> bool:
    return name.endswith(".py") and name.startswith(KEPT[engine])


def cached_sources(engine: str, version: str, cache: Path) -> Path:
    """The release's kept sources as a zip in the cache, reading them from the wheel first when absent."""
    target = cache / f"{engine}-{version}.src.zip"
    if target.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    wheel = wheel_files.release_wheel(engine, version)
    try:
        sources = wheel_files.read_members(wheel.url, lambda name: kept(engine, name))
        record = {"file": wheel.filename, "sha256": wheel.sha256}
    except wheel_files.RangesRefused as refused:
        print(f"{refused}; downloading the whole wheel with pip instead", file=sys.stderr, flush=True)
        sources, record = _downloaded_sources(engine, version)
    partial = target.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(sources):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # fixed, so the zip is reproducible
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, sources[name])
    (cache / f"{engine}-{version}.source.json").write_text(json.dumps(record, sort_keys=True) + "\n", encoding="utf-8")
    partial.replace(target)
    return target


def _downloaded_sources(engine: str, version: str) -> tuple[dict[str, bytes], dict[str, str]]:
    """The kept sources and the source record from the whole wheel, downloaded with pip and deleted once read."""
    with wheel_files.downloaded_wheel(engine, version) as wheel:
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        with zipfile.ZipFile(wheel) as source:
            sources = {name: source.read(name) for name in source.namelist() if kept(engine, name)}
    return sources, {"file": wheel.name, "sha256": digest}


def source_record(engine: str, version: str, cache: Path) -> dict[str, str]:
    return json.loads((cache / f"{engine}-{version}.source.json").read_text(encoding="utf-8"))


if __name__ == "__main__":
    cache = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CACHE
    for engine in ("sglang", "vllm"):
        for version in published(engine):
            cached_sources(engine, version, cache)
            print(f"{engine} {version}", file=sys.stderr, flush=True)
