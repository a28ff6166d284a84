"""Fetch each release's argument-declaring sources into a small local cache, with pip (never installed, never
imported).

The cache keeps, per release, a zip of only the Python files the catalog reads (`<engine>-<version>.src.zip`) and
the wheel's name and sha256 beside it (`.source.json`), so `build.py --check` can run offline once it is filled.
vLLM is fetched as a wheel, not an sdist: `pip download` of a vLLM sdist prepares its metadata, which runs
setup.py and needs torch in a build environment; the wheel (~200-400 MB) downloads fast and is deleted as soon as
its few argument files are copied out.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

DEFAULT_CACHE = Path.home() / ".cache" / "logsleuth" / "static-catalog"
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


def cached_sources(engine: str, version: str, cache: Path) -> Path:
    """The release's kept sources as a zip in the cache, downloading the wheel first when absent."""
    target = cache / f"{engine}-{version}.src.zip"
    if target.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="logsleuth-static-catalog-") as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--quiet",
             f"{engine}=={version}", "-d", tmp],
            check=True,
        )
        (wheel,) = Path(tmp).glob("*.whl")
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        partial = target.with_suffix(".partial")
        with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as kept:
            for name in sorted(source.namelist()):
                if name.endswith(".py") and name.startswith(KEPT[engine]):
                    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                    info.compress_type = zipfile.ZIP_DEFLATED
                    kept.writestr(info, source.read(name))
        (cache / f"{engine}-{version}.source.json").write_text(
            json.dumps({"file": wheel.name, "sha256": digest}, sort_keys=True) + "\n", encoding="utf-8")
        partial.replace(target)
    return target


def source_record(engine: str, version: str, cache: Path) -> dict[str, str]:
    return json.loads((cache / f"{engine}-{version}.source.json").read_text(encoding="utf-8"))


if __name__ == "__main__":
    cache = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CACHE
    for engine in ("sglang", "vllm"):
        for version in published(engine):
            cached_sources(engine, version, cache)
            print(f"{engine} {version}", file=sys.stderr, flush=True)
