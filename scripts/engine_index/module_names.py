"""Which indexed SGLang and vLLM releases have each module, and each name a module defines: the facts behind
"`vllm.worker.worker` exists in the indexed vLLM releases 0.5.5 to 0.10.1.1" (reasoning/engine_imports.py).

    python scripts/engine_index/module_names.py           (write logsleuth/facts/engine_modules.json.gz)
    python scripts/engine_index/module_names.py --check   (is the shipped file what this script builds?)

Source: the released wheels on PyPI of the releases the raise-site index reads (build.py: RELEASES), every Python
file under the engine's package, from the same cache (fetch.py; filled by `make engine-index`, or fetched here
where a release is missing).  The engines' git repositories hold the same files, but their snapshots are larger than
a session can fetch, and a wheel is what a user installs.  A module is a file (`vllm/worker/worker.py` is
`vllm.worker.worker`, a package's `__init__.py` the package); its names are what an `import` can take from it: the
classes, functions, assignments and imported names of its top level (the bodies of a top-level `if`, `try` or
`with` included, as CPython binds them there).  A module that defines `__getattr__` or imports `*` can hand out
names no statement shows: it is marked open, and nothing is said of its names.

The file is a range table, compact by construction: per engine the releases in order, and per module the runs of
release indices holding it, then its names grouped by their runs (a name whose runs are the module's is in the
first group).  Runs are written "a-b" (indices into the releases; several runs joined with ","). ~0.6 MB gzipped
for both engines; read only when an import error names an engine module.
"""

from __future__ import annotations

import ast
import gzip
import json
import sys
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build import OUTPUT_DIR, RELEASES, ship_main  # noqa: E402
from fetch import Cache, fetch_release  # noqa: E402

OUTPUT = OUTPUT_DIR / "engine_modules.json.gz"
OPEN = "*"  # the name that marks a module whose names no statement shows (a module __getattr__, a star import)
STAR = "*from:"  # a star import's target as parsed (`*from:.common`), resolved within the release before writing
ENGINES = ("sglang", "vllm")


# Test trees ship in some wheels (sglang.multimodal_gen.test): no program imports them, and they were a quarter of
# the table.
LEFT_OUT_PARTS = {"test", "tests"}


def module_of(path: str) -> str | None:
    """`vllm/worker/worker.py` -> `vllm.worker.worker`; `vllm/__init__.py` -> `vllm` (None: not a module path, or
    a module of a test tree)."""
    if not path.endswith(".py"):
        return None
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if LEFT_OUT_PARTS & set(parts) or not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts)


def top_level_names(source: str) -> list[str]:
    """The names a module's top level binds (OPEN among them when it can hand out others); [] when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return [OPEN]
    names: set[str] = set()
    _bind(tree.body, names)
    return sorted(names)


def _bind(body: Iterable[ast.stmt], names: set[str]) -> None:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(OPEN if node.name == "__getattr__" else node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":  # resolved against the release's other modules (engine_table), else open
                    names.add(f"{STAR}{'.' * node.level}{node.module or ''}")
                else:
                    names.add(alias.asname or alias.name)
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            for part in ("body", "orelse", "finalbody"):
                _bind(getattr(node, part, ()), names)
            for handler in getattr(node, "handlers", ()):
                _bind(handler.body, names)


def _names_of(job: tuple[Path, list[str]]) -> dict[str, list[str]]:
    """A worker's job: the top-level names of a batch of contents, each read from the cache."""
    database, keys = job
    cache = Cache(database.parent, read_only=True)
    return {key: top_level_names(cache.source(key).decode("utf-8", "replace")) for key in keys}


def resolved_stars(modules: dict[str, tuple[list[str], bool]]) -> dict[str, set[str]]:
    """One release's modules -> their names, each `from X import *` replaced by X's public names (those without a
    leading underscore; X's own star imports first).  A star import of a module outside the release stays open."""
    done: dict[str, set[str]] = {}

    def names_of(module: str, seen: frozenset[str]) -> set[str]:
        if module in done:
            return done[module]
        listed, is_package = modules[module]
        found: set[str] = set()
        for name in listed:
            if not name.startswith(STAR):
                found.add(name)
                continue
            target = _star_target(module, is_package, name[len(STAR):])
            if target in modules and target not in seen:
                found |= {n for n in names_of(target, seen | {target}) if not n.startswith("_") and n != OPEN}
            else:
                found.add(OPEN)
        done[module] = found
        return found

    return {module: names_of(module, frozenset({module})) for module in modules}


def _star_target(module: str, is_package: bool, spec: str) -> str:
    """The module a star import names, from the importing module (`.common` in `sglang.srt.utils`, a package)."""
    level = len(spec) - len(spec.lstrip("."))
    if level == 0:
        return spec
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    rest = spec[level:]
    return ".".join([*base, rest] if rest else base)


def runs(indices: Iterable[int]) -> str:
    """Sorted release indices as runs: [0, 1, 2, 5] -> "0-2,5-5"."""
    ordered = sorted(set(indices))
    spans: list[list[int]] = []
    for index in ordered:
        if spans and spans[-1][1] == index - 1:
            spans[-1][1] = index
        else:
            spans.append([index, index])
    return ",".join(f"{a}-{b}" for a, b in spans)


def engine_table(cache: Cache, engine: str, versions: tuple[str, ...]) -> dict[str, object]:
    releases = [fetch_release(engine, version, cache) for version in versions]
    keys = sorted({key for release in releases for key in release.files.values()})
    names: dict[str, list[str]] = {}
    batches = [(cache.path, keys[start:start + 200]) for start in range(0, len(keys), 200)]
    with ProcessPoolExecutor(max_workers=2) as pool:
        for found in pool.map(_names_of, batches):
            names.update(found)
    held: dict[str, set[int]] = {}  # module -> release indices
    named: dict[str, dict[str, set[int]]] = {}  # module -> name -> release indices
    for index, release in enumerate(releases):
        own = {module: (names[key], path.endswith("__init__.py")) for path, key in release.files.items()
               if (module := module_of(path)) is not None}
        for module, found in resolved_stars(own).items():
            held.setdefault(module, set()).add(index)
            for name in found:
                named.setdefault(module, {}).setdefault(name, set()).add(index)
    modules: dict[str, object] = {}
    for module in sorted(held):
        own = runs(held[module])
        groups: dict[str, list[str]] = {}
        for name, indices in sorted(named.get(module, {}).items()):
            groups.setdefault(runs(indices), []).append(name)
        modules[module] = [own, groups.pop(own, []), dict(sorted(groups.items()))]
    return {"releases": list(versions), "modules": modules}


def encoded(table: dict[str, object]) -> bytes:
    text = json.dumps(table, sort_keys=True, separators=(",", ":")).encode()
    return gzip.compress(text, compresslevel=9, mtime=0)


def build(cache: Cache) -> bytes:
    return encoded({
        "how": "scripts/engine_index/module_names.py: each indexed release's Python files, from its wheel on PyPI "
               "(the raise-site index's releases and cache), read with ast",
        "open": OPEN,
        "engines": {engine: engine_table(cache, engine, RELEASES[engine]) for engine in ENGINES},
    })


def main() -> int:
    return ship_main(__doc__ or "", OUTPUT, build, "scripts/engine_index/module_names.py")


if __name__ == "__main__":
    sys.exit(main())
