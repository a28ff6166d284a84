"""The classes each engine's code defines, and those of the packages it runs (transformers, flashinfer, ...): the
names a message like `'ForwardBatch' object has no attribute 'spec_info'` shows of the object that failed.

    python scripts/engine_index/classes.py           (write logsleuth/facts/engine_classes.json.gz)
    python scripts/engine_index/classes.py --check   (is the shipped file what this script builds?)

Read from the same releases and the same files as the raise-site index (build.py: RELEASES, the packages'
pinned versions, INDEXED_PREFIXES), from its cache (fetch.py; filled by `make engine-index`, or fetched here where a
release is missing).  Only the names are kept, per engine, sorted, in a gzip with a fixed time: the check compares
bytes.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build import OUTPUT_DIR, RELEASES, indexed, package_releases, ship_main  # noqa: E402
from fetch import Cache, fetch_release  # noqa: E402

OUTPUT = OUTPUT_DIR / "engine_classes.json.gz"


# A `class` statement at any depth (a class nested in a function or a class counts: its name is what
# `type(obj).__name__` says).  A line scan, not ast: ast over the ~50,000 contents of every indexed release takes
# minutes, this seconds; a `class X` line inside a docstring adds a name no message will show.
CLASS_STATEMENT = re.compile(r"^[ \t]*class[ \t]+([A-Za-z_]\w*)[ \t]*[(:]", re.MULTILINE)


def class_names(source: str) -> set[str]:
    """Every class a module defines."""
    return set(CLASS_STATEMENT.findall(source))


# Classes read from more of a package than the raise-site index reads: transformers' models/ tree defines every
# architecture's config, processor and tokenizer classes (`Qwen2VLConfig`, `PixtralProcessor`), and the engines
# vendor copies of many of them (sglang/srt/configs/, vllm/transformers_utils/configs/).  Without the tree, such a
# name would look like one engine's own class, and a message naming it would decide that engine wrongly.
WHOLE_TREES = {"transformers": "transformers_models"}


def defined_classes(cache: Cache) -> dict[str, list[str]]:
    """Package -> the class names its indexed files define in any indexed release, sorted."""
    every = {**RELEASES, **package_releases()}
    found: dict[str, list[str]] = {}
    parsed: dict[str, set[str]] = {}  # content key -> its classes: a file unchanged between releases is read once

    def classes_of(key: str) -> set[str]:
        if key not in parsed:
            parsed[key] = class_names(cache.source(key).decode("utf-8", "replace"))
        return parsed[key]

    for package, versions in every.items():
        names: set[str] = set()
        for version in versions:
            release = fetch_release(package, version, cache)
            for name, key in release.files.items():
                if indexed(package, name):
                    names |= classes_of(key)
            if package in WHOLE_TREES:
                for key in fetch_release(WHOLE_TREES[package], version, cache).files.values():
                    names |= classes_of(key)
        found[package] = sorted(names)
    return found


def encoded(found: dict[str, list[str]]) -> bytes:
    text = json.dumps(found, sort_keys=True, separators=(",", ":")).encode()
    return gzip.compress(text, compresslevel=9, mtime=0)


def main() -> int:
    return ship_main(__doc__ or "", OUTPUT, lambda cache: encoded(defined_classes(cache)), "scripts/engine_index/classes.py")


if __name__ == "__main__":
    sys.exit(main())
