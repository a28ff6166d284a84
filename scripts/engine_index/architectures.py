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

And which registered architectures implement the capabilities a launch can ask of a model (the facts behind "in
vLLM 0.8.5.post1, Llama4ForConditionalGeneration does not implement pipeline parallelism"):
- vLLM: the capability interfaces (vllm/model_executor/models/interfaces.py: SupportsPP, SupportsLoRA,
  SupportsMultiModal) among the bases of the class the registry maps the architecture to, followed through the
  model modules' own classes (vllm/model_executor/models/, and vllm/models/ where later releases keep some) (`MistralForCausalLM(LlamaForCausalLM)`); the checks that refuse pipeline parallelism
  or LoRA test the class for them (ModelConfig.verify_with_parallel_config, the LoRA checks).  Before SupportsPP
  (the indexed 0.5.5) pipeline parallelism was the list `_PP_SUPPORTED_MODELS` in vllm/config.py.
- SGLang: pipeline parallelism, which the model runner grants a model whose `forward` takes `pp_proxy_tensors`
  (sglang/srt/model_executor/model_runner.py: "Pipeline Parallel is not compatible with this model"), the method
  found on the entry class or the first of its bases that defines it.

The file: per engine the releases in order, per architecture the runs of release indices registering it, written
"a-b" (indices into the releases; several runs joined with ","), the suffix lists with the runs converting them, and
per capability the runs of releases in which each architecture implements it.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
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
# Where vLLM's model classes live: model_executor/models/, and from 0.2x also vllm/models/ (registered by full path).
VLLM_MODEL_PACKAGES = ("vllm/model_executor/models/", "vllm/models/")
VLLM_MODELS_MODULE = "vllm.model_executor.models"
VLLM_LEGACY_CONFIG = "vllm/config.py"
# The interfaces whose absence a launch setting is refused for: pipeline parallelism, LoRA, image or audio inputs.
CAPABILITIES = ("SupportsPP", "SupportsLoRA", "SupportsMultiModal")
PP = "SupportsPP"
PP_LIST_NAME = "_PP_SUPPORTED_MODELS"  # vLLM 0.5: the architectures pipeline parallelism was allowed for
SGLANG_PP_PARAMETER = "pp_proxy_tensors"
TRANSFORMERS_MAPPINGS = ("transformers/models/auto/configuration_auto.py", "transformers/models/auto/auto_mappings.py")
MODEL_TYPES_NAME = "CONFIG_MAPPING_NAMES"


def vllm_architectures(source: str) -> dict[str, tuple[str, str]]:
    """The keys of the module's top-level dict literals that map an architecture to a (module, class) pair, with
    the pair."""
    found: dict[str, tuple[str, str]] = {}
    for statement in ast.parse(source).body:
        value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(value, ast.Dict):
            continue
        for key, item in zip(value.keys, value.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and _module_class_pair(item):
                module, name = (element.value for element in item.elts[:2])  # type: ignore[attr-defined]
                found.setdefault(key.value, (module, name))
    return found


def _module_class_pair(node: ast.expr) -> bool:
    return (isinstance(node, ast.Tuple) and len(node.elts) >= 2
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts[:2]))


@dataclass(frozen=True)
class ModelClass:
    """A class a model module defines: its bases' names, and the parameters of the `forward` it defines (None: it
    defines none, a base's is used)."""

    bases: tuple[str, ...]
    forward: tuple[str, ...] | None


def model_classes(source: str) -> dict[str, ModelClass]:
    """The top-level classes of a model module."""
    found: dict[str, ModelClass] = {}
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.ClassDef):
            bases = tuple(name for base in statement.bases if (name := _base_name(base)))
            found[statement.name] = ModelClass(bases, _forward_parameters(statement))
    return found


def _base_name(base: ast.expr) -> str | None:
    """`SupportsPP`, `interfaces.SupportsPP` -> SupportsPP; a subscripted generic base -> its name."""
    if isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Name):
        return base.id
    return base.attr if isinstance(base, ast.Attribute) else None


def _forward_parameters(cls: ast.ClassDef) -> tuple[str, ...] | None:
    for item in cls.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == "forward":
            arguments = item.args
            return tuple(a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs))
    return None


