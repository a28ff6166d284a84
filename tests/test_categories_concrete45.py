"""Stop 45 (concrete), in generic words (issue 28): general guidance that uses the evidence the paste itself shows.

- The launch's own settings the message speaks of, with the values given (reasoning/message_settings.py):
  SGLang's "Currently HybridAttentionBackend does not support speculative decoding." under --attention-backend,
  --prefill-attention-backend and --speculative-algorithm (sgl-project/sglang#9330); vLLM's "Invalid attention backend
  for cuda, with use_v1: False use_mla: False" under `VLLM_ATTENTION_BACKEND=TORCH_SDPA` (vllm-project/vllm#14320);
  "The input size is not aligned with the quantized weight shape. This can be caused by too large tensor parallel
  size." under --tensor-parallel-size 2 (QwenLM/Qwen3-VL#236), which is parallel arithmetic, not the quantization's.
- vLLM's attention selector refusing a backend it was told to use ("Selected backend AttentionBackendEnum.X is not
  valid for this configuration. Reason: [...]", raised only when a backend was selected:
  vllm/platforms/cuda.py; vllm-project/vllm#30214, kyuz0/amd-strix-halo-vllm-toolboxes#36).
- vLLM on no platform: the base class Platform's NotImplementedError (vllm/platforms/interface.py) after "No platform
  detected, vLLM is running on UnspecifiedPlatform" (sasha0552/pascal-pkgs-ci#22, vllm-project/vllm#14954).
- A failure raised in the engine's Transformers backend (vllm/model_executor/models/transformers.py): a model the
  release runs only through transformers' classes (vllm-project/vllm#27198, #23714; sgl-project/sglang PR#9614).
- An engine's own "… this should not happen" and torch's "doesn't match the broadcast shape" are the engine's code
  failing (sgl-project/sglang#14368, #28264).
- A module no release of the decided engine requires a package for (its wheels' Requires-Dist, facts/requires.json):
  an optional package a feature imports, which reinstalling the engine does not bring (vllm-project/vllm#22290:
  `triton_kernels` under vLLM's gpt-oss kernels), where the category's check compares pins there are none of.
- A quantization method as the subject of a negated support for tensor parallelism ("GGUF quantization hasn't supported
  tensor parallelism yet.", vllm-project/vllm#7662) is the quantization-by-TP row of parallel-config, as its other
  wordings are (linear.py's BNB check, mamba_mixer2.py's).
- vLLM's engine core re-raising a worker's error quoted as a name in quotes alone ("Worker failed with error
  ''float8_e8m0fnu''", vllm-project/vllm#46232): how a KeyError prints, a lookup of that name failed in the worker.
- A quantization capability check whose numbers the paste kept only on the line logged above a cut traceback
  (vllm-project/vllm#20216).
Tracebacks are real CPython's, from site-packages trees laid out as the engines'; the wordings are the engines'
own templates (the raise site index), rebuilt in our own code."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.guidance_text import settings_the_message_speaks_of
from logsleuth.reasoning.message_settings import normalized, settings_the_message_names
from tests.helpers import check_texts, diagnose_with_patterns, traceback_of_installed


def _raised_in(tmp_path: Path, module: str, body: str, call: str = "run()") -> str:
    """Real CPython's traceback of `body` (a function `run`'s statements) in `module` under site-packages."""
    source = "def run():\n" + "".join(f"    {line}\n" for line in body.splitlines())
    dotted = module.removesuffix(".py").replace("/", ".")
    proc = traceback_of_installed(tmp_path, {module: source}, f"from {dotted} import run\n{call}\n")
    assert proc.returncode != 0 and "Traceback" in proc.stderr, proc.stderr
    return proc.stderr


# -- the launch's settings the message speaks of ------------------------------------------------------------------

def test_the_launch_settings_a_refusal_names_are_named_with_their_values() -> None:
    log = ("python3 -m sglang.launch_server --model deepseek-ai/DeepSeek-V3-0324 --tp 8 --speculative-algorithm EAGLE "
           "--attention-backend trtllm_mla --prefill-attention-backend flashinfer\n"
           "AssertionError: Currently HybridAttentionBackend does not support speculative decoding.\n")
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.basis == "general" and diagnosis.category == "spec-decoding-args"
    steps = check_texts(diagnosis)
    assert "the message speaks of settings your launch gives" in steps
    for given in ("--speculative-algorithm EAGLE", "--attention-backend trtllm_mla", "--prefill-attention-backend flashinfer"):
        assert given in steps
    assert "--model deepseek" not in steps and "--tp 8" not in steps  # settings the message does not speak of


def test_an_engine_environment_variable_of_the_command_is_a_setting_too(tmp_path: Path) -> None:
    traceback = _raised_in(tmp_path, "vllm/attention/selector.py",
                           'raise ValueError(f"Invalid attention backend for {\'cuda\'}, with use_v1: False use_mla: False")')
    log = ("VLLM_ATTENTION_BACKEND=TORCH_SDPA vllm serve Qwen/Qwen2.5-32B-Instruct --max-model-len 2048 "
           "--tensor-parallel-size 8\n" + traceback)
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.basis == "general" and diagnosis.category == "feature-conflict"
    steps = check_texts(diagnosis)
    assert "VLLM_ATTENTION_BACKEND=TORCH_SDPA ('attention backend', an environment variable)" in steps
    assert "has no backend of that name for this platform and engine mode" in steps  # the row's checks_when
    assert "--max-model-len 2048" not in steps and "--tensor-parallel-size 8" not in steps


def test_a_quantized_weight_not_aligned_with_the_split_is_the_tensor_parallel_size(tmp_path: Path) -> None:
    traceback = _raised_in(
        tmp_path, "vllm/model_executor/layers/quantization/gptq.py",
        'raise ValueError("The input size is not aligned with the quantized weight shape. This can be caused by too '
        'large tensor parallel size.")')
    log = ("python -m vllm.entrypoints.openai.api_server --served-model-name qwen2vl --model "
           "/models/Qwen2-VL-72B-Instruct-GPTQ-Int4 --tensor-parallel-size 2\n" + traceback)
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category == "parallel-config", diagnosis.category
    assert "--tensor-parallel-size 2 ('tensor parallel size')" in check_texts(diagnosis)


def test_a_common_word_of_a_setting_names_no_setting() -> None:
    """torch's own messages speak of tensors about anything: "tensor" alone is not --tensor-parallel-size."""
    log = ("vllm serve /models/m --tensor-parallel-size 2 --enable-prefix-caching\n"
           "RuntimeError: The size of tensor a (4) must match the size of tensor b (8) at non-singleton dimension 1\n")
    diagnosis = diagnose_with_patterns(log)
    assert "speaks of" not in check_texts(diagnosis)


