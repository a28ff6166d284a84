"""raise_sites-package_messages.zip: the raise, assert and build message templates of the packages the engines run
(flashinfer, sgl-kernel, xgrammar, transformers: their raise_sites-<package>.zip), filed by word as the engines' are
(`messages/<N>.json`, `openings/<N>.json`; logsleuth/facts/engine_messages.py), so that a message a paste printed
without its type (a wrapper's `An error occurred: {e}`, a sentence quoting transformers' `The checkpoint you are trying
to load has model type …`) is found and typed from the statement that raises it.  They are no evidence of either
engine: any program that runs the package raises them.  One small zip for all four, so a lookup that finds nothing
in the engines' shards opens no package's own index (those are read only for a frame in the package).

It is written from the package zips' per-file members (the (type, message, file, function) of each site build.py read from the releases),
so no wheel is fetched; build.py calls it after writing them.

    python scripts/engine_index/package_messages.py            (write it)
    python scripts/engine_index/package_messages.py --check    (is the shipped zip what this script writes?)
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from logsleuth.facts.engine_messages import OPENINGS, RAISED, filed_openings, filed_templates  # noqa: E402
from logsleuth.facts.raise_sites import OTHER_PACKAGES, PACKAGE_MESSAGES  # noqa: E402


def package_pairs(path: Path) -> set[tuple[str, str, str, str]]:
    """(type, message template, file, function) of each raise, assert and build site a package zip holds (a member
    is its source file's sites: `transformers/configuration_utils.py.json`)."""
    with zipfile.ZipFile(path) as archive:
        return {(site["type"], site["message"], name.removesuffix(".json"), site["function"])
                for name in archive.namelist() if name != "index.json" for site in json.loads(archive.read(name))
                if site.get("kind") != "log" and isinstance(site.get("type"), str) and isinstance(site.get("message"), str)}


def _member(archive: zipfile.ZipFile, name: str, data: object) -> None:
    """As build.py writes a member: fixed time, sorted compact JSON, deflated at level 9."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, json.dumps(data, sort_keys=True, separators=(",", ":")), compresslevel=9)


def built(directory: Path) -> bytes:
    """The message zip for the package zips in `directory`."""
    pairs: set[tuple[str, str, str, str]] = set()
    for package in OTHER_PACKAGES:
        pairs |= package_pairs(directory / f"raise_sites-{package}.zip")
    ordered = sorted(pairs)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        shard_sets: tuple[tuple[str, dict[int, Any]], ...] = ((RAISED, filed_templates(ordered)), (OPENINGS, filed_openings(ordered)))
        for members, shards in shard_sets:
            for number, shard in shards.items():
                _member(archive, f"{members}/{number}.json", shard)
        _member(archive, "index.json", {
            "schema": 1, "packages": sorted(OTHER_PACKAGES),
            "how": "scripts/engine_index/package_messages.py: the raise, assert and build templates of raise_sites-<package>.zip",
        })
    return out.getvalue()


def write(directory: Path) -> Path:
    path = directory / f"raise_sites-{PACKAGE_MESSAGES}.zip"
    path.write_bytes(built(directory))
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when the shipped zip differs")
    args = parser.parse_args()
    directory = REPO / "logsleuth" / "facts"
    if not args.check:
        write(directory)
        return 0
    if (directory / f"raise_sites-{PACKAGE_MESSAGES}.zip").read_bytes() != built(directory):
        print(f"stale: raise_sites-{PACKAGE_MESSAGES}.zip (python scripts/engine_index/package_messages.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
