"""Rule rule-lora-adapter-as-model (reasoning/lora_adapter.py): a LoRA adapter's checkpoint given as the model.

The tracebacks are printed by real CPython: a mirrored `load_weights` looks a checkpoint's tensor names up in the
model's parameters (`param = params_dict[name]`, as SGLang's and vLLM's model files do), and the checkpoint is an
adapter's (PEFT's names: `…q_proj.lora_A.weight`).  A base model's unknown tensor stays the weight-key pattern's."""

from __future__ import annotations

from tests.helpers import real_traceback
from tests.reasoning.diagnosed import first_diagnosis

LOAD_WEIGHTS = """
    def load_weights(weights):
        params_dict = {"model.layers.0.self_attn.qkv_proj.weight": None}
        for name in weights:
            param = params_dict[name]

    load_weights([NAME])
"""


def _sglang_log(tensor: str, launch: str) -> str:
    return launch + real_traceback(LOAD_WEIGHTS.replace("NAME", repr(tensor)), "sglang/srt/models/llama.py")


def test_an_adapter_given_as_the_model_gets_the_base_model_and_the_release_s_lora_flag() -> None:
    log = _sglang_log("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight",
                      "python3 -m sglang.launch_server --model-path /ckpt/my-lora --port 30000\n")
    diagnosis = first_diagnosis(log)
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == ("rule-lora-adapter-as-model", "lora-config", "rule")
    assert diagnosis.fix is not None and "--lora-paths" in diagnosis.fix.summary and not diagnosis.fix.flags
    assert any("base_model_name_or_path" in need for need in diagnosis.fix.needs_input)
    assert "Renaming tensors does not help" in diagnosis.root_cause


def test_vllm_is_told_its_own_lora_flags() -> None:
    log = "vllm serve /ckpt/my-lora\n" + real_traceback(
        LOAD_WEIGHTS.replace("NAME", repr("model.layers.3.mlp.down_proj.lora_B.weight")), "vllm/model_executor/models/qwen2.py")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-lora-adapter-as-model"
    assert diagnosis.fix is not None and "--enable-lora --lora-modules" in diagnosis.fix.summary
    assert "--lora-paths" not in diagnosis.fix.summary


def test_a_base_model_tensor_the_model_lacks_stays_a_weight_key_mismatch() -> None:
    log = _sglang_log("model.layers.0.self_attn.rotary_emb.inv_freq_extra",
                      "python3 -m sglang.launch_server --model-path /ckpt/model --port 30000\n")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "sglang-weight-key-mismatch" and diagnosis.category == "weight-loading"
