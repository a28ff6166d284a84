"""A launch asking a model for a capability its class does not implement in the installed release (issue 28: read as
an engine bug, or as an adapter or a layout that does not fit).

The engines refuse it in their own words (the raise site index):
- pipeline parallelism: vLLM's ModelConfig.verify_with_parallel_config (vllm/config.py, vllm/config/model.py)
  "Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` interface."
  (the indexed 0.5.5: "Pipeline parallelism is only supported for the following architectures: [...]"); SGLang's
  ModelRunner.__init__ (sglang/srt/model_executor/model_runner.py, 0.5.6 on) "Pipeline Parallel is not compatible
  with this model." when the model's forward takes no pp_proxy_tensors;
- LoRA: vLLM's loader (0.5.5, 0.6.3) "Model {} does not support LoRA, but LoRA is enabled. …", its model runners
  "{} does not support LoRA yet.", its LoRA config (0.33 on) "LoRA is not supported for {} ({}). Supported models
  implement the `SupportsLoRA` interface. …".
Which indexed releases' class for the architecture implements the capability is read from
facts/engine_architectures.json.gz (scripts/engine_index/architectures.py: vLLM's interfaces among the class's bases,
SGLang's pipeline-parallel forward), so the report says "in vLLM 0.8.5.post1, X does not implement LoRA; the indexed
releases in which it does: …".  The architecture comes from the message (the LoRA checks name the class) or from
the log (vLLM's "Resolved architecture: X", LaunchInfo.architecture); without it this rule says nothing and the
category's checks answer (facts/categories.toml: the rows citing this module's messages).

Threads: vllm-project/vllm#16231 (Llama-4-Maverick at pipeline-parallel size 2), #16894, #8484 and #18384 (LoRA on
classes that gained it later).
"""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.facts import requires
from logsleuth.facts.engine_architectures import LORA, PIPELINE_PARALLEL, implementing, registered
from logsleuth.facts.engine_modules import Presence
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence, exception_lines
from logsleuth.reasoning.guidance_text import flags_hold, with_flag_releases
from logsleuth.versions import version_key

RULE_ID = "rule-model-capability"
# A class name, as the messages print it (`Qwen2VLForConditionalGeneration`): one bounded word.
_CLASS = r"\b[A-Z]\w{0,200}+\b"
# A model class's name by its shape, for a name the registry does not hold (a plugin's model); a runner's or a
# feature's ("CPUGraphRunner", "MRV2 PCP") has none of these endings.
_MODEL_CLASS_SHAPE = compile_lazily(r"(?:ForCausalLM|ForConditionalGeneration|LMHeadModel|Model)$")


@dataclass(frozen=True)
class Capability:
    """A capability a model's class must implement for a launch setting, and how the engines refuse it."""

    interface: str  # the table's name for it (facts/engine_architectures.py)
    what: str  # "pipeline parallelism"
    category: str
    refusal: str  # the engines' messages; a named group holds the class when the message names it
    # The refusal's wording the oldest indexed release prints, which releases before it print too (the raise site
    # index): with a class the message names and every indexed release implementing it for that class, only such a
    # wording shows the installed release is older than the index.  '' when no wording of the capability is that old.
    older_wording: str = ""


CAPABILITIES = (
    Capability(PIPELINE_PARALLEL, "pipeline parallelism", "parallel-config",
               r"Pipeline parallelism is not supported for this model\b"
               r"|Pipeline parallelism is only supported for the following\s+architectures\b"
               r"|Pipeline Parallel is not compatible with this model\b"),
    Capability(LORA, "LoRA", "lora-config",
               rf"(?P<cls>{_CLASS}) does not support LoRA(?:,| yet\b)"
               rf"|LoRA is not supported for (?P<named>{_CLASS}) \("
               # 0.5.5's model runner, which names no class (vllm/worker/model_runner.py)
               r"|\bModel does not support LoRA\b",
               # vllm model_executor/model_loader/loader.py _get_model_initialization_kwargs, in 0.5.5 and 0.6.3
               # (the index's oldest) and in the releases before them; the later "{} does not support LoRA yet." and
               # "LoRA is not supported for {} (…)" came after 0.5.5
               older_wording=rf"\bModel {_CLASS} does not support LoRA, but LoRA is enabled\b"),
)
_REFUSALS = {capability.interface: compile_lazily(capability.refusal) for capability in CAPABILITIES}
_OLDER_WORDINGS = {capability.interface: compile_lazily(capability.older_wording)
                   for capability in CAPABILITIES if capability.older_wording}
