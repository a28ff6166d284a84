"""An adapter whose weights target a module the server's LoRA does not hold (issue 28, split 17's advice): which module
kind, and whether the release's LoRA can target that kind at all.

- SGLang (sglang/srt/lora/utils.py get_target_module_name, 0.4.x to 0.5.23): "Cannot find target module name for
  <adapter weight> in {<the server's target modules>}".  The kinds a release's LoRA can target are the choices of its
  --lora-target-modules (the release's catalog): a kind among them that the server did not prepare is that flag's
  flag's own case, a kind outside them is not supported by that release's LoRA, and no value of
  the flag loads the adapter (sgl-project/sglang#16550: Qwen3-Next's linear_attn.in_proj_qkvz).

vLLM's own check of an adapter's modules ("expected target modules in … but received …") is the rule of
reasoning/lora_adapter.py."""

from __future__ import annotations

from logsleuth.fixes import catalog as catalogs
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES
from logsleuth.versions import version_key

_SGLANG = compile_lazily(r"Cannot find target module name for (?P<weight>[\w.]{1,300}) in \{(?P<prepared>[^}\n]{0,800})\}")
_WRAPPERS = frozenset({"weight", "bias", "lora_A", "lora_B", "lora_embedding_A", "lora_embedding_B", "base_layer",
                       "default"})


def module_kind(name: str) -> str:
    """The module's own name in an adapter weight's dotted path (`…layers.0.linear_attn.in_proj_qkvz.lora_A
    .weight` is in_proj_qkvz), PEFT's and the engines' wrappers left out."""
    parts = [part for part in name.strip("'\" ").split(".") if part and part not in _WRAPPERS and not part.isdigit()]
    return parts[-1] if parts else name


def _names(listed: str) -> list[str]:
    return [item.strip().strip("'\"") for item in listed.split(",") if item.strip().strip("'\"")]


def lora_module_steps(text: str, engine: str | None, version: str | None) -> tuple[str, ...]:
    """The steps for an adapter module the server's LoRA does not hold, named in `text` (the failure's message): SGLang's
    check, whose release's choices are read only when the decided engine is SGLang (or none is)."""
    found = _SGLANG.search(text) if engine in (None, "sglang") else None
    return _sglang_steps(module_kind(found["weight"]), _names(found["prepared"]), version) if found else ()


def _sglang_steps(kind: str, prepared: list[str], version: str | None) -> tuple[str, ...]:
    targetable, releases = _targetable("sglang", version)
    if not targetable:
        return ()
    named = ENGINE_NAMES["sglang"]
    said = f"{named} {', '.join(releases)}"
    if kind in targetable:
        return (f"The adapter targets '{kind}', a module kind {said} LoRA can target, but the server prepared only "
                f"{', '.join(prepared) or 'other modules'}: launch with --lora-target-modules including it (or all).",)
    return (f"The adapter targets '{kind}', which is not among the module kinds LoRA can target in {said} (the choices "
            f"of --lora-target-modules there: {', '.join(sorted(k for k in targetable if k != 'all'))}): no LoRA setting loads "
            "this adapter. Use an adapter trained on supported modules only (its adapter_config.json target_modules), "
            f"or a newer release that adds LoRA for '{kind}' (search the engine's issues and release notes for it).",)


def _targetable(engine: str, version: str | None) -> tuple[frozenset[str], tuple[str, ...]]:
    """The module kinds --lora-target-modules takes in `version` (when its catalog knows the choices), else in every
    release whose catalog knows them; and those releases."""
    if version is not None:
        catalog = catalogs.load(engine, version)
        info = catalog.find("--lora-target-modules") if catalog is not None else None
        if catalog is not None and info is not None and info.choices and info.choices_known:
            return frozenset(info.choices), (catalog.version,)
    kinds: set[str] = set()
    releases = []
    for name, release in catalogs.available():
        catalog = catalogs.load(name, release) if name == engine else None
        info = catalog.find("--lora-target-modules") if catalog else None
        if info is not None and info.choices and info.choices_known:
            kinds |= set(info.choices)
            releases.append(release)
    return frozenset(kinds), tuple(sorted(releases, key=lambda release: version_key(release) or ()))
