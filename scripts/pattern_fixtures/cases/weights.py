"""Loading the model: checkpoint tensor names the model has no parameter for, and architectures
SGLang does not implement.

Patterns: sglang-weight-key-quant-scale, sglang-weight-key-lm-head, sglang-weight-key-mismatch,
sglang-unsupported-architecture.
"""

from __future__ import annotations

from ..engine import Frame
from ..mirror import (
    LOAD_BEGIN,
    LOADER,
    MODEL_RUNNER,
    QWEN2,
    VERSIONS,
    raise_frame,
    scheduler_crash,
    to_load_model,
    to_model_runner,
    weight_key_error,
)

QWEN3_MOE = "sglang/srt/models/qwen3_moe.py"
LLAMA_EAGLE3 = "sglang/srt/models/llama_eagle3.py"
REGISTRY = "sglang/srt/models/registry.py"

# (pattern, fixture name, the model's file, the checkpoint key it does not know, version)
KEY_ERRORS = (
    ("sglang-weight-key-quant-scale", "positive-0.5.9-fp8-scale", QWEN3_MOE, "model.layers.0.mlp.experts.w13_weight_scale_inv", "0.5.9"),
    ("sglang-weight-key-quant-scale", "positive-0.4.10.post2-input-scale", "sglang/srt/models/llama.py", "model.layers.12.self_attn.qkv_proj.input_scale", "0.4.10.post2"),
    ("sglang-weight-key-quant-scale", "negative-lm-head", QWEN2, "lm_head.weight", "0.5.9"),
    ("sglang-weight-key-lm-head", "positive-0.5.23", QWEN2, "lm_head.weight", "0.5.23"),
    ("sglang-weight-key-lm-head", "positive-0.5.9-draft", LLAMA_EAGLE3, "lm_head.weight", "0.5.9"),
    ("sglang-weight-key-lm-head", "negative-scale", QWEN3_MOE, "model.layers.0.mlp.experts.w2_weight_scale", "0.5.9"),
    ("sglang-weight-key-mismatch", "positive-0.5.9-layer-name", LLAMA_EAGLE3, "layers.0.self_attn.q_proj.weight", "0.5.9"),
)

RESOLVE_MODEL_CLS = Frame(REGISTRY, "resolve_model_cls", "return self._raise_for_unsupported(architectures)", lineno=70)


def to_model_registry(version: str) -> tuple[Frame, ...]:
    """The loader asking the model registry for the checkpoint's architecture."""
    return (
        *to_load_model(version),
        Frame(LOADER, "load_model", "model = _initialize_model(model_config, self.load_config)", lineno=640),
        Frame(LOADER, "_initialize_model", "model_class, _ = get_model_architecture(model_config)", lineno=210),
        Frame("sglang/srt/model_loader/utils.py", "get_model_architecture", "return ModelRegistry.resolve_model_cls(architectures)", lineno=110),
        RESOLVE_MODEL_CLS,
    )


UNSUPPORTED = raise_frame(REGISTRY, "_raise_for_unsupported", """
    raise ValueError(
        f"Model architectures {architectures} are not supported for now. "
        f"Supported architectures: {self.models.keys()}"
    )
    """, env=(("architectures", "['Glm4vMoeForConditionalGeneration']"),
              ("self", "NS(models={'LlamaForCausalLM': 1, 'Qwen2ForCausalLM': 1, 'Qwen3MoeForCausalLM': 1, 'DeepseekV3ForCausalLM': 1})")), lineno=30)
INSPECT_FAILED = raise_frame(REGISTRY, "_raise_for_unsupported", """
    raise ValueError(
        f"Model architectures {architectures} failed to be inspected. Please check the logs for more details."
    )
    """, env=(("architectures", "['Qwen3MoeForCausalLM']"),), lineno=28)
# a KeyError outside the weights: the attention backend table
BACKEND_KEY_ERROR = raise_frame(MODEL_RUNNER, "initialize", "self.attn_backend = ATTENTION_BACKENDS[self.server_args.attention_backend](self)",
                                env=(("self", "NS(server_args=NS(attention_backend='flashinfer_mla'))"), ("ATTENTION_BACKENDS", "{'flashinfer': None}")), lineno=700)

CASES = (
    *(scheduler_crash(pattern, name, weight_key_error(model, key, version), before=(LOAD_BEGIN,))
      for pattern, name, model, key, version in KEY_ERRORS),
    scheduler_crash("sglang-weight-key-mismatch", "negative-server-args-keyerror", (*to_model_runner("0.5.9"), BACKEND_KEY_ERROR)),

    *(scheduler_crash("sglang-unsupported-architecture", f"positive-{version}", (*to_model_registry(version), UNSUPPORTED), before=(LOAD_BEGIN,))
      for version in VERSIONS),
    scheduler_crash("sglang-unsupported-architecture", "negative-inspect-failed", (*to_load_model("0.5.9"), RESOLVE_MODEL_CLS, INSPECT_FAILED)),
)
