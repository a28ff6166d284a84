"""The parts of vLLM that SGLang's code imports, read from every indexed SGLang release: the source of
`logsleuth.ingest.engine_evidence.SGLANG_RUNS_OF_VLLM` (a path into one of them outside a frame is no evidence that
vLLM ran: SGLang runs that code too).

    python scripts/engine_index/cross_imports.py           (print each part with the releases that import it)
    python scripts/engine_index/cross_imports.py --check   (exit 1 when a release imports a part the table lacks)

A part is the first name under `vllm` in an import statement (`from vllm.distributed.parallel_state import …` is
`distributed`, `from vllm import _custom_ops` is `_custom_ops`, `import vllm` is `__init__`).  A line scan over the
release's files in the engine index's cache (fetch.py; filled by `make engine-index`), as classes.py does.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from build import RELEASES  # noqa: E402
from fetch import DEFAULT_CACHE, Cache, fetch_release  # noqa: E402

from logsleuth.ingest.engine_evidence import SGLANG_RUNS_OF_VLLM  # noqa: E402

# `from vllm.a.b import x`, `from vllm import x, y as z`, `import vllm.a`, `import vllm`, at any indentation (an
# import inside a function runs when it is called).
FROM_VLLM = re.compile(r"^[ \t]*from[ \t]+vllm(?:\.(?P<part>\w+)[\w.]*)?[ \t]+import[ \t]+\(?(?P<names>[^)\n#]*)", re.MULTILINE)
IMPORT_VLLM = re.compile(r"^[ \t]*import[ \t]+vllm(?:\.(?P<part>\w+))?\b", re.MULTILINE)


def parts_imported(source: str) -> set[str]:
    """The parts of vLLM a module imports (see the module's docstring)."""
    parts = {m["part"] or "__init__" for m in IMPORT_VLLM.finditer(source)}
    for m in FROM_VLLM.finditer(source):
        if m["part"]:
            parts.add(m["part"])
        else:  # `from vllm import _custom_ops as ops`: each name is a part (a module) or a name of vllm/__init__
            parts.update(name.split()[0] if name.split()[0].startswith("_") else "__init__"
                         for name in m["names"].split(",") if name.strip())
    return parts


def sglang_imports_of_vllm(cache: Cache) -> dict[str, list[str]]:
    """Part -> the indexed SGLang releases whose code imports it."""
    found: dict[str, list[str]] = defaultdict(list)
    parsed: dict[str, set[str]] = {}  # content key -> its parts: a file unchanged between releases is read once
    for version in RELEASES["sglang"]:
        release = fetch_release("sglang", version, cache)
        parts: set[str] = set()
        for name, key in release.files.items():
            if not name.endswith(".py"):
                continue
            if key not in parsed:
                source = cache.source(key).decode("utf-8", "replace")
                parsed[key] = parts_imported(source) if "vllm" in source else set()
            parts |= parsed[key]
        for part in parts:
            found[part].append(version)
    return dict(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a release imports a part the table lacks")
    args = parser.parse_args()
    found = sglang_imports_of_vllm(Cache(DEFAULT_CACHE))
    missing = sorted(set(found) - SGLANG_RUNS_OF_VLLM)
    if args.check:
        if missing:
            print(f"engine_evidence.SGLANG_RUNS_OF_VLLM lacks {missing}, which SGLang imports "
                  f"({', '.join(f'{part}: {found[part][0]}' for part in missing)})", file=sys.stderr)
            return 1
        return 0
    for part, versions in sorted(found.items()):
        print(f"{part:20} {len(versions):3} releases, {versions[0]} .. {versions[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
