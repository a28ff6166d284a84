"""Stop 56 (platform20), in generic words (issue 28): a failure on an accelerator other than NVIDIA's gets its own
platform's advice and category, decided from positive evidence (facts/platforms.toml, reasoning/platform.py).

- NVIDIA-only checks (nvidia-smi, NVML, CUDA_VISIBLE_DEVICES, CUDA_LAUNCH_BLOCKING, nvcc, compute capability) never
  shown where the log shows another platform and nothing NVIDIA's: the counterpart named (npu-smi, amd-smi,
  HIP_VISIBLE_DEVICES) or the check left out, and one general step that says so; an NVIDIA log unchanged.
- A TPU's XLA compiler out of memory at compile time (vllm-project/vllm#8318, tensorflow/tensor2tensor#1382): gpu-oom
  with the compile-time checks, no nvidia-smi.
- The Ascend stack failing to initialise (CANN's platform info, GE, the op compiler: vllm-project/vllm-ascend#692,
  sgl-project/sglang#9226): dependency-version, its versions to match; an operator's failure stays the runtime's.
- triton-ascend's bishengir refusing the SoC target (sgl-project/sglang#16360, #14783, vllm-project/vllm-ascend#7423):
  gpu-arch-unsupported with the NPU stack's release, not NVIDIA's Triton advice.
- vLLM's CPU backend casting float16 to bfloat16 before a GPTQ checkpoint refuses it (vllm-project/vllm#12794).
- "Failed to infer device type" with nothing else: NVIDIA's causes said as NVIDIA's, a plugin's device package named.
Messages are the programs' own words, the logs our own."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.facts.platforms import platforms
from tests.helpers import check_texts, diagnose_with_patterns, traceback_of_installed

_NVIDIA_ONLY = ("nvidia-smi", "NVML", "CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING", "compute capability", "Blackwell")


def _nvidia_named(text: str) -> list[str]:
    return [word for word in _NVIDIA_ONLY if word in text]


def _advice(found) -> str:  # type: ignore[no-untyped-def]
    return "\n".join((found.root_cause, found.fix.summary, check_texts(found)))


def _raised(tmp_path: Path, module: str, message: str, exception: str = "RuntimeError") -> str:
    """A real CPython traceback through an installed module that raises `exception(message)`."""
    files = {module: f"def run():\n    raise {exception}({message!r})\n"}
    name = module.removesuffix(".py").replace("/", ".")
    run = traceback_of_installed(tmp_path, files, f"import {name}\n{name}.run()\n")
    assert run.returncode == 1, run.stderr
    return run.stderr


# ---- the platform decision and the NVIDIA-only checks ---------------------------------------------------------------

HIP_OOM = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 3.50 GiB. GPU 0 has a total capacity of "
           "191.98 GiB of which 1.20 GiB is free. Of the allocated memory 180.02 GiB is allocated by PyTorch.\n")
CUDA_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 0 has a total capacity of "
            "79.19 GiB of which 1.20 GiB is free. Of the allocated memory 70.02 GiB is allocated by PyTorch.\n")


def test_an_amd_gpu_out_of_memory_names_amd_tools_not_nvidia_smi() -> None:
    found = diagnose_with_patterns("INFO Automatically detected platform rocm.\n" + HIP_OOM)
    assert found.category == "gpu-oom"
    advice = _advice(found)
    assert _nvidia_named(advice) == []
    assert "amd-smi" in advice and "AMD GPU (ROCm)" in advice


def test_an_nvidia_out_of_memory_keeps_nvidia_smi() -> None:
    found = diagnose_with_patterns(CUDA_OOM)
    assert found.category == "gpu-oom"
    assert "nvidia-smi" in check_texts(found)
    assert "not an NVIDIA GPU" not in check_texts(found)


def test_evidence_of_two_platforms_decides_none() -> None:
    # an NVIDIA GPU's name beside a ROCm word: no platform is decided, the advice is left as it was
    log = "GPU 0: NVIDIA H100 80GB HBM3\nWARNING ROCm libraries were found but not used\n" + CUDA_OOM
    found = diagnose_with_patterns(log)
    assert "nvidia-smi" in check_texts(found)
    assert "not an NVIDIA GPU" not in check_texts(found)


def test_every_platform_row_names_its_sources_and_counterparts_are_its_own() -> None:
    for platform in platforms():
        assert platform.sources, platform.key
        for tool in (platform.smi, platform.visible, platform.blocking):
            assert _nvidia_named(tool) == [], (platform.key, tool)


# ---- TPU: XLA's compile-time out-of-memory --------------------------------------------------------------------------

def test_a_tpu_compile_out_of_memory_is_gpu_oom_with_compile_time_checks(tmp_path: Path) -> None:
    message = ("Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory "
               "space vmem. Used 20.50M of 16.00M vmem. Exceeded vmem capacity by 4.50M.")
    found = diagnose_with_patterns(_raised(tmp_path, "torch_xla/core/xla_model.py", message))
    assert found.category == "gpu-oom"
    assert "TPU" in found.title
    advice = _advice(found)
    assert _nvidia_named(advice) == []
    assert "maximum context length" in advice


def test_a_tpu_hbm_out_of_memory_from_jax_is_the_same_row() -> None:
    log = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of "
           "memory in memory space hbm. Used 40.10G of 15.48G hbm. Exceeded hbm capacity by 24.62G.\n")
    found = diagnose_with_patterns(log)
    assert (found.category, "TPU" in found.title) == ("gpu-oom", True)


# ---- Ascend: the stack's initialisation, triton-ascend's target -----------------------------------------------------

NPU_INIT = (
    "RuntimeError: SetPrecisionMode:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:158 NPU function error: "
    "at_npu::native::AclSetCompileopt(aclCompileOpt::ACL_PRECISION_MODE, precision_mode), error code is 500001\n"
    "[ERROR] 2025-06-01-10:00:00 (PID:77, Device:0, RankID:-1) ERR00100 PTA call acl api failed\n"
    "EH9999: Inner Error!\n"
    "EH9999: [PID: 77] 2025-06-01-10:00:00.000.001 [Init][PlatformInfo]init runtime platform info failed, "
    "SocVersion = Ascend910B3[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n"
    "        GEInitialize failed.[FUNC:GEInitialize][FILE:ge_api.cc][LINE:337]\n"
)
NPU_OPERATOR = (
    "RuntimeError: ACL stream synchronize failed, error code:507048\n"
    "[ERROR] 2025-06-01-10:00:00 (PID:77, Device:0, RankID:-1) ERR00100 PTA call acl api failed\n"
    "EZ9999: Inner Error!\n"
)


def test_an_ascend_operator_failure_stays_the_runtimes() -> None:
    assert diagnose_with_patterns(NPU_OPERATOR).category == "cuda-error"


TRITON_TARGET = (
    "triton.compiler.errors.MLIRCompilationError: \n"
    "///------------------[ERROR][Triton][BEG]------------------\n"
    "[ConvertLinalgRToBinary] encounters error:\n"
    "bishengir-compile: for the --target option: Cannot find option named 'Ascend310P1'!\n"
)


@pytest.mark.parametrize(("log", "category", "named"), [
    (NPU_INIT, "dependency-version", ("CANN", "npu-smi info")),  # the stack failing to initialise: its versions
    (TRITON_TARGET, "gpu-arch-unsupported", ("triton-ascend", "CANN")),  # the compiler not knowing the chip
])
def test_an_ascend_stack_failure_names_the_npu_stack_not_nvidias(log: str, category: str, named: tuple[str, ...]) -> None:
    found = diagnose_with_patterns(log)
    assert found.category == category
    advice = _advice(found)
    assert all(word in advice for word in named), advice
    assert _nvidia_named(advice) == []


def test_a_triton_compile_failure_on_nvidia_keeps_its_checks() -> None:
    log = ("GPU 0: NVIDIA GeForce RTX 5090 (sm_120)\n"
           "triton.compiler.errors.CompilationError: at 12:4: PassManager::run failed\n")
    found = diagnose_with_patterns(log)
    assert found.category == "gpu-arch-unsupported"
    assert "compute capability" in check_texts(found)


# ---- vLLM's CPU backend's cast ----------------------------------------------------------------------------------------

CPU_CAST = "WARNING 03-01 10:00:00 cpu_executor.py:327] float16 is not supported on CPU, casting to bfloat16.\n"
GPTQ_REFUSED = "ValueError: torch.bfloat16 is not supported for quantization method gptq. Supported dtypes: [torch.float16]\n"


def test_the_cpu_backends_cast_refused_by_gptq_is_the_platforms_dtype() -> None:
    found = diagnose_with_patterns(CPU_CAST + GPTQ_REFUSED)
    assert found.pattern == "rule-platform-dtype"
    assert found.category == "quantization"
    assert "CPU backend" in found.root_cause and "float16" in found.root_cause


def test_a_dtype_refused_without_a_platform_cast_is_not_that_rule() -> None:
    assert diagnose_with_patterns(GPTQ_REFUSED).pattern != "rule-platform-dtype"


# ---- vLLM finding no platform -----------------------------------------------------------------------------------------

NO_PLATFORM = 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nRuntimeError: Failed to infer device type\n'


def test_no_platform_alone_says_nvidia_causes_as_nvidias_and_names_a_plugins_package() -> None:
    found = diagnose_with_patterns(NO_PLATFORM)
    assert found.pattern == "vllm-cuda-not-available"
    assert "on NVIDIA" in found.root_cause and "torch_npu" in found.root_cause
    assert "NVML) or torch's CUDA initialisation found no device" not in found.root_cause
    assert any("import torch, torch_npu" in step for step in found.fix.steps)


def test_no_platform_on_an_ascend_log_drops_nvidias_checks() -> None:
    log = "INFO Platform plugin ascend is loaded. quay.io/ascend/vllm-ascend:v0.7.1rc1\n" + NO_PLATFORM
    found = diagnose_with_patterns(log)
    steps = check_texts(found)
    assert _nvidia_named(steps) == [] and "pynvml" not in steps
    assert "Ascend NPU" in steps and "npu-smi info" in steps


def test_vllms_cpu_platform_keeps_nvidias_checks() -> None:
    # vLLM picks its CPU platform when it finds no GPU: a GPU launch that fell back still needs NVIDIA's checks
    found = diagnose_with_patterns("INFO Automatically detected platform cpu.\n" + NO_PLATFORM)
    assert "nvidia-smi" in check_texts(found)