class ClassTable:
    """The model modules' classes of one release, looked up by module and name; a base named without its module is
    the class of that name in the same module, else in the first module (sorted) that defines it."""

    def __init__(self, modules: dict[str, dict[str, ModelClass]]) -> None:
        self.modules = modules
        self.by_name: dict[str, str] = {}
        for module in sorted(modules):
            for name in modules[module]:
                self.by_name.setdefault(name, module)

    def find(self, module: str | None, name: str) -> tuple[str, ModelClass] | None:
        if module is not None and name in self.modules.get(module, {}):
            return module, self.modules[module][name]
        home = self.by_name.get(name)
        return (home, self.modules[home][name]) if home is not None else None

    def interfaces(self, module: str | None, name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        """The capability interfaces among the class's bases, followed through the bases the modules define."""
        found = self.find(module, name)
        if found is None or name in seen:
            return set()
        home, cls = found
        held = {base for base in cls.bases if base in CAPABILITIES}
        for base in cls.bases:
            if base not in CAPABILITIES:
                held |= self.interfaces(home, base, seen | {name})
        return held

    def forward(self, module: str | None, name: str, seen: frozenset[str] = frozenset()) -> tuple[str, ...] | None:
        """The parameters of the `forward` the class has: its own, else the first base's (in the bases' order)."""
        found = self.find(module, name)
        if found is None or name in seen:
            return None
        home, cls = found
        if cls.forward is not None:
            return cls.forward
        return next((params for base in cls.bases
                     if (params := self.forward(home, base, seen | {name})) is not None), None)


def _dotted(path: str) -> str:
    """vllm/model_executor/models/llama.py -> vllm.model_executor.models.llama."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _registry_module(module: str) -> str:
    """The module a vLLM registry entry names: relative to vllm.model_executor.models, or (later releases, for the
    models under vllm/models/) a full dotted path."""
    return module if module.startswith("vllm.") else f"{VLLM_MODELS_MODULE}.{module}"


def vllm_pp_list(source: str) -> list[str]:
    """vLLM 0.5's `_PP_SUPPORTED_MODELS` (vllm/config.py): the architectures pipeline parallelism was allowed for."""
    for statement in ast.parse(source).body:
        target = statement.targets[0] if isinstance(statement, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id == PP_LIST_NAME and isinstance(statement.value, ast.List):
            return [e.value for e in statement.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


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


@dataclass
class ReleaseModels:
    """What one release's model registry says: its architectures, the suffixes it converts between (vLLM from
    0.10), and per capability the architectures whose class implements it."""

    architectures: set[str] = field(default_factory=set)
    suffixes: list[str] = field(default_factory=list)
    capable: dict[str, set[str]] = field(default_factory=dict)


def release_architectures(cache: Cache, engine: str, version: str) -> ReleaseModels:
    release = fetch_release(engine, version, cache)
    found = ReleaseModels()
    registry: dict[str, tuple[str, str]] = {}
    modules: dict[str, dict[str, ModelClass]] = {}
    entries: dict[str, str] = {}  # SGLang: entry class -> its module
    pp_list: list[str] = []
    for path, key in sorted(release.files.items()):
        if not path.endswith(".py"):
            continue
        source = cache.source(key).decode("utf-8-sig")
        if engine == "vllm" and path in VLLM_REGISTRIES:
            registry.update(vllm_architectures(source))
        if engine == "vllm" and path.startswith(VLLM_CONFIG) and SUFFIXES_NAME in source:
            found.suffixes = found.suffixes or vllm_suffixes(source)
        if engine == "vllm" and path == VLLM_LEGACY_CONFIG and PP_LIST_NAME in source:
            pp_list = vllm_pp_list(source)
        if path.startswith(VLLM_MODEL_PACKAGES if engine == "vllm" else (SGLANG_MODELS,)):
            modules[_dotted(path)] = model_classes(source)
        if engine == "sglang" and path.startswith(SGLANG_MODELS):
            entries.update(dict.fromkeys(sglang_entry_classes(source), _dotted(path)))
    table = ClassTable(modules)
    if engine == "vllm":
        found.architectures = set(registry)
        found.capable = _vllm_capable(table, registry, pp_list)
    else:
        found.architectures = set(entries)
        found.capable = {PP: {name for name, module in entries.items()
                              if SGLANG_PP_PARAMETER in (table.forward(module, name) or ())}}
    return found


def _vllm_capable(table: ClassTable, registry: dict[str, tuple[str, str]], pp_list: list[str]) -> dict[str, set[str]]:
    capable: dict[str, set[str]] = {capability: set() for capability in CAPABILITIES}
    for architecture, (module, name) in registry.items():
        for capability in table.interfaces(_registry_module(module), name):
            capable[capability].add(architecture)
    if pp_list:  # a release from before SupportsPP
        capable[PP] = set(pp_list) & set(registry)
    return capable


def engine_table(cache: Cache, engine: str, versions: tuple[str, ...]) -> dict[str, object]:
    held: dict[str, set[int]] = {}
    converting: dict[tuple[str, ...], set[int]] = {}
    capable: dict[str, dict[str, set[int]]] = {}
    for index, version in enumerate(versions):
        models = release_architectures(cache, engine, version)
        for architecture in models.architectures:
            held.setdefault(architecture, set()).add(index)
        if models.suffixes:
            converting.setdefault(tuple(models.suffixes), set()).add(index)
        for capability, architectures in models.capable.items():
            for architecture in architectures:
                capable.setdefault(capability, {}).setdefault(architecture, set()).add(index)
    return {"releases": list(versions), "architectures": {name: runs(held[name]) for name in sorted(held)},
            "suffixes": sorted([runs(indices), list(suffixes)] for suffixes, indices in converting.items()),
            "capabilities": {capability: {name: runs(indices) for name, indices in sorted(by_name.items())}
                             for capability, by_name in sorted(capable.items())}}


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
               "names (vLLM's registry dicts, SGLang's EntryClass), the capabilities each one's class implements "
               "(vLLM's interfaces, SGLang's pipeline-parallel forward), and the model types each indexed "
               "transformers version's AutoConfig knows, read with ast from the wheels",
        "engines": {engine: engine_table(cache, engine, RELEASES[engine]) for engine in ENGINES},
        "transformers": transformers_table(cache),
    }
    return encoded(table)


def main() -> int:
    return ship_main(__doc__ or "", OUTPUT, build, "scripts/engine_index/architectures.py")


if __name__ == "__main__":
    sys.exit(main())
