"""Build logsleuth/fixes/catalogs/static.json.gz: the launch flags of every SGLang release from 0.3.0 and every
vLLM release from 0.6.0, read from each release's source with `ast` (extract.py), never installed or imported.

    python scripts/static_catalog/build.py            (make static-catalogs)
    python scripts/static_catalog/build.py --check    (is the shipped file what this script builds?)

The releases are those PyPI lists (one `pip index versions` per engine); --check rebuilds the releases the
shipped file names, so a new upstream release does not fail it.  Each release's sources come from its wheel
(fetch.py: only the argument files, read over HTTP Range requests), cached under ~/.cache/logsleuth/static-catalog
(or --cache, or $LOGSLEUTH_STATIC_CATALOG_CACHE), so a check with a filled cache runs offline.
The file is one JSON document, gzip'd deterministically: a table of distinct flag records, and per release the
indexes of its flags, its wheel's name and sha256, and what the extractor could not follow.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from extract import UNKNOWN, extract  # noqa: E402
from fetch import DEFAULT_CACHE, cached_sources, published, release_key, source_record  # noqa: E402
from wheel_files import TRANSFER  # noqa: E402  (fetch.py put scripts/ on the path)

REPO = Path(__file__).resolve().parents[2]
OUTPUT = REPO / "logsleuth" / "fixes" / "catalogs" / "static.json.gz"
ENGINES = ("sglang", "vllm")


def release_flags(engine: str, version: str, cache: Path) -> tuple[list[dict[str, Any]], list[str]]:
    with zipfile.ZipFile(cached_sources(engine, version, cache)) as archive:
        files = {name: archive.read(name).decode("utf-8", "replace") for name in archive.namelist()}
    return extract(engine, files)


def build(releases: dict[str, list[str]], cache: Path) -> dict[str, Any]:
    table: dict[str, int] = {}
    records: list[dict[str, Any]] = []
    out: dict[str, list[dict[str, Any]]] = {}
    per_release: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for engine in ENGINES:
        for version in releases.get(engine, []):
            flags, unresolved = release_flags(engine, version, cache)
            keys = [json.dumps(flag, sort_keys=True) for flag in flags]
            per_release[engine, version] = keys, unresolved
            for key in keys:
                table.setdefault(key, 0)
            print(f"{engine} {version}: {len(flags)} flags" + (f", {len(unresolved)} unresolved" if unresolved else ""),
                  file=sys.stderr)
    for number, key in enumerate(sorted(table)):
        table[key] = number
        records.append(json.loads(key))
    for engine in ENGINES:
        for version in releases.get(engine, []):
            keys, unresolved = per_release[engine, version]
            out.setdefault(engine, []).append({
                "version": version, "source": source_record(engine, version, cache),
                "flags": sorted(table[key] for key in keys), "unresolved": unresolved,
            })
    return {
        "schema": 1, "unknown": UNKNOWN,
        "how": "scripts/static_catalog/build.py: each release's wheel from PyPI (pip download --no-deps), read with ast",
        "flags": records, "releases": out,
    }


def encoded(document: dict[str, Any]) -> bytes:
    text = json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return gzip.compress(text, compresslevel=9, mtime=0)


def shipped_releases() -> dict[str, list[str]]:
    document = json.loads(gzip.decompress(OUTPUT.read_bytes()))
    return {engine: [entry["version"] for entry in entries] for engine, entries in document["releases"].items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the shipped file differs")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"release sources (default {DEFAULT_CACHE})")
    args = parser.parse_args()
    try:
        return run(args.check, args.cache)
    finally:
        if TRANSFER.requests:  # releases missing from the cache were read from PyPI
            print(f"read {TRANSFER.bytes / 1e6:.1f} MB from PyPI in {TRANSFER.requests} requests", file=sys.stderr)


def run(check: bool, cache: Path) -> int:
    if check:
        if not OUTPUT.exists():
            print(f"{OUTPUT} is missing: run make static-catalogs", file=sys.stderr)
            return 1
        same = encoded(build(shipped_releases(), cache)) == OUTPUT.read_bytes()
        print("the shipped static catalogs are up to date" if same else f"{OUTPUT} differs: run make static-catalogs",
              file=sys.stderr)
        return 0 if same else 1
    releases = {engine: sorted(published(engine), key=release_key) for engine in ENGINES}
    OUTPUT.write_bytes(encoded(build(releases, cache)))
    print(f"wrote {OUTPUT} ({OUTPUT.stat().st_size >> 10} KiB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
