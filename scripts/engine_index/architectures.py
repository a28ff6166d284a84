"""Which indexed SGLang and vLLM releases register each model architecture: the facts behind "Qwen3ForCausalLM is
registered in the indexed vLLM releases 0.8.5.post1 to 0.34.0, not in 0.7.3" (reasoning/architecture_support.py).

    python scripts/engine_index/architectures.py           (write logsleuth/facts/engine_architectures.json.gz)
    python scripts/engine_index/architectures.py --check   (is the shipped file what this script builds?)

Source: the released wheels of the releases the raise-site index reads (build.py: RELEASES), from the same cache
(fetch.py), read with ast, never imported.  An architecture is the name config.json's "architectures" entry gives and
the engine's model registry looks up:
- vLLM: the keys of the registry's dict literals whose values are `("module", "Class")` pairs
  (vllm/model_executor/models/registry.py from 0.6; vllm/model_executor/models/__init__.py before it).  The
  registry's other dicts (previously supported models, with the release that dropped them) hold no such pairs.
- SGLang: the classes each module under sglang/srt/models/ names as its `EntryClass` (one class or a list of them):
  sglang/srt/models/registry.py import_model_classes keys the registry by each entry class's __name__.
- vLLM from 0.10 also serves an architecture its registry lacks by converting a registered one with another suffix
  (`Qwen2ForSequenceClassification` from `Qwen2ForCausalLM`): the suffixes are its model config's
  `_SUFFIX_TO_DEFAULTS` (vllm/config/__init__.py, later vllm/config/model.py), kept per release.
A plugin or a model's own code can register more at run time; the table says what the release itself ships.
And the model types transformers' AutoConfig knows (CONFIG_MAPPING_NAMES in transformers/models/auto/
configuration_auto.py, from 5.x generated into auto_mappings.py beside it; its `__getitem__` raises KeyError for any
other) for each transformers version the index reads
(build.py: the versions the engine releases pin with `==`, and the newest ones): an engine reads a checkpoint's
config.json through it unless the engine registers the model type itself.

The file: per engine the releases in order, per architecture the runs of release indices registering it, written
"a-b" (indices into the releases; several runs joined with ","), and the suffix lists with the runs converting them.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build import OUTPUT_DIR, RELEASES, indexed, package_releases, ship_main  # noqa: E402
from fetch import Cache, fetch_release  # noqa: E402
from module_names import encoded, runs  # noqa: E402

OUTPUT = OUTPUT_DIR / "engine_architectures.json.gz"
ENGINES = ("sglang", "vllm")
VLLM_REGISTRIES = ("vllm/model_executor/models/registry.py", "vllm/model_executor/models/__init__.py")
SGLANG_MODELS = "sglang/srt/models/"
VLLM_CONFIG = "vllm/config/"
SUFFIXES_NAME = "_SUFFIX_TO_DEFAULTS"
TRANSFORMERS_MAPPINGS = ("transformers/models/auto/configuration_auto.py", "transformers/models/auto/auto_mappings.py")
MODEL_TYPES_NAME = "CONFIG_MAPPING_NAMES"


def vllm_architectures(source: str) -> set[str]:
    """The keys of the module's top-level dict literals that map an architecture to a (module, class) pair."""
    found: set[str] = set()
    for statement in ast.parse(source).body:
        value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(value, ast.Dict):
            continue
        for key, item in zip(value.keys, value.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and _module_class_pair(item):
                found.add(key.value)
    return found


def _module_class_pair(node: ast.expr) -> bool:
    return (isinstance(node, ast.Tuple) and len(node.elts) >= 2
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts[:2]))


def sglang_entry_classes(source: str) -> set[str]:
    """The classes a model module names as its EntryClass (`EntryClass = X` or `EntryClass = [X, Y]`)."""
    found: set[str] = set()
    for statement in ast.parse(source).body:
        if not (isinstance(statement, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "EntryClass" for t in statement.targets)):
            continue
        value = statement.value
        entries = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        found.update(entry.id for entry in entries if isinstance(entry, ast.Name))
    return found


def vllm_suffixes(source: str) -> list[str]:
    """The architecture suffixes vLLM's model config converts (`_SUFFIX_TO_DEFAULTS`, from 0.10): an architecture
    the registry lacks, `Qwen2ForSequenceClassification`, is served by the registered one with another of these
    suffixes, `Qwen2ForCausalLM` (registry.py _normalize_arch), converted to the suffix's task."""
    for statement in ast.parse(source).body:
        target = statement.targets[0] if isinstance(statement, ast.Assign) else getattr(statement, "target", None)
        value = getattr(statement, "value", None)
        if isinstance(target, ast.Name) and target.id == SUFFIXES_NAME and isinstance(value, ast.List):
            return [item.elts[0].value for item in value.elts
                    if isinstance(item, ast.Tuple) and item.elts and isinstance(item.elts[0], ast.Constant)
                    and isinstance(item.elts[0].value, str)]
    return []


