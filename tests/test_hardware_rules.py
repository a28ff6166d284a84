"""Hardware limits (issue 28, item 3): the rule that names a dtype, kernel, compiler target or build the GPU's
architecture lacks (logsleuth/reasoning/hardware.py), through the api as a user sees it.

Every message below is our own fixture text in the wording of the code that raises it (the site is named
beside it); none is a user's paste."""

from __future__ import annotations

import pytest

from logsleuth import api
from logsleuth.models import Diagnosis

SGLANG_LAUNCH = "python -m sglang.launch_server --model-path /models/m --attention-backend {backend} --port 30000\n"


def _diagnosis(text: str) -> Diagnosis:
    report = api.diagnose_text(text)
    assert report.failures, "no failure found"
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None
    return diagnosis


def _raised(message: str, where: str = "/usr/lib/python3.10/site-packages/somepkg/layer.py", function: str = "setup") -> str:
    """A traceback as CPython prints it, its frame in a package that names no engine."""
    return (
        "Traceback (most recent call last):\n"
        f'  File "{where}", line 42, in {function}\n'
        "    check_device()\n"
        f"{message}\n"
    )


# ---- the rule ------------------------------------------------------------------------------------------------


def test_an_attention_backend_for_another_architecture_on_sglang_gets_a_backend_of_its_catalog() -> None:
    # sglang 0.4.10.post2 srt/server_args.py:431 raises this for trtllm_mla off Blackwell
    log = SGLANG_LAUNCH.format(backend="trtllm_mla") + _raised(
        "ValueError: TRTLLM MLA backend is only supported on Blackwell GPUs (SM100). Please use a different backend."
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.basis == "rule" and diagnosis.category == "gpu-arch-unsupported"
    assert diagnosis.fix is not None
    assert [(op.op, op.flag, op.value) for op in diagnosis.fix.flags] == [("set", "--attention-backend", "triton")]
    assert "--attention-backend triton" in (diagnosis.fix.command or "")
    assert any("sm_100" in line for line in diagnosis.evidence)


def test_a_version_window_in_the_message_wins_over_the_table() -> None:
    # sglang srt/layers/attention/attention_registry.py:244 (0.5.23), model_runner.py:1432 (0.4.10.post2)
    log = "GPU 0: NVIDIA GeForce RTX 5090\n" + SGLANG_LAUNCH.format(backend="fa3") + _raised(
        "AssertionError: FlashAttention v3 Backend requires SM>=80 and SM<=90. Please use `--attention-backend flashinfer`."
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.pattern == "rule-gpu-arch-unsupported"
    assert "compute capability 8.0 or newer and at most 9.0" in " ".join(diagnosis.evidence)


def test_bf16_on_turing_with_the_engine_unknown_gives_float16_without_naming_one_engine_flag_as_a_change() -> None:
    # torch/amp/autocast_mode.py raises this when the device lacks bfloat16 (karpathy/nanoGPT#277, isi-nlp/rtg#20)
    log = (
        "|   0  Tesla T4                       Off |   00000000:00:04.0 Off |                    0 |\n"
        + _raised("RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.")
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.basis == "rule" and diagnosis.category == "gpu-arch-unsupported"
    assert diagnosis.evidence[0] == "GPU: Tesla T4 (compute capability 7.5)"
    assert diagnosis.fix is not None and diagnosis.fix.flags == () and diagnosis.fix.command is None
    assert "float16" in diagnosis.fix.summary
    assert "SGLang 0.4.10.post2, 0.5.9" in diagnosis.fix.steps[0] and "vLLM 0.11.2, 0.33.0" in diagnosis.fix.steps[0]


def test_bf16_on_a_known_engine_sets_dtype_float16_from_its_catalog() -> None:
    log = SGLANG_LAUNCH.format(backend="triton") + _raised(
        "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16."
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.fix is not None
    assert [(op.op, op.flag, op.value) for op in diagnosis.fix.flags] == [("set", "--dtype", "float16")]
    assert any("nvidia-smi --query-gpu=name,compute_cap --format=csv" in step for step in diagnosis.fix.steps)


def test_a_quantization_minimum_on_a_log_without_engine_is_reasoned_not_left_engine_unknown() -> None:
    # vllm/config/vllm.py (0.11.2, 0.33.0) words it; the pattern vllm-quantization-capability is vLLM's only
    log = _raised(
        "ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70."
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.pattern == "rule-gpu-arch-unsupported"
    assert diagnosis.evidence[:2] == ("GPU: the GPU (compute capability 7.0)", "awq quantization needs compute capability 7.5 or newer (the message)")
    assert diagnosis.fix is not None and "quantization this GPU supports" in diagnosis.fix.summary
    # a GPU known only by its capability (vllm-project/vllm#1488's one line) reads "the GPU (...)", not "the the GPU"
    assert "and the GPU (compute capability 7.0) does not have it" in diagnosis.root_cause, diagnosis.root_cause


def test_an_sm100_only_kernel_on_hopper_names_the_gpu_and_the_arch() -> None:
    # sglang 0.5.23 srt/layers/quantization/fp8.py:2323
    log = "GPU 0: NVIDIA H100 80GB HBM3\n" + _raised("RuntimeError: MXFP8 MoE quantization requires SM100 or ROCm gfx95")
    diagnosis = _diagnosis(log)
    assert diagnosis.evidence[0] == "GPU: NVIDIA H100 80GB HBM3 (compute capability 9.0)"
    assert "sm_100" in diagnosis.root_cause


def test_fp8_not_supported_on_this_gpu_uses_the_table_minimum() -> None:
    log = "GPU 0: NVIDIA A100-SXM4-80GB\n" + _raised("ValueError: fp8 e4m3 is not supported on this GPU")
    diagnosis = _diagnosis(log)
    assert diagnosis.title.startswith("FP8")
    assert "compute capability 8.9 or newer" in diagnosis.root_cause
    assert "A100" in diagnosis.evidence[0]
    assert diagnosis.fix is not None and any("Marlin" in step for step in diagnosis.fix.steps)


def test_ptxas_that_does_not_know_the_arch_asks_for_the_toolkit_that_does() -> None:
    # ptxas's own error as Triton's PTXASError passes it on (triton-lang/triton#8539, gpustack/gpustack#4372,
    # vllm-project/vllm#31338: the bundled ptxas predates the GPU; TRITON_PTXAS_PATH to a newer toolkit's)
    log = "GPU 0: NVIDIA GeForce RTX 5090\n" + _raised(
        "RuntimeError: Internal Triton PTX codegen error\n"
        "`ptxas` stderr:\n"
        "ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'"
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.category == "gpu-arch-unsupported"
    assert diagnosis.fix is not None and "CUDA toolkit 12.8 or newer" in diagnosis.fix.summary
    assert any("TRITON_PTXAS_PATH" in step for step in diagnosis.fix.steps)
    assert "sm_120 needs CUDA 12.8 or newer to compile for it" in diagnosis.evidence
    assert diagnosis.evidence[0] == "GPU: NVIDIA GeForce RTX 5090 (compute capability 12.0)"


def test_no_kernel_image_on_a_log_without_engine_names_the_gpu_and_its_toolkit() -> None:
    # torch/cuda/__init__.py _check_capability warns; the first kernel then fails (cudaErrorNoKernelImageForDevice)
    log = (
        "/usr/lib/python3.12/site-packages/torch/cuda/__init__.py:235: UserWarning:\n"
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
        + _raised("RuntimeError: CUDA error: no kernel image is available for execution on the device")
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.basis == "rule"
    assert diagnosis.evidence[0] == "GPU: NVIDIA GeForce RTX 5090 (compute capability 12.0)"
    assert diagnosis.fix is not None and "CUDA 12.8 or newer" in diagnosis.fix.summary
    assert "SGLang" not in diagnosis.fix.summary and "vLLM" not in diagnosis.fix.summary


def test_a_cpu_only_torch_is_a_build_for_another_accelerator() -> None:
    # torch/cuda/__init__.py _lazy_init
    diagnosis = _diagnosis(_raised("AssertionError: Torch not compiled with CUDA enabled"))
    assert diagnosis.category == "gpu-arch-unsupported"
    assert diagnosis.fix is not None and "CUDA build of torch" in diagnosis.fix.summary


@pytest.mark.parametrize(
    "message",
    [
        # sglang flashmla backend: a page size, not an architecture
        "ValueError: FlashMLA only supports a page_size of 64, change page_size to 64.",
        "ValueError: bfloat16 KV cache is not supported by the Triton MLA backend",
        "RuntimeError: requires a tokenizer with a chat template",
    ],
)
def test_limits_that_are_not_the_hardware_are_not_this_rule(message: str) -> None:
    report = api.diagnose_text(_raised(message))
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is None or diagnosis.pattern != "rule-gpu-arch-unsupported"


def test_an_engine_pattern_keeps_precedence_over_the_rule() -> None:
    log = SGLANG_LAUNCH.format(backend="fa3") + _raised(
        "RuntimeError: Assertion error (csrc/apis/gemm.hpp:42): Unsupported architecture",
        where="/usr/lib/python3.10/site-packages/deep_gemm/jit.py",
        function="deep_gemm_fp8_gemm_nt",
    )
    assert _diagnosis(log).pattern == "sglang-deepgemm-unsupported-arch"


def test_a_quantization_minimum_from_transformers_names_the_gpu_of_the_dump() -> None:
    # transformers/quantizers/quantizer_mxfp4.py validate_environment (the SGLang 0.5.9 and 0.5.23 venvs)
    log = "GPU 0: Tesla V100-SXM2-32GB\n" + _raised(
        "ValueError: MXFP4 quantization is only supported on GPUs with compute capability >= 7.5 (e.g T4, A100, L4, H100, or B200)"
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.evidence[:2] == (
        "GPU: Tesla V100-SXM2-32GB (compute capability 7.0)",
        "MXFP4 quantization needs compute capability 7.5 or newer (the message)",
    )


def test_a_gpu_that_meets_the_requirement_is_not_blamed() -> None:
    log = "GPU 0: NVIDIA H100 80GB HBM3\n" + _raised(
        "ValueError: MXFP4 quantization is only supported on GPUs with compute capability >= 7.5"
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.evidence[0].startswith("GPU: the log shows NVIDIA H100 80GB HBM3 (compute capability 9.0), which meets this")
    assert "H100" not in diagnosis.root_cause


def test_vllms_attention_selector_rejecting_the_gpu_gets_another_backend_of_that_release() -> None:
    # vllm/platforms/cuda.py (0.33.0) raises this with AttentionBackend.validate_configuration's reasons
    log = (
        "INFO 01-01 10:00:00 [__init__.py:1] vLLM version 0.33.0\n"
        "vllm serve /models/m --attention-backend FLASHMLA\n"
        "GPU 0: NVIDIA A100-SXM4-80GB\n"
        + _raised(
            "ValueError: Selected backend AttentionBackendEnum.FLASHMLA is not valid for this configuration. "
            "Reason: ['compute capability not supported']",
            where="/usr/lib/python3.12/site-packages/vllm/platforms/cuda.py",
        )
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.pattern == "rule-gpu-arch-unsupported" and diagnosis.engine == "vllm"
    assert diagnosis.evidence[0] == "GPU: NVIDIA A100-SXM4-80GB (compute capability 8.0)"
    assert diagnosis.fix is not None
    assert [(op.op, op.flag, op.value) for op in diagnosis.fix.flags] == [("set", "--attention-backend", "TRITON_ATTN")]


def test_flash_attn_on_turing_reads_ampere_or_newer_as_the_minimum() -> None:
    # flash-attn's csrc/flash_attn/flash_api.cpp TORCH_CHECK (Dao-AILab/flash-attention)
    log = "|   0  Tesla T4                       Off |   00000000:00:04.0 Off |                    0 |\n" + _raised(
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer."
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.root_cause.startswith("FlashAttention-2 needs compute capability 8.0 or newer")
    assert diagnosis.fix is not None and diagnosis.fix.flags == ()


def test_fa3_for_the_vision_encoder_on_blackwell_sets_the_mm_attention_backend() -> None:
    # sglang/srt/layers/attention/vision.py raises it (0.5.9 line 745, 0.5.23 line 1331): "not supported on
    # Blackwell" names the GPU, the table says what FlashAttention-3 needs
    log = (
        "GPU 0: NVIDIA B200\n"
        "python -m sglang.launch_server --model-path /models/vl --mm-attention-backend fa3\n"
        + _raised(
            "ValueError: The 'fa3' backend is not supported on Blackwell GPUs",
            where="/usr/lib/python3.12/site-packages/sglang/srt/layers/attention/vision.py",
        )
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.evidence[:2] == (
        "GPU: NVIDIA B200 (compute capability 10.0)",
        "FlashAttention-3 needs sm_90 (facts/gpus.toml)",
    )
    assert diagnosis.fix is not None
    assert [op.flag for op in diagnosis.fix.flags] == ["--mm-attention-backend"]


def test_a_rocm_torch_that_finds_no_amd_gpu_names_both_readings() -> None:
    # torch/cuda/__init__.py _lazy_init on a ROCm build (torch._C._cuda_init); vllm-project/vllm#34573,
    # kyuz0/amd-strix-halo-vllm-toolboxes#6
    diagnosis = _diagnosis(_raised("RuntimeError: No HIP GPUs are available"))
    assert diagnosis.category == "gpu-arch-unsupported" and diagnosis.basis == "rule"
    assert diagnosis.fix is not None and any("/dev/kfd" in step for step in diagnosis.fix.steps)


@pytest.mark.parametrize(
    ("message", "needs"),
    [
        # vllm 0.33.0 model_executor/kernels/linear/scaled_mm/aiter.py, mixed_precision/machete.py
        ("RuntimeError: requires compute capability 90 and above.", "compute capability 9.0 or newer"),
        ("ValueError: Machete requires compute capability of 90 (Hopper)", "sm_90"),
        # sglang 0.5.23 quantization/compressed_tensors/compressed_tensors.py
        ("ValueError: NVFP4 w4a4 requires compute capability >= 10.0", "compute capability 10.0 or newer"),
        # vllm's FP8 Marlin kernel (marlin_utils_fp8)
        ("ValueError: FP8 Marlin requires compute capability 7.5 or higher", "compute capability 7.5 or newer"),
    ],
)
def test_each_way_a_message_states_the_capability_it_needs(message: str, needs: str) -> None:
    diagnosis = _diagnosis("GPU 0: Tesla V100-SXM2-32GB\n" + _raised(message))
    assert diagnosis.evidence[0] == "GPU: Tesla V100-SXM2-32GB (compute capability 7.0)"
    assert f"needs {needs} (the message)" in diagnosis.evidence[1]


# ---- a program's floor for any GPU -----------------------------------------------------------------------------


@pytest.mark.parametrize("engine_line", ["", "INFO 10-02 llm_engine.py:72] Initializing an LLM engine with config: model='m'\n"])
def test_a_gpu_below_the_programs_floor_gets_no_setting_only_a_gpu_that_meets_it(engine_line: str) -> None:
    # vllm setup.py (0.1.x-0.2.x) get_torch_arch_list/_check: `if major < 7: raise RuntimeError("GPUs with compute
    # capability below 7.0 are not supported.")` (vllm-project/vllm#1284 on a P100, #1431 on a P4); the GPU from the
    # bfloat16 check's line vLLM prints with it (worker.py _check_if_gpu_supports_dtype)
    log = (engine_line + "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
           "Your Tesla P4 GPU has compute capability 6.1.\n"
           "RuntimeError: GPUs with compute capability below 7.0 are not supported.\n")
    diagnosis = _diagnosis(log)
    assert diagnosis.pattern == "rule-gpu-arch-unsupported" and diagnosis.category == "gpu-arch-unsupported"
    assert diagnosis.fix is not None
    text = " ".join([diagnosis.root_cause, diagnosis.fix.summary, *diagnosis.fix.steps])
    assert "Tesla P4" in diagnosis.root_cause and "compute capability 7.0 or newer" in diagnosis.fix.summary
    assert "no setting gets past" in diagnosis.root_cause
    # no workaround that cannot pass the floor: neither a dtype nor a backend is offered, nor any flag op
    assert not diagnosis.fix.flags and "float16" not in text and "--dtype" not in text and "backend " not in text.replace("attention backend, quantization", "")
    assert "no vLLM release runs on a GPU below 7.0" in text


def test_a_gpu_that_meets_the_floor_is_not_blamed_for_it() -> None:
    log = ("GPU 0: NVIDIA A100-SXM4-80GB\n"
           "RuntimeError: GPUs with compute capability below 7.0 are not supported.\n")
    diagnosis = _diagnosis(log)
    assert diagnosis.pattern == "rule-gpu-arch-unsupported"
    assert any("meets this" in line for line in diagnosis.evidence)
