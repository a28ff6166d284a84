"""What logsleuth says about a failure no pattern names (docs/how-it-reasons.md).

Rules reason from facts (logsleuth/facts/: GPUs, pinned dependencies, ...) and the numbers and names in the
failure itself; each stands for a class of failures, never for one thread's wording.  The first rule that
answers gives the diagnosis (basis "rule").  When none does, `general.py` names the likeliest category and its
general checks (basis "general": "general guidance, not a proven fix").

The registry is explicit, like fixes/builders: a rule is a function in a module of this package, listed in
RULES below; nothing registers itself on import."""

from __future__ import annotations

from collections.abc import Callable

from logsleuth.models import Diagnosis
from logsleuth.reasoning import dependencies
from logsleuth.reasoning.architecture_support import architecture_support
from logsleuth.reasoning.container_runtime import container_cuda_requirement, container_gpu_access
from logsleuth.reasoning.device_packages import device_package_import
from logsleuth.reasoning.diffusion_checkpoint import diffusion_checkpoint
from logsleuth.reasoning.engine_imports import caller_imports_engine_name
from logsleuth.reasoning.engine_mode import engine_mode
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.feature_gate import feature_gate
from logsleuth.reasoning.flag_checks import flag_checks
from logsleuth.reasoning.general import categorize
from logsleuth.reasoning.gguf_loader import gguf_loader
from logsleuth.reasoning.hardware import gpu_arch_limit
from logsleuth.reasoning.hidden_gpus import launch_hides_gpus
from logsleuth.reasoning.input_limit import sglang_input_over_limit
from logsleuth.reasoning.kv_connector import kv_connector
from logsleuth.reasoning.local_devices import local_devices
from logsleuth.reasoning.lora_adapter import (
    lora_adapter,
    lora_adapter_not_found,
    lora_target_modules,
    lora_weight_unsupported,
)
from logsleuth.reasoning.model_capabilities import model_capability
from logsleuth.reasoning.model_files import model_files
from logsleuth.reasoning.model_inspection import model_inspection
from logsleuth.reasoning.model_versions import model_version
from logsleuth.reasoning.multinode import multinode
from logsleuth.reasoning.network import network
from logsleuth.reasoning.own_signature import engine_own_signature
from logsleuth.reasoning.parallelism import parallelism
from logsleuth.reasoning.parser_names import parser_names
from logsleuth.reasoning.platform_dtype import platform_dtype
from logsleuth.reasoning.pooling_checkpoint import embedding_checkpoint
from logsleuth.reasoning.quantized_parallel import quantized_parallel
from logsleuth.reasoning.remote_code import remote_code
from logsleuth.reasoning.rope_type import rope_type_unknown
from logsleuth.reasoning.settings_keywords import settings_keyword
from logsleuth.reasoning.shared_libraries import shared_library

__all__ = ["RULES", "Evidence", "Rule", "reason"]

Rule = Callable[[Evidence], Diagnosis | None]

# In order: the first rule that answers wins.  Specific facts before general ones.
RULES: tuple[Rule, ...] = (
    launch_hides_gpus,  # CUDA_VISIBLE_DEVICES (or its ROCm, container kin) in front of the command leaving no GPU
    gpu_arch_limit,  # a dtype, kernel or build the GPU's architecture lacks (facts/gpus.toml)
    container_cuda_requirement,  # the container runtime refusing an image whose CUDA the host's driver lacks
    container_gpu_access,  # docker with no GPU device driver, the NVIDIA runtime failing to set the container up
    parallelism,  # parallel degrees against heads, experts and quantization blocks (facts/divisibility.toml)
    local_devices,  # more workers counted on a node than its devices: the launch's arithmetic before smaller degrees
    multinode,  # a multi-node rendezvous: an unexpanded address variable, a host that does not resolve, Gloo's interface
    network,  # a proxy answering the server's own request, a taken port, an unreachable rendezvous
    remote_code,  # a model repository's own code, not allowed to run (transformers' trust_remote_code)
    shared_library,  # a system library the dynamic loader cannot find (facts/shared_libraries.toml)
    device_package_import,  # a non-CUDA accelerator's device package (torch_npu, torch_xla, ...) that does not import
    platform_dtype,  # a dtype the platform's backend cast the model to, which the checkpoint's quantization method refuses
    lora_adapter,  # a LoRA adapter's checkpoint given as the model (its lora_A / lora_B tensors)
    lora_weight_unsupported,  # an adapter holding a tensor vLLM's LoRA loader does not take (modules_to_save)
    lora_target_modules,  # an adapter targeting modules the model does not serve LoRA on (a vision tower, a trainer's names)
    lora_adapter_not_found,  # vLLM finding no adapter files at the path a request or --lora-modules gives
    sglang_input_over_limit,  # SGLang's input limit: the smaller of the context length and the KV cache's capacity
    diffusion_checkpoint,  # a diffusion pipeline's checkpoint given to SGLang's LLM server (its diffusion entry point)
    embedding_checkpoint,  # an embedding model's checkpoint (bare base-model tensor names) built as a text generator
    gguf_loader,  # a GGUF file whose architecture transformers' GGUF support (or the gguf package) does not read
    model_inspection,  # vLLM's model inspection subprocess failing: its own error, not the architecture
    model_capability,  # pipeline parallelism or LoRA asked of a model class that lacks it (facts/engine_architectures.json.gz)
    architecture_support,  # an architecture the engine's registry lacks: the releases that register it (facts/engine_architectures.json.gz)
    rope_type_unknown,  # a RoPE scaling type no release of either engine handles: a value written by hand (the raise site index)
    model_version,  # a checkpoint of a family's version newer than the release implements (facts/model_versions.json)
    engine_mode,  # a component of one engine mode (vLLM's V0, V1) refused by the other's check (facts/engine_modes.toml)
    kv_connector,  # a KV connector name vLLM's connector registry lacks: the releases that define it (facts/engine_modules.json.gz)
    quantized_parallel,  # a cut message opening the engine's check refusing the launch's quantization with its parallel mode
    model_files,  # a weights file given as the model, files missing from a checkpoint (facts/model_files.toml)
    dependencies.diagnose,  # a third-party import error against the release's pins (facts/requires.json)
    engine_own_signature,  # the engine's own code calling its own class with a keyword that class lacks: a regression
    caller_imports_engine_name,  # another program importing a name the installed engine does not have
    parser_names,  # a tool-call or reasoning parser name of the other kind, or none given where the request needs one
    settings_keyword,  # a program building the engine's settings with a keyword of other releases, or one keyword twice
    flag_checks,  # the engine's own checks of its flags after parsing: one flag needs another, a value off its registry
    feature_gate,  # the engine's own settings check refusing two settings together (the raise site index): drop one
)


def reason(evidence: Evidence) -> Diagnosis | None:
    """The diagnosis of a failure no pattern matched: a rule's, else the honest category's (None: nothing to say)."""
    for rule in RULES:
        diagnosis = rule(evidence)
        if diagnosis is not None:
            return diagnosis
    return categorize(evidence)
