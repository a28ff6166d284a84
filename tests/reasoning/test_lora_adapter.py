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


# vLLM's LoRA loader refusing an adapter's tensor (vllm/lora/utils.py parse_fine_tuned_lora_name), mirrored so real
# CPython prints the traceback: the adapter was given as an adapter, but holds a tensor the loader does not take.
PARSE_LORA_NAME = """
    def parse_fine_tuned_lora_name(name):
        parts = name.split(".")
        if parts[-1] == "weight" and parts[-2] in ("lora_A", "lora_B") and "visual" not in parts:
            return ".".join(parts[2:-2]), parts[-2] == "lora_A"
        raise ValueError(f"{name} is unsupported LoRA weight")

    parse_fine_tuned_lora_name(NAME)
"""
VLLM_LORA_LAUNCH = "vllm serve Qwen/Qwen2.5-3B-Instruct --enable-lora --lora-modules otas=/ckpt/otas-adapter\n"


def _vllm_lora_log(tensor: str) -> str:
    return VLLM_LORA_LAUNCH + real_traceback(PARSE_LORA_NAME.replace("NAME", repr(tensor)), "vllm/lora/utils.py")


def test_a_full_weight_saved_with_the_adapter_is_named_with_modules_to_save() -> None:
    """The shape of vllm-project/vllm#9280: PEFT's modules_to_save put lm_head's whole weight in the adapter."""
    diagnosis = first_diagnosis(_vllm_lora_log("base_model.model.lm_head.weight"))
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == ("rule-lora-weight-unsupported", "lora-config", "rule")
    assert "base_model.model.lm_head.weight" in diagnosis.root_cause and "modules_to_save" in diagnosis.root_cause
    assert diagnosis.fix is not None and "without modules_to_save" in diagnosis.fix.summary
    assert not diagnosis.fix.flags and diagnosis.fix.command is None  # no server setting makes the loader take it


def test_lora_matrices_of_a_module_the_release_does_not_serve_say_so() -> None:
    """The shape of vllm-project/vllm#21500: an adapter trained on a vision tower's layers."""
    diagnosis = first_diagnosis(_vllm_lora_log("base_model.model.visual.blocks.0.attn.qkv.lora_A.weight"))
    assert diagnosis.pattern == "rule-lora-weight-unsupported"
    assert "does not serve LoRA on" in diagnosis.root_cause and "modules_to_save" not in diagnosis.root_cause
    assert diagnosis.fix is not None and "merge" in diagnosis.fix.summary


def test_the_same_words_inside_another_message_are_not_the_loader_s_refusal() -> None:
    """A look-alike: a LoRA error that is not the loader refusing a tensor keeps its own reading."""
    log = VLLM_LORA_LAUNCH + real_traceback('raise ValueError("LoRA rank 64 is greater than max_lora_rank 16.")\n',
                                            "vllm/lora/peft_helper.py")
    assert first_diagnosis(log).pattern != "rule-lora-weight-unsupported"