def test_a_secret_given_as_a_setting_is_never_named() -> None:
    log = ("VLLM_API_KEY=sk-abcdefghijklmnop1234 vllm serve /models/m --api-key sk-abcdefghijklmnop1234\n"
           "ValueError: the api key is not valid\n")
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    named = settings_the_message_names(report.failures[0].failure, report.launch)
    assert report.launch.command and "--api-key" in report.launch.command
    assert named == []


@pytest.mark.parametrize("category", ["unknown-flag", "invalid-flag-value", "missing-flag"])
def test_the_parser_categories_name_no_setting_the_message_speaks_of(category: str) -> None:
    """A refusal by the argument parser has checks of its own for the flag: the message's setting is not repeated
    there, while another category names it."""
    log = ("python3 -m sglang.launch_server --model-path /models/m --attention-backend trtllm_mla\n"
           "ValueError: Currently HybridAttentionBackend does not support speculative decoding.\n")
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    evidence = Evidence(failure=report.failures[0].failure, launch=report.launch)
    assert "--attention-backend trtllm_mla" in " ".join(settings_the_message_speaks_of(evidence, "feature-conflict"))
    assert settings_the_message_speaks_of(evidence, category) == ()


def test_a_path_is_no_setting_to_change_or_leave_out() -> None:
    log = ("python3 -m sglang.launch_server --model-path /models/llama --tokenizer-path /models/llama --port 30000\n"
           "ValueError: The model path /models/llama has no config.json, and the tokenizer path is the same\n")
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.launch.command and "--model-path" in report.launch.command
    assert settings_the_message_names(report.failures[0].failure, report.launch) == []


def test_names_and_values_are_read_whatever_their_spelling() -> None:
    assert normalized("HybridAttentionBackend does not support") == " hybrid attention backend does not support "
    assert normalized("use_v1: False") == " use v1 false "


# -- vLLM's attention selector --------------------------------------------------------------------------------------

def test_the_selector_refusing_a_chosen_backend_says_to_leave_it_unset(tmp_path: Path) -> None:
    traceback = _raised_in(
        tmp_path, "vllm/platforms/cuda.py",
        "selected_backend = 'AttentionBackendEnum.CUTLASS_MLA'\n"
        "invalid_reasons = ['sparse not supported']\n"
        'raise ValueError(f"Selected backend {selected_backend} is not valid for this configuration. '
        'Reason: {invalid_reasons}")')
    diagnosis = diagnose_with_patterns(traceback)
    assert diagnosis.basis == "general" and diagnosis.category == "feature-conflict", diagnosis.category
    steps = check_texts(diagnosis)
    assert "the Reason it prints names what is needed that the backend lacks" in steps
    assert "leave it unset" in steps


# -- vLLM on no platform --------------------------------------------------------------------------------------------

def test_the_platform_base_class_refusing_is_vllm_on_no_platform(tmp_path: Path) -> None:
    traceback = _raised_in(tmp_path, "vllm/platforms/interface.py", "raise NotImplementedError")
    log = ("WARNING 05-04 15:44:48 [__init__.py:26] The vLLM package was not found, so its version could not be "
           "inspected. This may cause platform detection to fail.\n"
           "INFO 05-04 15:44:48 [__init__.py:211] No platform detected, vLLM is running on UnspecifiedPlatform\n"
           + traceback)
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.basis == "general" and diagnosis.category == "orchestration", diagnosis.category
    assert "running on no platform" in diagnosis.title
    steps = check_texts(diagnosis)
    assert "nvidia-smi" in steps and "install it with pip" in steps


