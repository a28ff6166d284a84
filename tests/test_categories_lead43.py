"""Three code sites the round's sweeps filed wrong (issue 28), each read from the engine's or the kernel's own words:
vLLM's config-format detection finding no config file where the model argument points (vllm/transformers_utils/
config.py get_config) is the model path, whatever the path's own words say (a repo named …-AWQ is not a quantization
failure); ROCm flash-attention's refusal of a GPU older than MI200 is the GPU's architecture, as the CUDA build's
"only supports Ampere GPUs or newer" is; vLLM's multimodal processor refusing a prompt with more items than
--limit-mm-per-prompt allows is that setting's value.  Look-alikes keep their categories."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("no_rules")


def _raised(exception: str, message: str, filename: str = "vllm/engine/arg_utils.py") -> str:
    """What the real interpreter prints when the engine's start-up raises `exception(message)`."""
    return real_traceback(f"""
def create_engine_config(model):
    raise {exception}({message!r})

create_engine_config("m")
""", filename)


@pytest.mark.parametrize("message", [
    "No supported config format found in /data/models/Qwen2.5-VL-7B-Instruct-AWQ",  # vLLM 0.6-0.8
    "Could not detect config format for no config file found. With config_format 'auto', ensure your model has "
    "either config.json (HF format) or params.json (Mistral format).",  # vLLM 0.11
])
def test_no_config_file_where_the_model_points_is_the_model_path(message: str) -> None:
    assert diagnose_without_patterns(_raised("ValueError", message)).category == "model-path"


def test_a_quantized_checkpoint_the_method_does_not_fit_stays_quantization() -> None:
    message = "Cannot find the config file for awq in /data/models/Qwen2.5-7B-Instruct-AWQ"
    assert diagnose_without_patterns(_raised("ValueError", message)).category == "quantization"


@pytest.mark.parametrize("message", [
    "FlashAttention only supports AMD MI200 GPUs or newer.",  # ROCm flash-attention, vllm-project/vllm#3040
    "FlashAttention only supports Ampere GPUs or newer.",  # flash-attn's CUDA build
])
def test_flash_attention_refusing_an_older_gpu_is_the_gpu_architecture(message: str) -> None:
    traceback = _raised("RuntimeError", message, "vllm/attention/backends/rocm_flash_attn.py")
    assert diagnose_without_patterns(traceback).category == "gpu-arch-unsupported"


def test_an_attention_backend_refusing_a_head_size_stays_the_backend() -> None:
    message = "Head size 80 is not supported by FlashAttention. Supported head sizes are: [64, 128, 256]."
    traceback = _raised("ValueError", message, "vllm/attention/backends/rocm_flash_attn.py")
    assert diagnose_without_patterns(traceback).category != "gpu-arch-unsupported"


@pytest.mark.parametrize("message", [
    "You set image=2 (or defaulted to 1) in `--limit-mm-per-prompt`, but passed 3 image items in the same prompt.",
    "At most 1 image(s) may be provided in one prompt. Set `--limit-mm-per-prompt` to increase this limit.",
])
def test_more_images_than_the_per_prompt_limit_is_that_setting(message: str) -> None:
    diagnosis = diagnose_without_patterns(_raised("ValueError", message, "vllm/multimodal/processing.py"))
    assert diagnosis.category == "invalid-flag-value"
    assert "per-prompt limit" in diagnosis.title


def test_a_text_only_model_given_the_limit_is_not_a_request_over_it() -> None:
    message = "limit_mm_per_prompt is only supported for multimodal models."
    assert "per-prompt limit" not in diagnose_without_patterns(_raised("ValueError", message)).title
