"""Split 14's misread classes (stop 51, issue 28): the category, and advice aimed at the right party, for

- a quantization method the engine does not implement for a model class (vLLM's and SGLang's BitsAndBytes loader:
  "Model X does not support BitsAndBytes quantization yet.", the loader's assert "vllm currently does not support BNB
  quantization for X"): quantization (vllm-project/vllm#7624, vllm-project/vllm#9967);
- the engine's config code failing on the model's rope_scaling (vLLM 0.4-0.6's `assert "factor" in rope_scaling` in
  _get_and_verify_max_len): the engine and the installed transformers disagreeing, dependency-version
  (vllm-project/vllm#8388 and the Qwen2-VL threads that cite it; sgl-project/sglang#746);
- a RoPE scaling type no indexed release of either engine handles ("Unknown RoPE scaling type extended",
  vllm-project/vllm#6689): a value written by hand, invalid-flag-value, the launch's override named only when given;
- an op-replacement plugin's tuning runtime refusing the accelerator's Triton backend (FlagTree's
  python/triton/flagtune/runtime/device.py: "FlagTune does not support Triton backend 'corex'; registered backends:
  …", flagos-ai/FlagGems#6095): gpu-arch-unsupported, checks aimed at the library;
- (the container runtime refusing the image: tests/reasoning/test_container_runtime.py, now orchestration.)

Tracebacks are printed by the real interpreter (tests.helpers.real_traceback) from mirrored engine paths."""

from __future__ import annotations

from logsleuth.models import Fix
from tests.helpers import diagnose_without_patterns, real_traceback
from tests.reasoning.diagnosed import first_diagnosis

_NO_FIX = Fix(summary="")

VLLM_BANNER = "INFO 05-21 18:19:15 [api_server.py:1043] vLLM API server version 0.6.3.post1\n"


def _raised(path: str, statement: str, function: str = "check") -> str:
    return real_traceback(f"""
        def {function}(rope_scaling=None):
            {statement}
        {function}({{"type": "default", "mrope_section": [16, 24, 24]}})
        """, path)


def test_the_bnb_loaders_assert_for_a_class_without_target_modules_is_quantization() -> None:
    text = _raised("vllm/model_executor/model_loader/bitsandbytes_loader.py",
                   "assert False, 'vllm currently does not support BNB quantization for LlavaForConditionalGeneration'",
                   "_get_bnb_target_modules")
    diagnosis = diagnose_without_patterns(VLLM_BANNER + text)
    assert diagnosis.category == "quantization", diagnosis.title
    assert "another quantization method" in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_the_max_length_checks_assert_on_rope_scaling_is_a_version_disagreement() -> None:
    text = _raised("vllm/config.py", 'assert "factor" in rope_scaling', "_get_and_verify_max_len")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "dependency-version", diagnosis.title
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "pip show transformers" in steps and "--max-model-len" not in steps


LAUNCH = ("vllm serve meta-llama/Meta-Llama-3.1-8B-Instruct --rope-scaling "
          "'{\"type\": \"extended\", \"factor\": 8.0}'\n")
UNKNOWN = ('[rank0]:     raise ValueError(f"Unknown RoPE scaling type {scaling_type}")\n'
           "[rank0]: ValueError: Unknown RoPE scaling type extended\n")


def test_a_rope_type_no_release_handles_is_the_users_value_and_names_the_override_given() -> None:
    diagnosis = first_diagnosis(LAUNCH + UNKNOWN)
    assert (diagnosis.pattern, diagnosis.category) == ("rule-rope-type-unknown", "invalid-flag-value")
    assert diagnosis.fix is not None and "--rope-scaling" in diagnosis.fix.summary


def test_without_a_launch_no_override_flag_is_named() -> None:
    diagnosis = first_diagnosis(UNKNOWN)
    assert diagnosis.category == "invalid-flag-value"
    assert diagnosis.fix is not None and "--" not in diagnosis.fix.summary and "general guidance" in diagnosis.fix.summary


def test_a_rope_type_some_release_handles_is_not_the_users_value() -> None:
    """'mrope' is Qwen2-VL's config-level type (vLLM reads its mrope_section), 'default' a type every recent release
    handles."""
    for rope_type in ("default", "mrope", "llama3"):
        assert first_diagnosis(f"ValueError: Unknown RoPE scaling type {rope_type}\n").category == "dependency-version"


def test_a_plugins_refusal_of_the_accelerators_backend_is_gpu_arch_unsupported() -> None:
    line = ("triton.flagtune.runtime.device.UnsupportedFlagTuneDeviceError: FlagTune does not support Triton backend "
            "'corex'; registered backends: cuda, hip, maca, musa\n")
    diagnosis = diagnose_without_patterns(line)
    assert diagnosis.category == "gpu-arch-unsupported", diagnosis.title
    assert "library" in diagnosis.title


def test_a_general_override_counts_only_when_it_sets_the_rope() -> None:
    unrelated = "vllm serve m --hf-overrides '{\"architectures\": [\"LlamaForCausalLM\"]}'\n"
    assert "--hf-overrides" not in (first_diagnosis(unrelated + UNKNOWN).fix or _NO_FIX).summary
    rope = "vllm serve m --hf-overrides '{\"rope_scaling\": {\"rope_type\": \"extended\"}}'\n"
    assert "--hf-overrides" in (first_diagnosis(rope + UNKNOWN).fix or _NO_FIX).summary
