"""Build logsleuth/facts/raise_sites.zip: where each indexed SGLang release raises, asserts or logs an error,
under which condition, reading which settings, and in which of the indexed releases each check exists.

    python scripts/engine_index/build.py            (make engine-index)
    python scripts/engine_index/build.py --check    (is the shipped index what this script builds?)

Each release's wheel is fetched with `pip download --no-deps` (never installed, never imported) and its Python
files read with `ast` (extract.py).  A site is the same check in two releases when its file, function, kind,
type, message, condition and guards are the same; its line numbers may differ, and are kept per release.
The output is a zip with one JSON member per source file (`sglang/srt/server_args.py.json`), so a lookup reads
only the file its frame names; and `index.json`: the releases, in order.  A site's lines are kept as runs of
consecutive releases with the same lines: [first release, last release, first line, last line], release indexes
into that list.  Deterministic (sorted, fixed member times), so --check can compare contents.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from extract import Site, sites  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
OUTPUT = REPO / "logsleuth" / "facts" / "raise_sites.zip"
# The releases indexed: those with a flag catalog (logsleuth/fixes/catalogs/), 0.4.6.post2 (a real log's frames
# match it, issue 29), and every 0.5 release that is not a post-release.  vLLM's wheels are ~400 MB each:
# not yet indexed (see docs/how-it-reasons.md, "The engine's own code").
RELEASES = {
    "sglang": (
        "0.4.6.post2", "0.4.10.post2", "0.5.1", "0.5.2", "0.5.3", "0.5.4", "0.5.5", "0.5.6", "0.5.7", "0.5.8", "0.5.9",
        "0.5.10", "0.5.11", "0.5.12", "0.5.13", "0.5.14", "0.5.15", "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20",
        "0.5.21", "0.5.22", "0.5.23",
    ),
}
# Only the server's code: the frontend language and the benchmarks raise nothing a launch meets.
INDEXED_PREFIXES = {"sglang": ("sglang/srt/", "sglang/launch_server.py")}


def wheel_of(engine: str, version: str, into: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--quiet",
         f"{engine}=={version}", "-d", str(into)],
        check=True,
    )
    (wheel,) = into.glob(f"{engine}-{version}-*.whl")
    return wheel


def release_sites(engine: str, wheel: Path) -> list[Site]:
    found: list[Site] = []
    with zipfile.ZipFile(wheel) as archive:
        for name in sorted(archive.namelist()):
            if name.endswith(".py") and name.startswith(INDEXED_PREFIXES[engine]):
                found.extend(sites(archive.read(name).decode("utf-8", "replace"), name))
    return found


def merged(versions: tuple[str, ...], per_release: dict[str, list[Site]]) -> dict[str, list[dict[str, object]]]:
    """Source file -> one entry per check, with its lines in each release that holds it."""
    entries: dict[tuple[str, ...], dict[str, object]] = {}
    lines_of: dict[tuple[str, ...], dict[int, tuple[int, int]]] = {}
    for number, version in enumerate(versions):
        for site in per_release[version]:
            key = site.identity()
            entries.setdefault(key, {
                "function": site.function, "kind": site.kind, "type": site.type, "message": site.message,
                "condition": site.condition, "guards": list(site.guards), "fields": list(site.fields),
                "text": list(site.text),
            })
            lines_of.setdefault(key, {})[number] = (site.first_line, site.last_line)
    by_file: dict[str, list[dict[str, object]]] = {}
    for key, entry in entries.items():
        entry["lines"] = _runs(lines_of[key])
        by_file.setdefault(key[0], []).append(entry)
    for file_entries in by_file.values():
        file_entries.sort(key=lambda e: json.dumps(e, sort_keys=True))
    return by_file


def _runs(lines: dict[int, tuple[int, int]]) -> list[list[int]]:
    """Consecutive releases with the same lines, as [first, last, first line, last line]."""
    runs: list[list[int]] = []
    for number in sorted(lines):
        first, last = lines[number]
        if runs and runs[-1][1] == number - 1 and runs[-1][2:] == [first, last]:
            runs[-1][1] = number
        else:
            runs.append([number, number, first, last])
    return runs


def _member(archive: zipfile.ZipFile, name: str, data: object) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, json.dumps(data, sort_keys=True, separators=(",", ":")), compresslevel=9)


def build(cache: Path, output: Path) -> None:
    with zipfile.ZipFile(output, "w") as archive:
        engines = {}
        for engine, versions in RELEASES.items():
            per_release = {}
            for version in versions:
                wheel = next(cache.glob(f"{engine}-{version}-*.whl"), None) or wheel_of(engine, version, cache)
                per_release[version] = release_sites(engine, wheel)
                print(f"{engine} {version}: {len(per_release[version])} sites", file=sys.stderr)
            for file, entries in sorted(merged(versions, per_release).items()):
                _member(archive, f"{file}.json", entries)
            engines[engine] = list(versions)
        _member(archive, "index.json", {
            "schema": 1, "releases": engines,
            "how": "scripts/engine_index/build.py: each release's wheel from PyPI (pip download --no-deps), read with ast",
        })


def contents(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the shipped index differs")
    parser.add_argument("--cache", type=Path, help="keep the wheels here (default: a temporary directory)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="logsleuth-engine-index-") as tmp:
        cache = args.cache or Path(tmp)
        cache.mkdir(parents=True, exist_ok=True)
        built = Path(tmp) / "raise_sites.zip"
        build(cache, built)
        if args.check:
            same = OUTPUT.exists() and contents(OUTPUT) == contents(built)
            print("the shipped index is up to date" if same else f"{OUTPUT} differs: run make engine-index",
                  file=sys.stderr)
            return 0 if same else 1
        OUTPUT.write_bytes(built.read_bytes())
    print(f"wrote {OUTPUT} ({OUTPUT.stat().st_size >> 10} KiB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