SOURCES = (
    "facts/engine_architectures.json.gz (scripts/engine_index/architectures.py): per indexed release, the registered "
    "architectures whose class implements SupportsPP, SupportsLoRA, SupportsMultiModal (vLLM) or a forward taking "
    "pp_proxy_tensors (SGLang), read with ast from the wheels",
    "vllm vllm/config/model.py ModelConfig.verify_with_parallel_config: 'Pipeline parallelism is not supported for this "
    "model. Supported models implement the `SupportsPP` interface.'; vllm/v1/worker/lora_model_runner_mixin.py "
    "load_lora_model: '{} does not support LoRA yet.'; vllm/config/lora.py verify_with_model_config: 'LoRA is not "
    "supported for {} ({}). …'",
    "sglang sglang/srt/model_executor/model_runner.py ModelRunner.__init__: 'Pipeline Parallel is not compatible with "
    "this model.'",
)


def model_capability(evidence: Evidence) -> Diagnosis | None:
    engine = evidence.launch.engine
    if engine not in ENGINE_NAMES:
        return None
    for capability in CAPABILITIES:
        found = _refusal(evidence, capability)
        if found is None:
            continue
        if found and _registered_anywhere(engine, found) is False:
            if not _MODEL_CLASS_SHAPE.search(found):
                return None  # a runner's or a feature's refusal ("CPUGraphRunner does not support LoRA yet.")
            found = ""  # a model class the registry does not hold: the log's architecture may answer
        architecture = found or evidence.launch.architecture
        if not architecture:
            return None  # no class named: the category's checks answer
        presence = implementing(engine, capability.interface, architecture)
        if presence is None or _implemented_around(presence, evidence.launch.named_version):
            return None  # the installed release (or the indexed ones around it) implements it for this class
        if presence.in_every and not _older_than_the_index(evidence, capability, found):
            # Every indexed release implements it for this class: the refusal is about another model (a speculative
            # draft's config is checked too, and the log's first "Resolved architecture" is the target's), or the
            # release is one the index does not hold.  The category's checks answer.
            return None
        return _diagnosis(evidence, engine, capability, architecture, presence)
    return None


def _registered_anywhere(engine: str, architecture: str) -> bool | None:
    """Whether some indexed release's registry holds the architecture (None: the engine is not indexed)."""
    presence = registered(engine, architecture)
    return None if presence is None else bool(presence.having)


def _implemented_around(presence: Presence, installed: str | None) -> bool:
    """Whether the installed release implements it: its own index entry, or for a release the index does not hold,
    the nearest indexed releases on either side (a release newer than every indexed one: the newest)."""
    if installed is None:
        return False
    known = presence.has(installed)
    if known is not None:
        return known
    key = version_key(installed)
    if key is None or installed in presence.open_in:
        return False
    ordered = [(version_key(release), release) for release in presence.indexed]
    below = [release for release_key, release in ordered if release_key is not None and release_key < key]
    above = [release for release_key, release in ordered if release_key is not None and release_key > key]
    if not below:
        return False  # older than every indexed release: nothing says it had it
    sides = [below[-1], *above[:1]]
    return all(presence.has(release) for release in sides)


def _older_than_the_index(evidence: Evidence, capability: Capability, named: str) -> bool:
    """For a class every indexed release implements it for: the installed release is older than the index only when
    the message itself named the class in a wording the releases before the index print, or the log names such a
    release (_implemented_around has ruled out the others)."""
    installed = evidence.launch.named_version
    if installed is not None:
        return True
    wording = _OLDER_WORDINGS.get(capability.interface)
    return bool(named) and wording is not None and any(
        wording.search(line) for line in exception_lines(evidence.failure))


