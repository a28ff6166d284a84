"""A LoRA adapter given where the base model belongs (issue 28, stop 38's blind split: filed as a checkpoint whose
tensor names do not match, with advice to rename them).

An adapter checkpoint (PEFT's adapter_model.safetensors) holds only the low-rank matrices, named
`…q_proj.lora_A.weight`, `…lora_B.weight` (older PEFT: `lora_up` / `lora_down`; embeddings: `lora_embedding_A`).
Loaded as a model, the engine's `load_weights` looks each name up in the model's parameters and fails on the first:
SGLang and vLLM's model files raise `KeyError: '<name>'` (`param = params_dict[name]`); vLLM's AutoWeightsLoader raises
"There is no module or parameter named '<name>' in <Model>".  The fix is the launch's shape, not the tensors: the base
model as the model, the adapter through the release's LoRA flags (checked in its catalog), the base model's name from
the adapter's adapter_config.json (`base_model_name_or_path`), which only the user has.

The second rule reads the other side: an adapter served as an adapter whose checkpoint holds a tensor vLLM's LoRA
loader does not take (vllm/lora/utils.py parse_fine_tuned_lora_name: "<name> is unsupported LoRA weight", every
release in the raise site index): a full weight PEFT saved beside the matrices (`modules_to_save`: lm_head,
embed_tokens), or the matrices of a module the release does not serve LoRA on (vllm-project/vllm#9280,
vllm-project/vllm#21500)."""

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
# vLLM's LoRA loader refusing one of the adapter's tensors; the name is the checkpoint's (dots, words, digits).
_UNSUPPORTED_LORA_WEIGHT = compile_lazily(r"(?<![\w.])(?P<name>[\w.]+) is unsupported LoRA weight")
_LORA_MATRIX = compile_lazily(r"\.lora_(?:A|B|embedding_A|embedding_B)\b")
UNSUPPORTED_SOURCES = (
    "vllm/lora/utils.py parse_fine_tuned_lora_name: 'raise ValueError(f\"{name} is unsupported LoRA weight\")' "
    "(facts/raise_sites-vllm.zip: every indexed release), called for each tensor of adapter_model.safetensors",
    "PEFT LoraConfig.modules_to_save: whole modules (lm_head, embed_tokens) saved with the adapter, as full weights",
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


def lora_weight_unsupported(evidence: Evidence) -> Diagnosis | None:
    """An adapter whose checkpoint holds a tensor vLLM's LoRA loader does not take: what kind of tensor it is says
    which way out there is (never a flag: the loader raises for it whatever the LoRA settings)."""
    found = evidence.first_match(_UNSUPPORTED_LORA_WEIGHT)
    if found is None:
        return None
    tensor = found["name"]
    launch = evidence.launch
    if _LORA_MATRIX.search(tensor):
        cause = (f"The adapter holds LoRA matrices for a module ('{tensor}') this vLLM release does not serve LoRA on "
                 "(each model registers the modules it supports, often only the language model's linear layers).")
        summary = ("Serve an adapter trained only on the modules this release supports, or merge the adapter into the "
                   "base model and serve the merged model without LoRA.")
        first_step = "retrain the adapter with target_modules limited to the language model's linear layers (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj)"
    else:
        cause = (f"The adapter holds a full weight ('{tensor}'), not a pair of LoRA matrices: PEFT saves whole modules "
                 "beside them when they are listed in modules_to_save (lm_head, embed_tokens), and vLLM's LoRA "
                 "loader reads only lora_A / lora_B matrices.")
        summary = ("Save the adapter without modules_to_save, or merge the adapter into the base model and serve the "
                   "merged model without LoRA.")
        first_step = "retrain (or re-save) the adapter with modules_to_save empty: only its lora_A / lora_B matrices are served"
    return Diagnosis(
        pattern="rule-lora-weight-unsupported", title="A LoRA adapter holds a tensor vLLM's LoRA loader does not take",
        category="lora-config",
        root_cause=cause,
        fix=Fix(
            summary=summary,
            steps=(
                first_step,
                "or merge: PEFT's merge_and_unload on the base model with the adapter, then save_pretrained, and serve "
                "that directory as the model",
            ),
        ),
        references=UNSUPPORTED_SOURCES, engine=launch.engine, engine_version=launch.engine_version, basis="rule",
        evidence=(f"the tensor the LoRA loader refused: {tensor}",),
    )


# vLLM's LoRA loader finding no adapter where the request or --lora-modules points (vllm/lora/worker_manager.py
# WorkerLoRAManager._load_adapter: a FileNotFoundError, re-raised as "Loading lora {name} failed: No adapter found for
# {path}"; later releases raise LoRAAdapterNotFoundError from the same place).  The path ends at white space, a quote
# or a bracket (the message is often quoted inside a list by the engine's RPC error).
_ADAPTER_NOT_FOUND = compile_lazily(r"failed: No adapter found for (?P<path>[^\s\"'\[\]]{1,1000})")
NOT_FOUND_SOURCES = (
    "vllm/lora/worker_manager.py WorkerLoRAManager._load_adapter: `except FileNotFoundError as e: raise "
    "ValueError(f\"Loading lora {name} failed: No adapter found for {path}\") from e` (facts/raise_sites-vllm.zip: "
    "0.7.3 to 0.17.1; LoRAAdapterNotFoundError from the same place later); the file not found is the adapter's "
    "adapter_config.json or its weights, locally or on the model hub",
    "PEFT save_pretrained: an adapter directory holds adapter_config.json and adapter_model.safetensors (or .bin)",
    "vllm-project/vllm#30690: a training run's checkpoint-N directory served as an adapter",
)


def lora_adapter_not_found(evidence: Evidence) -> Diagnosis | None:
    """The adapter's files were not where vLLM looked: a path only the user can check, so no flag and no command."""
    found = evidence.first_match(_ADAPTER_NOT_FOUND)
    launch = evidence.launch
    if found is None or launch.engine == "sglang":
        return None
    path = found["path"].rstrip(".,;")
    return Diagnosis(
        pattern="rule-lora-adapter-not-found", title="vLLM found no LoRA adapter at the given path",
        category="lora-config",
        root_cause=(f"vLLM looked for a LoRA adapter at {path} and did not find its files: the path does not exist "
                    "where the server runs, or the directory holds no adapter_config.json with adapter weights "
                    "(adapter_model.safetensors or .bin), or, for a model hub name, the adapter could not be "
                    "downloaded."),
        fix=Fix(
            summary=f"Point the adapter at a directory the server can read that holds PEFT's adapter files ({path}).",
            steps=(
                "the path is read by the server process: inside a container it must be the path within the "
                "container (a mounted volume), and a relative path is relative to the server's working directory",
                "the directory must hold adapter_config.json and adapter_model.safetensors (or adapter_model.bin), as "
                "PEFT's save_pretrained writes them; a training run's checkpoint directory may hold a full model or "
                "the adapter one level down",
                "a model hub name needs network access (and the token for a gated repository) where the server runs",
            ),
            needs_input=("the adapter's directory listing on the server host",),
        ),
        references=NOT_FOUND_SOURCES, engine=launch.engine, engine_version=launch.engine_version, basis="rule",
        evidence=(f"the path vLLM found no adapter at: {path}",),
    )


# vLLM's LoRA loader comparing the adapter's target modules with those the model serves LoRA on
# (vllm/lora/models.py, later vllm/lora/lora_model.py, LoRAModel.from_local_checkpoint: "While loading {lora_dir},
# expected target modules in {expected_lora_modules} but received {unexpected_modules}. Please verify that the loaded
# LoRA module is correct"; the raise site index).  The lists are Python reprs (a list or a set of quoted names).
_TARGET_MODULES = compile_lazily(
    r"expected target modules in (?P<expected>[\[{][^\]}\n]{0,4000}[\]}]) but received (?P<received>\[[^\]\n]{0,4000}\])"
)
_QUOTED = compile_lazily(r"'([^'\s]{1,300})'")
# A part of a multimodal model outside its language model, by the words model code names it with.
_NON_LANGUAGE = compile_lazily(r"(?i)vision|visual|\bvit\b|projector|image|audio|patch_embed|merger|aligner")
TARGET_SOURCES = (
    "vllm/lora/models.py (later lora_model.py) LoRAModel.from_local_checkpoint: 'While loading {lora_dir}, expected "
    "target modules in {expected_lora_modules} but received {unexpected_modules}. Please verify that the loaded LoRA "
    "module is correct' (facts/raise_sites-vllm.zip)",
    "modelscope/ms-swift#4974 (an InternVL3 adapter trained with the vision parts unfrozen), "
    "thinking-machines-lab/tinker-cookbook#193 (a trainer's own module name, unembed_tokens): split 15, after grading",
)


def lora_target_modules(evidence: Evidence) -> Diagnosis | None:
    """An adapter whose target modules the model does not serve LoRA on: the modules by name, and the two ways out
    (an adapter on the listed modules, or the adapter merged), never a LoRA setting: the check runs whatever they are."""
    found = evidence.first_match(_TARGET_MODULES)
    if found is None:
        return None
    expected = _QUOTED.findall(found["expected"])
    received = list(dict.fromkeys(_QUOTED.findall(found["received"])))
    if not received:
        return None
    named = ", ".join(f"'{name}'" for name in received)
    outside = [name for name in received if _NON_LANGUAGE.search(name)]
    kind = (f"{', '.join(outside)} {'names' if len(outside) == 1 else 'name'} a part outside the language model (a "
            "multimodal model's vision tower or projector). " if outside else "")
    cause = (f"The adapter targets modules the engine does not apply LoRA to in this model: {named}"
             + (f" (it takes LoRA on {', '.join(expected)})" if expected else "") + f". {kind}Such modules are the "
             "non-language parts of a multimodal model (its vision tower, projector or aligner), or names a trainer "
             "gave that are not the model's own module names; the loader refuses the adapter whatever the LoRA "
             "settings are.")
    fix = Fix(
        summary=("Serve an adapter that targets only the language model's modules the engine lists (trained with the "
                 "vision parts frozen, or exported with the model's own module names), or merge the adapter into the "
                 "base model and serve the merged checkpoint without LoRA. A larger LoRA rank or more adapters does "
                 "not help."),
        steps=("the adapter's adapter_config.json lists its target_modules (and modules_to_save): compare them with "
               "the modules the message lists",
               "to merge: load the base model with the adapter in the trainer that made it (or PEFT's "
               "merge_and_unload), save the merged model, and serve that directory as the model"),
    )
    launch = evidence.launch
    return Diagnosis(
        pattern="rule-lora-target-modules", title="A LoRA adapter targets modules the engine does not apply LoRA to",
        category="lora-config", root_cause=cause, fix=fix, references=TARGET_SOURCES, engine=launch.engine,
        engine_version=launch.engine_version, basis="rule",
        evidence=(f"the modules the adapter targets and the loader refused: {named}",),
    )