# -- the Transformers backend ---------------------------------------------------------------------------------------

def test_a_failure_in_the_transformers_backend_is_the_models_support(tmp_path: Path) -> None:
    traceback = _raised_in(
        tmp_path, "vllm/model_executor/models/transformers.py",
        "class MllamaProcessor:\n    pass\nMllamaProcessor()._get_num_multimodal_tokens()")
    diagnosis = diagnose_with_patterns(traceback)
    assert diagnosis.basis == "general" and diagnosis.category == "unsupported-architecture", diagnosis.category
    assert "Transformers backend" in diagnosis.title
    assert "a model a release dropped from its own list falls back to this backend" in check_texts(diagnosis)


# -- the engine's own invariants --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("module", "raising"), [
    # SGLang's own check that its invariant broke (srt/speculative/eagle_info.py)
    ("sglang/srt/speculative/eagle_info.py",
     'raise ValueError(f"length of new_indices: {5} != length of topk_p: {7}, this should not happen")'),
    # torch refusing an in-place op whose shapes do not broadcast to the output's, in the engine's code
    ("sglang/srt/model_executor/model_runner.py",
     'raise RuntimeError("output with shape [1] doesn\'t match the broadcast shape [276]")'),
])
def test_the_engines_own_broken_invariant_is_the_engines_code(tmp_path: Path, module: str, raising: str) -> None:
    diagnosis = diagnose_with_patterns(_raised_in(tmp_path, module, raising))
    assert diagnosis.category == "engine-bug", diagnosis.category


# -- numbers the message gives ----------------------------------------------------------------------------------------

def test_capability_numbers_logged_above_a_cut_traceback_are_read(tmp_path: Path) -> None:
    """vLLM's engine logs the exception's message, then its traceback, every line behind its logger's prefix; the
    paste kept the message and cut the traceback before its exception line."""
    module = "vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py"
    traceback = _raised_in(tmp_path, module, "raise RuntimeError('x')")
    cut = traceback.rstrip("\n").rsplit("\n", 1)[0]  # the paste lost the exception line
    message = "('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', 'Current capability: 75.')"
    prefix = "ERROR 07-02 03:13:11 [engine.py:458] "
    log = "".join(f"{prefix}{line}\n" for line in [message, *cut.splitlines()])
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category == "quantization", diagnosis.category
    assert "The message gives both numbers" in check_texts(diagnosis)


# -- a module no release requires -------------------------------------------------------------------------------------

def test_a_module_the_engine_requires_is_no_optional_package(tmp_path: Path) -> None:
    """SGLang's releases require sgl-kernel, which installs sgl_kernel: the pin comparison stands alone."""
    traceback = _raised_in(tmp_path, "sglang/srt/layers/activation.py", "import sgl_kernel")
    diagnosis = diagnose_with_patterns("python -m sglang.launch_server --model-path /models/m\n" + traceback)
    assert diagnosis.category == "dependency-version", diagnosis.category
    assert "optional package" not in check_texts(diagnosis)


# -- a worker's KeyError, quoted --------------------------------------------------------------------------------------

def test_a_worker_error_quoted_as_a_bare_name_is_a_failed_lookup(tmp_path: Path) -> None:
    traceback = _raised_in(
        tmp_path, "vllm/v1/executor/multiproc_executor.py",
        'e = KeyError("float8_e8m0fnu")  # the worker\'s exception, as vLLM formats it into its own\n'
        'raise RuntimeError(f"Worker failed with error \'{e}\', please check the stack trace above for the root cause")')
    assert "Worker failed with error ''float8_e8m0fnu''" in traceback
    diagnosis = diagnose_with_patterns(traceback)
    assert diagnosis.category == "process-killed", diagnosis.category
    assert "how a KeyError prints" in check_texts(diagnosis)


# -- rows whose check the failure's own evidence selects ---------------------------------------------------------------

@pytest.mark.parametrize(("module", "body", "command", "category", "check"), [
    # a quantization method as the subject of a negated support for tensor parallelism (vllm-project/vllm#7662)
    ("vllm/model_executor/layers/quantization/gguf.py",
     'raise ValueError("GGUF quantization hasn\'t supported tensor parallelism yet.")', "",
     "parallel-config", "cannot be split across GPUs by tensor parallelism"),
    # a module no vLLM release requires a package for (vllm-project/vllm#22290)
    ("vllm/model_executor/layers/fused_moe/gpt_oss_triton_kernels_moe.py", "import triton_kernels.swiglu",
     "vllm serve openai/gpt-oss-120b -tp 8\n", "dependency-version",
     "The module 'triton_kernels': no vLLM release logsleuth has read"),
])
def test_the_failures_own_evidence_selects_the_row_and_its_check(
        tmp_path: Path, module: str, body: str, command: str, category: str, check: str) -> None:
    diagnosis = diagnose_with_patterns(command + _raised_in(tmp_path, module, body))
    assert diagnosis.category == category, diagnosis.category
    assert check in check_texts(diagnosis)