def release_architectures(cache: Cache, engine: str, version: str) -> tuple[set[str], list[str]]:
    """The architectures the release's registry names, and the suffixes it converts between (vLLM from 0.10)."""
    release = fetch_release(engine, version, cache)
    found: set[str] = set()
    suffixes: list[str] = []
    for path, key in release.files.items():
        if engine == "vllm" and path in VLLM_REGISTRIES:
            found |= vllm_architectures(cache.source(key).decode("utf-8-sig"))
        elif engine == "vllm" and path.startswith(VLLM_CONFIG) and path.endswith(".py"):
            source = cache.source(key).decode("utf-8-sig")
            if SUFFIXES_NAME in source:
                suffixes = suffixes or vllm_suffixes(source)
        elif engine == "sglang" and path.startswith(SGLANG_MODELS) and path.endswith(".py"):
            found |= sglang_entry_classes(cache.source(key).decode("utf-8-sig"))
    return found, suffixes


def engine_table(cache: Cache, engine: str, versions: tuple[str, ...]) -> dict[str, object]:
    held: dict[str, set[int]] = {}
    converting: dict[tuple[str, ...], set[int]] = {}
    for index, version in enumerate(versions):
        architectures, suffixes = release_architectures(cache, engine, version)
        for architecture in architectures:
            held.setdefault(architecture, set()).add(index)
        if suffixes:
            converting.setdefault(tuple(suffixes), set()).add(index)
    return {"releases": list(versions), "architectures": {name: runs(held[name]) for name in sorted(held)},
            "suffixes": sorted([runs(indices), list(suffixes)] for suffixes, indices in converting.items())}


def transformers_model_types(source: str) -> set[str]:
    """The model types transformers' AutoConfig knows: CONFIG_MAPPING_NAMES's keys, as `("llama", "LlamaConfig")`
    pairs in an OrderedDict or a dict literal (5.x adds to it with `**{...}`)."""
    found: set[str] = set()
    for statement in ast.parse(source).body:
        if not _binds_model_types(statement):
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Tuple) and len(node.elts) == 2 and all(_is_text(e) for e in node.elts):
                found.add(node.elts[0].value)  # type: ignore[attr-defined]
            elif isinstance(node, ast.Dict):
                found.update(key.value for key in node.keys if key is not None and _is_text(key))  # type: ignore[attr-defined]
    return found


def _binds_model_types(statement: ast.stmt) -> bool:
    """`CONFIG_MAPPING_NAMES = …` or `CONFIG_MAPPING_NAMES.update(…)` (5.x: the generated auto_mappings.py holds the
    mapping, configuration_auto.py imports it and updates it)."""
    if isinstance(statement, ast.Assign | ast.AnnAssign):
        target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
        return isinstance(target, ast.Name) and target.id == MODEL_TYPES_NAME
    call = statement.value if isinstance(statement, ast.Expr) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "update"
            and isinstance(call.func.value, ast.Name) and call.func.value.id == MODEL_TYPES_NAME)


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def transformers_table(cache: Cache) -> dict[str, object]:
    """Per indexed transformers version (the versions the engine releases pin, build.py), the model types it knows."""
    versions = package_releases()["transformers"]
    held: dict[str, set[int]] = {}
    for index, version in enumerate(versions):
        release = fetch_release("transformers", version, cache, lambda name: indexed("transformers", name))
        for path in TRANSFORMERS_MAPPINGS:
            key = release.files.get(path)
            for model_type in transformers_model_types(cache.source(key).decode("utf-8-sig")) if key else ():
                held.setdefault(model_type, set()).add(index)
    return {"releases": list(versions), "model_types": {name: runs(held[name]) for name in sorted(held)}}


def build(cache: Cache) -> bytes:
    table = {
        "how": "scripts/engine_index/architectures.py: the architectures each indexed release's model registry "
               "names (vLLM's registry dicts, SGLang's EntryClass), and the model types each indexed transformers "
               "version's AutoConfig knows, read with ast from the wheels",
        "engines": {engine: engine_table(cache, engine, RELEASES[engine]) for engine in ENGINES},
        "transformers": transformers_table(cache),
    }
    return encoded(table)


def main() -> int:
    return ship_main(__doc__ or "", OUTPUT, build, "scripts/engine_index/architectures.py")


if __name__ == "__main__":
    sys.exit(main())
