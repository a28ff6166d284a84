"""A LoRA adapter given where the base model belongs (issue 28, stop 38's blind split: filed as a checkpoint whose
tensor names do not match, with advice to rename them).

An adapter checkpoint (PEFT's adapter_model.safetensors) holds only the low-rank matrices, named
`…q_proj.lora_A.weight`, `…lora_B.weight` (older PEFT: `lora_up` / `lora_down`; embeddings: `lora_embedding_A`).
Loaded as a model, the engine's `load_weights` looks each name up in the model's parameters and fails on the first:
SGLang and vLLM's model files raise `KeyError: '<name>'` (`param = params_dict[name]`); vLLM's AutoWeightsLoader raises
"There is no module or parameter named '<name>' in <Model>".  The fix is the launch's shape, not the tensors: the base
model as the model, the adapter through the release's LoRA flags (checked in its catalog), the base model's name from
the adapter's adapter_config.json (`base_model_name_or_path`), which only the user has."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix
from logsleuth.reasoning.catalog_flags import release_flag
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-lora-adapter-as-model"
_ADAPTER_TENSOR = compile_lazily(
    r"^(?:KeyError: '|ValueError: There is no module or parameter named ')"
    r"(?P<name>[^']*\.lora_(?:A|B|up|down|embedding_A|embedding_B|magnitude_vector)\b[^']*)'"
)
SOURCES = (
    "PEFT src/peft/tuners/lora/layer.py: the adapter's matrices are lora_A / lora_B (lora_embedding_A/B), saved with "
    "their module names in adapter_model.safetensors; adapter_config.json names base_model_name_or_path",
    "sglang-0.5.9 sglang/srt/models/llama.py load_weights: `param = params_dict[name]` (KeyError); vllm-0.11.2 "
    "vllm/model_executor/models/utils.py AutoWeightsLoader: 'There is no module or parameter named {} in {}'",
)


def lora_adapter(evidence: Evidence) -> Diagnosis | None:
    found = evidence.first_match(_ADAPTER_TENSOR)
    if found is None:
        return None
    launch = evidence.launch
    engine = launch.engine
    name = ENGINE_NAMES.get(engine or "", "the engine")
    if engine == "sglang":
        paths = release_flag(launch, "--lora-paths")
        how = (f"give the base model as --model-path and the adapter with {paths} NAME=ADAPTER_PATH" if paths else
               "give the base model as the model; this SGLang release has no --lora-paths to serve an adapter beside it")
    elif engine == "vllm":
        enable, modules = release_flag(launch, "--enable-lora"), release_flag(launch, "--lora-modules")
        how = (f"give the base model as the model and the adapter with {enable} {modules} NAME=ADAPTER_PATH"
               if enable and modules else "give the base model as the model")
    else:
        how = ("give the base model as the model and the adapter through the engine's LoRA settings (SGLang: "
               "--lora-paths; vLLM: --enable-lora with --lora-modules)")
    return Diagnosis(
        pattern=RULE_ID, title="A LoRA adapter was given as the model", category="lora-config",
        root_cause=(f"The checkpoint holds LoRA adapter matrices ('{found['name']}'), not a model's weights: an adapter "
                    f"was given where {name} expects the base model, and the model it built has no parameter of that "
                    "name. Renaming tensors does not help: the adapter needs the model it was trained on."),
        fix=Fix(
            summary=f"Serve the base model with the adapter on top: {how}.",
            steps=(
                "the base model's name is base_model_name_or_path in the adapter's adapter_config.json",
                "or merge the adapter into the base model first (PEFT's merge_and_unload, then save_pretrained) and "
                "serve the merged directory as the model, with no LoRA setting",
            ),
            needs_input=("the base model the adapter was trained on (adapter_config.json: base_model_name_or_path)",),
        ),
        references=SOURCES, engine=engine, engine_version=launch.engine_version, basis="rule",
        evidence=(f"the tensor the loader did not know: {found['name']}",),
    )
