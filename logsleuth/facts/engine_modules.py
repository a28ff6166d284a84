"""Which indexed SGLang and vLLM releases have a module, and a name a module defines (engine_modules.json.gz,
written by scripts/engine_index/module_names.py from the released wheels the raise-site index reads).

Programs around the engines (RL trainers, evaluation harnesses, plugins, wrappers) import the engines' internal
modules, which move and vanish between releases: `from vllm.sampling_params import GuidedDecodingParams` works on
the releases that define it and raises ImportError on the others.  This table says which those are, so a failing
import is read against releases, not guessed: in some indexed releases (the program was written for those), in
every one (the release is not the cause: the `vllm` imported is not a whole installed release), or in none (a
fork, a development build, or a name a plugin adds at run time).

The releases are those the index reads, not every release published: a name's first and last indexed release
bound where it appeared and went, to within the releases between two indexed ones.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

ENGINES = ("sglang", "vllm")


@dataclass(frozen=True)
class Presence:
    """Which indexed releases of an engine have a module or a module's name."""

    engine: str
    what: str  # `vllm.worker` or `vllm.sampling_params.GuidedDecodingParams`
    having: tuple[str, ...]  # the indexed releases that have it, oldest first
    indexed: tuple[str, ...]  # every indexed release, oldest first
    # The module hands out names no statement shows (a module __getattr__, a star import) in some releases that lack
    # the name as a statement: there the name may exist all the same.
    open_in: tuple[str, ...] = ()

    @property
    def in_every(self) -> bool:
        return set(self.having) | set(self.open_in) >= set(self.indexed)

    @property
    def in_none(self) -> bool:
        return not self.having and not self.open_in

    def has(self, version: str) -> bool | None:
        """Whether an indexed release has it (None: the release is not indexed, or its module is open)."""
        if version not in self.indexed or version in self.open_in:
            return None
        return version in self.having

    def spans(self) -> str:
        """The indexed releases that have it, as runs: `0.5.5 to 0.11.2`, `0.13.0 to 0.34.0, 0.5.5`."""
        return spans_of(self.having, self.indexed)

    def lacking(self) -> str:
        """The indexed releases that lack it (and whose module shows every name), as runs."""
        missing = tuple(v for v in self.indexed if v not in self.having and v not in self.open_in)
        return spans_of(missing, self.indexed)


def spans_of(versions: tuple[str, ...], indexed: tuple[str, ...], open_ended: bool = False) -> str:
    """Some of the indexed releases as runs of consecutive indexed releases: `0.5.5 to 0.11.2, 0.14.0`.

    `open_ended`: a run reaching the newest indexed release is written `0.8.0 and later` (a catalog's runs, where the
    newest release stands for the ones after it until the catalogs are regenerated)."""
    chosen = set(versions)
    runs: list[list[str]] = []
    previous_in = False
    for version in indexed:
        if version in chosen:
            if previous_in:
                runs[-1][1] = version
            else:
                runs.append([version, version])
        previous_in = version in chosen
    newest = indexed[-1] if indexed else None
    return ", ".join(
        f"{first} and later" if open_ended and last == newest else first if first == last else f"{first} to {last}"
        for first, last in runs
    )


def gzipped_table(name: str) -> dict[str, Any]:
    """A facts file of scripts/engine_index/ (gzipped JSON in logsleuth/facts/), read."""
    data = (Path(__file__).parent / name).read_bytes()
    table: dict[str, Any] = json.loads(gzip.decompress(data))
    return table


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return gzipped_table("engine_modules.json.gz")


def release_indices(runs: str) -> set[int]:
    """Runs of release indices as the index writes them ("0-2,5-5") -> {0, 1, 2, 5}."""
    return _indices(runs)


def _indices(runs: str) -> set[int]:
    found: set[int] = set()
    for run in filter(None, runs.split(",")):
        first, last = run.split("-")
        found.update(range(int(first), int(last) + 1))
    return found


def _versions(indices: set[int], releases: list[str]) -> tuple[str, ...]:
    return tuple(releases[i] for i in sorted(indices))


