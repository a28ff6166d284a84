"""Rule rule-embedding-checkpoint-as-generator (reasoning/pooling_checkpoint.py): an embedding model's checkpoint
(a bare base model's tensor names: embed_tokens, layers, norm) built as a `…ForCausalLM` text generator.

The tracebacks are printed by real CPython: a mirrored AutoWeightsLoader._load_module (vllm/model_executor/models/
utils.py) looks each checkpoint name's first part up in the model's modules and raises vLLM's message for the first
it lacks.  Threads: gpustack/gpustack#2170 (0.8.5, 'embed_tokens'), vllm-project/vllm#21614 (0.10.0, 'layers'),
vllm-project/vllm-ascend#2556 (CustomQwen3ForCausalLM); each resolved by serving the model as an embedding model."""

from __future__ import annotations

import pytest

from tests.helpers import real_traceback
from tests.reasoning.diagnosed import first_diagnosis

LOAD_MODULE = """
    class MODEL:
        modules = {"model"}

    def _load_module(module, weights):
        for name in weights:
            prefix = name.split(".")[0]
            if prefix not in module.modules:
                msg = f"There is no module or parameter named '{prefix}' in {type(module).__name__}"
                raise ValueError(msg)

    _load_module(MODEL(), [NAME])
"""


def _vllm_log(tensor: str, model: str = "Qwen3ForCausalLM", launch: str = "vllm serve Qwen/Qwen3-Embedding-8B\n") -> str:
    code = LOAD_MODULE.replace("MODEL", model).replace("NAME", repr(tensor))
    return launch + real_traceback(code, "vllm/model_executor/models/utils.py")


@pytest.mark.parametrize(("tensor", "model"), [
    ("embed_tokens.weight", "Qwen3ForCausalLM"),  # gpustack/gpustack#2170
    ("layers.0.self_attn.q_proj.weight", "Qwen3ForCausalLM"),  # vllm-project/vllm#21614
    ("embed_tokens.weight", "CustomQwen3ForCausalLM"),  # vllm-project/vllm-ascend#2556 (the vendor's subclass)
])
def test_an_embedding_checkpoint_built_as_a_generator_is_served_as_an_embedding_model(tensor: str, model: str) -> None:
    diagnosis = first_diagnosis(_vllm_log(tensor, model))
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == (
        "rule-embedding-checkpoint-as-generator", "weight-loading", "rule")
    assert diagnosis.fix is not None
    # No release named: both flags, no corrected command built on a flag the user's release may lack.
    assert "--runner pooling or --task embed" in diagnosis.fix.summary and not diagnosis.fix.flags
    assert diagnosis.fix.needs_input


def test_the_release_s_own_flag_and_the_corrected_command() -> None:
    log = "INFO 07-26 10:02:11 [__init__.py:244] vLLM version 0.10.0\n" + _vllm_log("layers.0.mlp.up_proj.weight")
    diagnosis = first_diagnosis(log)
    assert diagnosis.fix is not None and diagnosis.fix.summary.endswith("set --task embed.")
    assert diagnosis.fix.command == "vllm serve Qwen/Qwen3-Embedding-8B --task embed"
    newer = first_diagnosis("INFO 12-01 10:02:11 [__init__.py:244] vLLM version 0.11.2\n"
                            + _vllm_log("embed_tokens.weight"))
    assert newer.fix is not None and newer.fix.command == (
        "vllm serve Qwen/Qwen3-Embedding-8B --runner pooling --convert embed")


def test_a_launch_already_serving_an_embedding_model_gets_no_flag() -> None:
    log = _vllm_log("embed_tokens.weight", launch="vllm serve /data/Qwen3-Embedding-0.6B --task embedding\n")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-embedding-checkpoint-as-generator"
    assert diagnosis.fix is not None and not diagnosis.fix.flags and "--task" not in diagnosis.fix.summary
    assert "newer vLLM release" in diagnosis.fix.summary


@pytest.mark.parametrize(("tensor", "model"), [
    ("lm_head.weight", "Gemma3nForConditionalGeneration"),  # a fine-tuned checkpoint's head: another cause
    ("score.weight", "Qwen2ForCausalLM"),  # a classification head
    ("embed_tokens.weight", "Qwen2EmbeddingModel"),  # already an embedding class
    ("_orig_mod.model.layers.0.weight", "Qwen2ForCausalLM"),  # torch.compile's wrapper prefix
])
def test_other_names_and_classes_are_not_this_rule(tensor: str, model: str) -> None:
    diagnosis = first_diagnosis(_vllm_log(tensor, model))
    assert diagnosis.pattern != "rule-embedding-checkpoint-as-generator"