def _refusal(evidence: Evidence, capability: Capability) -> str | None:
    """The class the refusal names ('' when it names none); None when the failure is not this refusal."""
    for line in exception_lines(evidence.failure):
        found = _REFUSALS[capability.interface].search(line)
        if found is not None:
            return next((name for name in found.groupdict().values() if name), "")
    return None


def _diagnosis(evidence: Evidence, engine: str, capability: Capability, architecture: str,
               presence: Presence) -> Diagnosis | None:
    name, installed, what = ENGINE_NAMES[engine], evidence.launch.named_version, capability.what
    if presence.in_every:  # _older_than_the_index holds: the message's wording or the release named says so
        facts = [f"{architecture} implements {what} in every indexed {name} release ({_indexed(presence)})"]
        elsewhere = (f"; every indexed {name} release implements it ({_indexed(presence)}), and the installed one is "
                     f"older than {presence.indexed[0]}")
    elif presence.having:
        facts = [f"{architecture} implements {what} in the indexed {name} releases {presence.spans()}"]
        elsewhere = f"; the indexed {name} releases in which it does: {presence.spans()}"
    else:
        facts = [f"{architecture} implements {what} in no indexed {name} release ({_indexed(presence)})"]
        elsewhere = f"; no indexed {name} release ({_indexed(presence)}) implements it for this model"
    release = f"{name} {installed}" if installed else f"the installed {name} (the log does not name it)"
    if installed:
        facts.append(f"{name} {installed} does not")
    cause = (f"In {release}, the model's class ({architecture}) does not implement {what}, so the launch that asks "
             f"for it is refused before the model loads{elsewhere}. The model and the GPUs are not the cause.")
    steps = [*(with_flag_releases(step, engine, installed) for step in _without_steps(capability, engine, installed)),
             *_release_steps(name, engine, architecture, what, presence)]
    summary = (f"Launch without {what} (see the steps), or use a {name} release in which {architecture} implements "
               f"it: {presence.spans()}." if presence.having else f"Launch without {what} (see the steps).")
    return Diagnosis(
        pattern=RULE_ID, title=f"{architecture} does not implement {what} in {release}", category=capability.category,
        root_cause=cause, fix=Fix(summary=summary, steps=tuple(steps)), references=SOURCES, engine=engine,
        engine_version=evidence.launch.engine_version, basis="rule", evidence=tuple(facts))


def _indexed(presence: Presence) -> str:
    return f"{presence.indexed[0]} to {presence.indexed[-1]}"


def _without_steps(capability: Capability, engine: str, version: str | None) -> list[str]:
    """How to launch without the capability, naming the release's flags only where its catalog holds them."""
    if capability.interface == PIPELINE_PARALLEL:
        pipeline, tensor = ("--pp-size", "--tp-size") if engine == "sglang" else ("--pipeline-parallel-size",
                                                                                 "--tensor-parallel-size")
        named = f" ({pipeline} 1, and {tensor} for the split)" if flags_hold(f"{pipeline} {tensor}", engine, version) else ""
        return [f"launch with pipeline-parallel size 1{named}; to spread the model over the same GPUs, use tensor "
                "parallelism instead (the tensor-parallel size times the pipeline-parallel size asked for), where the "
                "model's attention heads (num_attention_heads, and usually num_key_value_heads, in config.json) divide "
                "by that tensor-parallel size; across nodes tensor parallelism needs a fast interconnect"]
    # LoRA: vLLM's alone (the index records no SupportsLoRA of SGLang's, and SGLang's refusals name no class)
    lora = "--enable-lora and --lora-modules"
    named = f" (leave out {lora})" if flags_hold(lora, engine, version) else ""
    return [f"serve without LoRA{named}: merge the adapter into the base model's weights (the fine-tuning tool's merge "
            "or export step) and serve the merged model"]


def _release_steps(name: str, engine: str, architecture: str, what: str, presence: Presence) -> list[str]:
    if not presence.having:
        return []
    first = presence.having[0]
    pinned = requires.pinned_requirement(engine, first, "transformers")
    pin = f" ({name} {first} requires {pinned})" if pinned else ""
    return [f"or install a {name} release in which {architecture} implements {what}: the indexed releases "
            f"{presence.spans()}{pin}; releases between two indexed ones are not known here"]