def module_presence(engine: str, module: str) -> Presence | None:
    """The indexed releases that have the module (None: not the engine's module path, or an unknown engine)."""
    found = _engine(engine)
    if found is None or not module.startswith(f"{engine}."):
        return None
    releases, modules = found
    row = modules.get(module)
    having = _versions(_indices(row[0]) if row else _namespace_package(modules, module), releases)
    return Presence(engine, module, having, tuple(releases))


def _namespace_package(modules: dict[str, Any], package: str) -> set[int]:
    """The releases in which `package` is a directory without __init__.py (a namespace package, importable since
    Python 3.3): those having a module below it.  The index lists files, so such a package has no row of its own
    (`sglang.srt.weight_sync` in SGLang: only its `utils` and `tensor_bucket`; 129 SGLang and 11 vLLM directories)."""
    below = f"{package}."
    found: set[int] = set()
    for name, row in modules.items():
        if name.startswith(below):
            found |= _indices(row[0])
    return found


def module_names(engine: str) -> tuple[str, ...]:
    """Every module of the engine that some indexed release has (() for an unknown engine)."""
    found = _engine(engine)
    return tuple(found[1]) if found is not None else ()


def name_presence(engine: str, module: str, name: str) -> Presence | None:
    """The indexed releases in which `from module import name` finds the name: the module defines it, or the name is
    a submodule (None: not the engine's module, or an unknown engine)."""
    found = _engine(engine)
    if found is None or (module != engine and not module.startswith(f"{engine}.")):
        return None
    releases, modules = found
    row = modules.get(module)
    if row is None:  # no __init__.py: a namespace package gives only its submodules
        submodule = modules.get(f"{module}.{name}")
        below = _indices(submodule[0]) if submodule else _namespace_package(modules, f"{module}.{name}")
        return Presence(engine, f"{module}.{name}", _versions(below, releases), tuple(releases))
    own, plain, grouped = row
    indices: set[int] = set(_indices(own)) if name in plain else set()
    opened: set[int] = set(_indices(own)) if _table()["open"] in plain else set()
    for runs, names in grouped.items():
        if name in names:
            indices |= _indices(runs)
        if _table()["open"] in names:
            opened |= _indices(runs)
    submodule = modules.get(f"{module}.{name}")
    if submodule is not None:
        indices |= _indices(submodule[0])
    return Presence(engine, f"{module}.{name}", _versions(indices, releases), tuple(releases),
                    _versions(opened - indices, releases))


def _engine(engine: str) -> tuple[list[str], dict[str, Any]] | None:
    if engine not in ENGINES:
        return None
    entry = _table()["engines"].get(engine)
    return (entry["releases"], entry["modules"]) if entry else None


# A module path as a frame shows it with the package's directory cut off (`.../srt/managers/scheduler.py`,
# `…/model_executor/layers/quantization/fp8.py`): its last parts only.  Two directories and the file at least: one
# directory and a file (`layers/linear.py`, `models/llama.py`) is in both engines' trees and in many programs'.
MIN_TAIL_PARTS = 3


@lru_cache(maxsize=1)
def _engines_by_tail() -> dict[tuple[str, ...], frozenset[str]]:
    """Every tail of MIN_TAIL_PARTS parts or more of an indexed module's dotted name, below the package itself
    (`("srt", "managers", "scheduler")`), -> the engines having a module that ends so."""
    found: dict[tuple[str, ...], set[str]] = {}
    for engine in ENGINES:
        entry = _table()["engines"].get(engine)
        for module in entry["modules"] if entry else ():
            parts = tuple(module.split("."))[1:]
            for start in range(len(parts) - MIN_TAIL_PARTS + 1):
                found.setdefault(parts[start:], set()).add(engine)
    return {tail: frozenset(engines) for tail, engines in found.items()}


def engines_with_module_tail(path: str) -> frozenset[str]:
    """The engines whose indexed releases have a module whose path ends with `path` (`srt/managers/scheduler.py`,
    a package's `layers/quantization/__init__.py`), for a path of MIN_TAIL_PARTS parts or more; else none."""
    if not path.endswith(".py"):
        return frozenset()
    parts = tuple(path.removesuffix(".py").removesuffix("/__init__").split("/"))  # a package's module has no `__init__`
    if len(parts) < MIN_TAIL_PARTS or not all(part.isidentifier() for part in parts):
        return frozenset()
    return _engines_by_tail().get(parts, frozenset())
