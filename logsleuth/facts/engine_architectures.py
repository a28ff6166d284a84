"""Which indexed SGLang and vLLM releases register a model architecture (engine_architectures.json.gz, written by
scripts/engine_index/architectures.py from the released wheels the raise-site index reads).

An architecture is the name a checkpoint's config.json lists under "architectures" (`Qwen3ForCausalLM`), which the
engine's model registry maps to its own implementation: vLLM's registry dicts, SGLang's `EntryClass` of each model
module.  A release that lacks the name refuses the model ("Model architectures [...] are not supported for now",
"X has no vLLM implementation ..."); this table says which indexed releases have it, so the advice names them from
facts.  The releases are those the index reads, not every release published: the first indexed release having it
bounds where it appeared to within the releases between two indexed ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from logsleuth.facts.engine_modules import Presence, gzipped_table, release_indices

ENGINES = ("sglang", "vllm")


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return gzipped_table("engine_architectures.json.gz")


@dataclass(frozen=True)
class Support:
    """The indexed releases that serve an architecture: by name (their registry has it) or by converting a registered
    architecture with another suffix (vLLM from 0.10: `Qwen2ForSequenceClassification` from `Qwen2ForCausalLM`)."""

    serving: Presence  # the releases that register it or convert it, oldest first
    converted_in: tuple[str, ...]  # the releases that serve it only by conversion
    converted_from: tuple[str, ...]  # the registered architectures they convert

    @property
    def by_name(self) -> tuple[str, ...]:
        return tuple(v for v in self.serving.having if v not in self.converted_in)


def supported(engine: str, architecture: str) -> Support | None:
    """Which indexed releases of `engine` serve `architecture` (None: an engine not indexed)."""
    table = _table()["engines"].get(engine)
    if table is None:
        return None
    releases = tuple(table["releases"])
    architectures = table["architectures"]
    named = release_indices(architectures.get(architecture, ""))
    converted: set[int] = set()
    bases: list[str] = []
    for runs, suffixes in table.get("suffixes", ()):
        for index in release_indices(runs) - named:
            base = _converted_base(architecture, suffixes, architectures, index)
            if base is not None:
                converted.add(index)
                bases += [base] if base not in bases else []
    serving = Presence(engine, architecture, tuple(v for i, v in enumerate(releases) if i in named | converted),
                       releases)
    return Support(serving, tuple(v for i, v in enumerate(releases) if i in converted), tuple(bases))


def _converted_base(architecture: str, suffixes: list[str], architectures: dict[str, str], index: int) -> str | None:
    """The registered architecture vLLM's _normalize_arch turns `architecture` into in the release at `index`: the
    first suffix it ends with, replaced by each suffix in turn (vllm/model_executor/models/registry.py)."""
    suffix = next((s for s in suffixes if architecture.endswith(s)), None)
    if suffix is None:
        return None
    for other in suffixes:
        base = architecture.replace(suffix, other)
        if index in release_indices(architectures.get(base, "")):
            return base
    return None


def registered(engine: str, architecture: str) -> Presence | None:
    """The indexed releases of `engine` whose model registry has `architecture` (None: an engine not indexed)."""
    table = _table()["engines"].get(engine)
    if table is None:
        return None
    releases = tuple(table["releases"])
    held = release_indices(table["architectures"].get(architecture, ""))
    return Presence(engine, architecture, tuple(v for i, v in enumerate(releases) if i in held), releases)


# The fewest names of a registry's listing that only one engine registers, to say the listing is that engine's.
MIN_OWN_ARCHITECTURES = 2


def engine_registering(architectures: list[str]) -> str | None:
    """The engine whose model registry a listing of architectures is: at least MIN_OWN_ARCHITECTURES names that some
    indexed release of one engine registers and no indexed release of the other does, and none of the other's own.
    The engines list their whole registry when they refuse an architecture ("… Supported architectures: [...]"):
    SGLang's `dict_keys([…'DeepseekV3ForCausalLMNextN', 'MultiModalityCausalLM'…])`, vLLM's `['AquilaModel',
    'ArcticForCausalLM', …]`.  None: too few of either's own names, or some of each."""
    engines = _table()["engines"]
    own = {engine: sum(1 for name in set(architectures) if name in engines[engine]["architectures"]
                       and name not in engines[other]["architectures"])
           for engine, other in (ENGINES, ENGINES[::-1])}
    having = [engine for engine, count in own.items() if count]
    return having[0] if len(having) == 1 and own[having[0]] >= MIN_OWN_ARCHITECTURES else None


def transformers_knowing(model_type: str) -> Presence:
    """The indexed transformers versions whose AutoConfig knows `model_type` (CONFIG_MAPPING_NAMES)."""
    table = _table()["transformers"]
    releases = tuple(table["releases"])
    held = release_indices(table["model_types"].get(model_type, ""))
    return Presence("transformers", model_type, tuple(v for i, v in enumerate(releases) if i in held), releases)


def indexed_releases(engine: str) -> tuple[str, ...]:
    """The engine's releases the table reads, oldest first."""
    return tuple(_table()["engines"][engine]["releases"])


# The capability interfaces the table records per architecture (scripts/engine_index/architectures.py): vLLM's
# SupportsPP, SupportsLoRA and SupportsMultiModal; SGLang's pipeline parallelism, recorded as SupportsPP.
PIPELINE_PARALLEL = "SupportsPP"
LORA = "SupportsLoRA"
MULTIMODAL = "SupportsMultiModal"  # vLLM's alone


def implementing(engine: str, capability: str, architecture: str) -> Presence | None:
    """The indexed releases of `engine` in which `architecture`'s class implements `capability` (None: the table
    records nothing for the engine, the capability or the architecture in any release)."""
    table = _table()["engines"].get(engine)
    recorded = (table or {}).get("capabilities", {}).get(capability)
    if table is None or recorded is None or architecture not in table["architectures"]:
        return None
    releases = tuple(table["releases"])
    held = release_indices(recorded.get(architecture, ""))
    return Presence(engine, architecture, tuple(v for i, v in enumerate(releases) if i in held), releases)

