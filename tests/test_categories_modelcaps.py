"""Stop 48's model-capability sweep (issue 28): a launch asking a model class for what it does not implement in the
installed release (pipeline parallelism, LoRA, a quantization method's loading), and a config whose rope scaling the
release does not read.  Read before as an engine bug, an unsupported model, an adapter that does not fit or a
context-length setting; each row cites the code site that raises its message (facts/categories.toml).

Threads (the engines' words): vllm-project/vllm#16231, #9844, #7684 and sgl-project/sglang PR#25284 (pipeline
parallelism), vllm-project/vllm#3044, #17636, #6148, #16894, #10178, #18384, #8484 (LoRA), vllm-project/vllm#7624
(BitsAndBytes), sgl-project/sglang#746 and huggingface/transformers#32167 (a bare KeyError 'rope_type').  Tracebacks
are printed by the real interpreter (tests.helpers.real_traceback) from mirrored engine paths."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

# The honest category alone: the reasoning rules set aside (the LoRA wordings are rule-model-capability's too).
pytestmark = pytest.mark.usefixtures("no_rules")
VLLM_BANNER = "INFO 05-21 18:19:15 [api_server.py:1043] vLLM API server version 0.9.2\n"
SGLANG_BANNER = "[2026-03-02 10:00:00] sglang version 0.5.9\n"


def _raised(path: str, statement: str) -> str:
    return real_traceback(f"""
        def check():
            {statement}
        check()
        """, path)


PIPELINE_REFUSALS = [
    (VLLM_BANNER, "vllm/config.py", "raise NotImplementedError('Pipeline parallelism is not supported for this model. "
     "Supported models implement the `SupportsPP` interface.')"),
    ("", "vllm/config.py", "raise NotImplementedError(\"Pipeline parallelism is only supported for the following  "
     "architectures: ['LlamaForCausalLM', 'Qwen2ForCausalLM'].\")"),
    (SGLANG_BANNER, "sglang/srt/model_executor/model_runner.py",
     "assert False, 'Pipeline Parallel is not compatible with this model.'"),
    (SGLANG_BANNER, "sglang/srt/models/mistral_eagle.py",
     "assert False, 'MistralForCausalLMEagle currently does not support pipeline parallelism'"),
]


@pytest.mark.parametrize(("banner", "path", "statement"), PIPELINE_REFUSALS,
                         ids=["vllm-supports-pp", "vllm-0.5-list", "sglang-runner", "sglang-model-class"])
def test_pipeline_parallelism_refused_for_the_model_is_the_layout(banner: str, path: str, statement: str) -> None:
    diagnosis = diagnose_without_patterns(banner + _raised(path, statement))
    assert diagnosis.category == "parallel-config", diagnosis.title
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "tensor parallelism instead" in steps and "divide" in steps
    assert "a newer release of" not in steps.split("tensor parallelism instead")[0]  # no engine-bug reading first


def test_a_connectors_pipeline_refusal_is_not_the_models() -> None:
    """A KV connector's refusal names no model class: not the model-class row."""
    text = _raised("vllm/distributed/kv_transfer/kv_connector/v1/mooncake_connector.py",
                   "raise ValueError('Mooncake Transfer Engine does not support pipeline parallelism yet.')")
    assert "model class" not in diagnose_without_patterns(VLLM_BANNER + text).title


LORA_REFUSALS = [
    ("vllm/model_executor/model_loader/loader.py", "raise ValueError('Model GemmaForCausalLM does not support LoRA, "
     "but LoRA is enabled. Support for this model may be added in the future. If this is important to you, please "
     "open an issue on github.')"),
    ("vllm/worker/model_runner.py", "assert False, 'Llama4ForConditionalGeneration does not support LoRA yet.'"),
    ("vllm/v1/worker/lora_model_runner_mixin.py", "raise ValueError('DeepseekV3ForCausalLM does not support LoRA yet.')"),
    ("vllm/config/lora.py", "raise ValueError('LoRA is not supported for Qwen3NextForCausalLM (qwen3_next). Supported "
     "models implement the `SupportsLoRA` interface. Run this model without `enable_lora`.')"),
]


@pytest.mark.parametrize(("path", "statement"), LORA_REFUSALS, ids=["loader", "v0-runner", "v1-runner", "lora-config"])
def test_lora_refused_for_the_model_class_is_not_the_adapter(path: str, statement: str) -> None:
    diagnosis = diagnose_without_patterns(VLLM_BANNER + _raised(path, statement))
    assert diagnosis.category == "lora-config"
    assert "does not implement LoRA" in diagnosis.title
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "merge the adapter" in steps and "--enable-lora" in steps


@pytest.mark.parametrize(("banner", "path", "statement"), [
    (SGLANG_BANNER, "sglang/srt/model_executor/cpu_graph_runner.py",
     "raise ValueError('CPUGraphRunner does not support LoRA yet.')"),
    (VLLM_BANNER, "vllm/v1/worker/gpu/pcp_manager.py", "raise ValueError('MRV2 PCP does not support LoRA yet.')"),
    (VLLM_BANNER, "vllm/config/vllm.py", "raise ValueError('Direct reload does not support LoRA.')"),
], ids=["sglang-cpu-graph-runner", "vllm-mrv2-pcp", "vllm-direct-reload"])
def test_a_runners_or_features_lora_refusal_is_not_the_model_class(banner: str, path: str, statement: str) -> None:
    """Guards review M1 (and L7) of stop 48: a runner or a feature combination refusing LoRA in the model-class
    wording (SGLang's cpu_graph_runner.py, vLLM's v1/worker/gpu/pcp_manager.py, the raise site index) is not the
    model's class: no "merge the adapter, the adapter is not the cause"."""
    diagnosis = diagnose_without_patterns(banner + _raised(path, statement))
    assert "does not implement LoRA" not in diagnosis.title


def test_a_quantization_loader_the_class_lacks_is_a_quantization_method_for_that_class() -> None:
    """Split 14 (vllm-project/vllm#9967, Llava) graded it quantization, not unsupported-architecture (stop 51)."""
    text = _raised("vllm/model_executor/model_loader/loader.py",
                   "raise AttributeError('Model Qwen2ForCausalLM does not support BitsAndBytes quantization yet.')")
    diagnosis = diagnose_without_patterns(VLLM_BANNER + text)
    assert diagnosis.category == "quantization"
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "another quantization method" in steps


@pytest.mark.parametrize("text", [
    "ValueError: Unknown RoPE scaling type default\n",
    SGLANG_BANNER + "KeyError: 'rope_type'\n",
], ids=["unknown-rope-type", "bare-keyerror-rope-type"])
def test_a_rope_scaling_the_release_does_not_read_is_no_context_length_fix(text: str) -> None:
    """A rope type some release handles ('default', transformers' rewrite of Qwen2-VL's 'mrope') or a key an older
    transformers lacks: the engine and transformers disagreeing on the config's form (stop 51: dependency-version)."""
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "dependency-version", diagnosis.title
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "rope_scaling" in steps and "--max-model-len" not in steps and "--context-length" not in steps


@pytest.mark.parametrize("key", ["rope_theta_extra", "rope_parameters"])
def test_a_bare_keyerror_of_another_key_is_not_the_rope_row(key: str) -> None:
    """Guards review L5 of stop 48: only 'rope_type' is cited as a bare KeyError of the length check
    (sgl-project/sglang#746, huggingface/transformers#32167); no thread or code site raises a bare 'rope_parameters'."""
    assert "rope" not in diagnose_without_patterns(SGLANG_BANNER + f"KeyError: '{key}'\n").title
