"""Stop 52 (platform16), in generic words (issue 28): failures of the platform under the engine (the container
runtime, the driver's libraries, the GPU's architecture, an accelerator's own runtime), not of the engine or a flag.

- The container runtime refusing to create a GPU container, in its own words: docker's daemon with no device driver
  for `--gpus` (moby daemon/devices.go incompatibleDeviceRequest), the NVIDIA runtime failing to set the container up
  (nvidia-container-toolkit's `failed to create NVIDIA Container Runtime: …`, NVIDIA-AI-IOT/jetson-ai-lab#421;
  nvidia-container-cli's `initialization error: load library failed: …`), and runc's OCI refusal cut before its
  reason: orchestration with the runtime's advice (the host's driver, the image's CUDA, the toolkit), never a flag.
- vLLM finding no platform, one step after the detection: DeviceConfig hands the empty device type to torch
  (`Device string must not be empty`, vllm/config/device.py; keras-team/kinetic#269), and NVML's `Driver Not Loaded`
  (vllm/third_party/pynvml.py): the container's GPU access and the driver's libraries, not a flag value.
- A kernel the release compiles for some architectures only (vLLM's CUTLASS entry points: `No compiled
  <kernel> … for CUDA device capability: 120`, csrc/quantization/cutlass_w8a8/scaled_mm_entry.cu;
  vllm-project/vllm#24921): gpu-arch-unsupported from the GPU's own capability, not an engine bug; what the message
  shows is this build's gap (vllm-project/vllm#14452: a build against a cu128 torch has the Blackwell kernels), so
  both roads: another form of the model, or a build for that architecture; for the fall-through's `less than`
  words, no build.
- A third-party kernel library whose build lacks the architecture, named from the message's own path (xformers'
  bundled FlashAttention, vllm-project/vllm#20998): that library's build (its distribution from facts/imports.toml),
  never named from the Python frames alone (they show the caller), and never when torch's own warning shows torch
  lacking the architecture (then the engine's no-kernel-image answer); the attention backend as an alternative only
  when an attention backend of the engine called the library.
- vllm-ascend calling a torch_npu operator the installed torch_npu lacks (vllm-project/vllm-ascend#340, #117): the
  plugin's torch_npu/CANN pair.
- A graph capture broken inside ROCm's runtime (sgl-project/sglang#23580, iree-org/wave#466): the runtime and the
  collective library named as general guidance beside the stop-gap, only for HIP's own capture errors (not a HIP
  out-of-memory, not a build without the GPU's gfx).
Tracebacks are real CPython's from site-packages trees laid out as the engines' and the libraries'; the messages are
the programs' own words, rebuilt in our own code."""

from __future__ import annotations

from pathlib import Path

from logsleuth.reasoning.platform_runtime import ROCM_CAPTURE_STEP
from tests.helpers import check_texts, diagnose_with_patterns, traceback_of_installed

# A C++ check's error surfaces as the exception the extension raises: codecs.strict_errors raises the exception it is
# given from C, so the raising line is the Python caller's, as with a real extension or torch's own C++ check.
_RAISE_FROM_C = "import codecs\n_check = codecs.strict_errors\n"


def _traceback(tmp_path: Path, files: dict[str, str], script: str) -> str:
    run = traceback_of_installed(tmp_path, files, script)
    assert run.returncode == 1, run.stderr
    return run.stderr


# ---- the container runtime's own words ------------------------------------------------------------------------------

DOCKER_RUN = "$ docker run --gpus all -p 8000:8000 vllm/vllm-openai:latest --model Qwen/Qwen2.5-7B-Instruct\n"


def test_docker_without_a_gpu_device_driver_is_the_toolkit_not_a_flag() -> None:
    log = DOCKER_RUN + 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
    found = diagnose_with_patterns(log)
    assert found.pattern == "rule-container-gpu-access"
    assert found.category == "orchestration"
    assert "NVIDIA container toolkit" in found.fix.summary
    assert not found.fix.flags


def test_nvidia_runtime_refusal_cut_before_its_reason() -> None:
    log = ("docker: Error response from daemon: failed to create task for container: failed to create shim task:\n"
           "OCI runtime create failed: failed to create NVIDIA Container Runtime: failed to construct OCI spec modi\n")
    found = diagnose_with_patterns(log)
    assert found.pattern == "rule-container-gpu-access"
    assert found.category == "orchestration"
    assert "cuda>=X" in found.fix.summary and "host's driver" in found.fix.summary


# runc's refusal when the NVIDIA hook it ran exited non-zero, up to the hook's own output
HOOK_REFUSED = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
                "runtime create failed: runc create failed: unable to start container process: error during container "
                "init: error running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as")


def test_nvidia_runtime_without_the_hosts_driver_library() -> None:
    log = (HOOK_REFUSED + " 'legacy'\nnvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: "
           "cannot open shared object file: no such file or directory: unknown.\n")
    found = diagnose_with_patterns(log)
    assert found.category == "orchestration"
    assert "libnvidia-ml.so.1" in found.root_cause


def test_oci_refusal_cut_in_its_hook_is_the_container_runtime() -> None:
    found = diagnose_with_patterns(HOOK_REFUSED + "\n")
    assert found.category == "orchestration"
    assert "container runtime" in found.title


def test_oci_refusal_of_a_program_the_image_lacks_keeps_its_reading() -> None:
    log = ('Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create '
           'failed: unable to start container process: error during container init: exec: "vllm": executable file not '
           'found in $PATH: unknown\n')
    assert diagnose_with_patterns(log).category == "dependency-version"


# ---- no platform: the container's GPU access --------------------------------------------------------------------------

_DEVICE_CONFIG = _RAISE_FROM_C + '''

class DeviceConfig:
    def __init__(self, device_type):
        self.device_type = device_type
        self.__post_init__()

    def __post_init__(self):
        self.device = _check(RuntimeError("Device string must not be empty")) if not self.device_type else self.device_type
'''


def test_empty_device_string_in_vllms_device_config_is_gpu_access(tmp_path: Path) -> None:
    printed = _traceback(tmp_path, {"vllm/config/device.py": _DEVICE_CONFIG},
                         "from vllm.config.device import DeviceConfig\nDeviceConfig('')\n")
    found = diagnose_with_patterns(printed)
    assert found.pattern == "vllm-cuda-not-available"
    assert found.category == "orchestration"
    assert "LD_LIBRARY_PATH" in check_texts(found)


def test_empty_device_string_outside_vllm_is_not_read_as_vllms(tmp_path: Path) -> None:
    printed = _traceback(tmp_path, {"mytool/devices.py": _DEVICE_CONFIG},
                         "from mytool.devices import DeviceConfig\nDeviceConfig('')\n")
    assert diagnose_with_patterns(printed).pattern != "vllm-cuda-not-available"


def test_nvml_driver_not_loaded_is_gpu_access(tmp_path: Path) -> None:
    pynvml = ("class NVMLError(Exception):\n    pass\n\n\nclass NVMLError_DriverNotLoaded(NVMLError):\n    pass\n\n\n"
              "def nvmlInit():\n    raise NVMLError_DriverNotLoaded('Driver Not Loaded')\n")
    cuda = "from vllm.third_party import pynvml\n\n\ndef device_count():\n    pynvml.nvmlInit()\n"
    printed = _traceback(tmp_path, {"vllm/third_party/pynvml.py": pynvml, "vllm/platforms/cuda.py": cuda},
                         "from vllm.platforms.cuda import device_count\ndevice_count()\n")
    found = diagnose_with_patterns(printed)
    assert found.pattern == "vllm-cuda-not-available"
    assert found.category == "orchestration"


# ---- the GPU's architecture -------------------------------------------------------------------------------------------

def _custom_op(message: str) -> str:
    return _RAISE_FROM_C + f"\n\ndef get_cutlass_moe_mm_data():\n    _check(NotImplementedError({message!r}))\n"


def test_no_compiled_kernel_for_the_gpus_capability_is_the_architecture(tmp_path: Path) -> None:
    message = ("No compiled get_cutlass_moe_mm_data: no cutlass_scaled_mm kernel for CUDA device capability: 120. "
               "Required capability: 90 or 100")
    printed = _traceback(tmp_path, {"vllm/_custom_ops.py": _custom_op(message)},
                         "from vllm._custom_ops import get_cutlass_moe_mm_data\nget_cutlass_moe_mm_data()\n")
    found = diagnose_with_patterns(printed)
    assert found.category == "gpu-arch-unsupported"
    assert found.pattern == "rule-gpu-arch-unsupported"
    assert "get_cutlass_moe_mm_data" in found.title
    assert "sm_120" in found.fix.summary and "quantization" in found.fix.summary
    assert "Install torch" not in found.fix.summary  # the release has no such kernel: no rebuild adds it


def test_no_compiled_scaled_mm_bare_line_is_this_builds_gap() -> None:
    # every fp8-capable vLLM build compiles cutlass_scaled_mm for sm_89: the message can only come from a build
    # without it, where a build for sm_89 is one road (vllm-project/vllm#14452's class)
    found = diagnose_with_patterns("NotImplementedError: No compiled cutlass_scaled_mm for CUDA device capability: 89\n")
    assert found.category == "gpu-arch-unsupported"
    assert "a build that includes sm_89" in found.fix.summary
    assert "quantization" in found.fix.summary
    assert "does not add" not in found.root_cause


def test_no_compiled_for_a_capability_less_than_names_no_build() -> None:
    found = diagnose_with_patterns("NotImplementedError: No compiled cutlass_scaled_mm for a compute capability less "
                                   "than CUDA device capability: 70\n")
    assert found.category == "gpu-arch-unsupported"
    assert "newer than sm_70" in found.fix.summary
    assert "release" not in found.fix.summary and "build that includes" not in found.fix.summary


XFORMERS_NO_KERNEL = ("CUDA error (/build/xformers-0.0.30/third_party/flash-attention/hopper/"
                      "flash_fwd_launch_template.h:175): no kernel image is available for execution on the device\n")


def test_third_party_library_without_the_architecture_is_named() -> None:
    found = diagnose_with_patterns(XFORMERS_NO_KERNEL)
    assert found.category == "gpu-arch-unsupported"
    assert "xformers" in found.title
    assert "build of xformers" in found.fix.summary
    assert not found.fix.summary.startswith("Install torch")
    assert "Reinstalling torch" not in found.fix.summary


VLLM_033 = ("INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.33.0\n"
            "$ vllm serve Qwen/Qwen3-8B --port 8000\n")
# torch/cuda/__init__.py _check_capability's warning: torch's own build lacks the GPU
TORCH_LACKS_SM120 = ("UserWarning: \nNVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the "
                     "current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 "
                     "sm_70 sm_75 sm_80 sm_86 sm_90.\n")


def test_torch_lacking_the_architecture_is_not_blamed_on_a_library() -> None:
    found = diagnose_with_patterns(VLLM_033 + TORCH_LACKS_SM120 + XFORMERS_NO_KERNEL)
    assert found.pattern == "vllm-no-kernel-image"
    assert "xformers" not in found.title


def _library_no_kernel_called_from(tmp_path: Path, caller_file: str, library_file: str, message: str) -> str:
    library = _RAISE_FROM_C + f"\n\ndef run():\n    _check(RuntimeError({message!r}))\n"
    module = library_file.removesuffix(".py").replace("/", ".")
    caller = f"from {module} import run\n\n\ndef forward():\n    run()\n"
    caller_module = caller_file.removesuffix(".py").replace("/", ".")
    return _traceback(tmp_path, {library_file: library, caller_file: caller},
                      f"from {caller_module} import forward\nforward()\n")


FLASHINFER_NO_KERNEL = ("CUDA error (/workspace/flashinfer/include/flashinfer/sampling.cuh:900): no kernel image is "
                        "available for execution on the device")


def test_library_outside_the_attention_backend_gets_no_backend_alternative(tmp_path: Path) -> None:
    # vLLM's top-k/top-p sampler calls flashinfer whatever --attention-backend says
    printed = _library_no_kernel_called_from(tmp_path, "vllm/v1/sample/ops/topk_topp_sampler.py",
                                             "flashinfer/sampling.py", FLASHINFER_NO_KERNEL)
    found = diagnose_with_patterns(VLLM_033 + printed)
    assert found.pattern == "rule-gpu-arch-unsupported"
    assert "flashinfer" in found.title
    assert not found.fix.alternatives
    assert "pip show flashinfer-python" in check_texts(found)  # the distribution pip knows (facts/imports.toml)


def test_library_called_by_an_attention_backend_gets_the_backend_alternative(tmp_path: Path) -> None:
    printed = _library_no_kernel_called_from(tmp_path, "vllm/v1/attention/backends/flashinfer.py",
                                             "flashinfer/prefill.py", FLASHINFER_NO_KERNEL)
    found = diagnose_with_patterns(VLLM_033 + printed)
    assert found.pattern == "rule-gpu-arch-unsupported"
    assert any(op.flag == "--attention-backend" for alternative in found.fix.alternatives for op in alternative.flags)


def _flash_attn_no_kernel(tmp_path: Path, engine_file: str, library_file: str) -> str:
    library = _RAISE_FROM_C + ("\n\ndef fwd():\n    _check(RuntimeError('CUDA error: no kernel image is available for "
                               "execution on the device'))\n")
    module = library_file.removesuffix(".py").replace("/", ".")
    engine = f"from {module} import fwd\n\n\ndef forward():\n    fwd()\n"
    engine_module = engine_file.removesuffix(".py").replace("/", ".")
    return _traceback(tmp_path, {library_file: library, engine_file: engine},
                      f"from {engine_module} import forward\nforward()\n")


def test_library_in_the_frames_alone_is_not_the_kernels_owner(tmp_path: Path) -> None:
    # the frames show who called the kernel (vLLM's sampler calling flashinfer), not whose kernel lacks the GPU: the
    # engine's pattern keeps its answer (the paste of the review, REVIEW2 H1, with torch's warning above it too)
    printed = _flash_attn_no_kernel(tmp_path, "vllm/v1/sample/ops/topk_topp_sampler.py", "flashinfer/sampling.py")
    found = diagnose_with_patterns(VLLM_033 + TORCH_LACKS_SM120 + printed)
    assert found.pattern == "vllm-no-kernel-image"
    assert "flashinfer" not in found.title


def test_library_the_engines_pattern_names_keeps_the_pattern(tmp_path: Path) -> None:
    printed = _flash_attn_no_kernel(tmp_path, "sglang/srt/layers/sampler.py", "flashinfer/sampling.py")
    assert diagnose_with_patterns(printed).pattern == "sglang-no-kernel-image"


def test_engine_file_named_after_a_library_is_not_that_library(tmp_path: Path) -> None:
    backend = _RAISE_FROM_C + ("\n\ndef forward():\n    _check(RuntimeError('CUDA error: no kernel image is available for "
                               "execution on the device'))\n")
    printed = _traceback(tmp_path, {"vllm/attention/backends/flash_attn.py": backend},
                         "from vllm.attention.backends.flash_attn import forward\nforward()\n")
    assert diagnose_with_patterns(printed).pattern == "vllm-no-kernel-image"


# ---- an accelerator plugin and its device runtime ---------------------------------------------------------------------

def test_plugin_calling_an_op_its_torch_npu_lacks_names_the_pair(tmp_path: Path) -> None:
    attention = "import torch_npu\n\n\ndef forward():\n    torch_npu._npu_flash_attention()\n"
    printed = _traceback(tmp_path, {"torch_npu/__init__.py": "", "vllm_ascend/attention.py": attention},
                         "from vllm_ascend.attention import forward\nforward()\n")
    assert "module 'torch_npu' has no attribute '_npu_flash_attention'" in printed
    found = diagnose_with_patterns(printed)
    assert found.category == "dependency-version"
    assert "torch_npu" in found.title
    assert "CANN" in check_texts(found)


# ---- a graph capture inside ROCm's runtime -----------------------------------------------------------------------------

def _capture_failed(tmp_path: Path, inner: str) -> str:
    runner = ("def capture():\n    raise RuntimeError(INNER)\n\n\nclass CudaGraphRunner:\n    def __init__(self):\n"
              "        try:\n            capture()\n        except RuntimeError as e:\n"
              "            raise Exception(f'Capture cuda graph failed: {e}')\n").replace("INNER", repr(inner))
    return _traceback(tmp_path, {"sglang/srt/model_executor/cuda_graph_runner.py": runner},
                      "from sglang.srt.model_executor.cuda_graph_runner import CudaGraphRunner\nCudaGraphRunner()\n")


def test_hip_error_during_capture_points_at_the_rocm_runtime(tmp_path: Path) -> None:
    printed = _capture_failed(tmp_path, "HIP error: operation failed due to a previous error during capture")
    found = diagnose_with_patterns(printed)
    assert found.category == "cuda-graph-capture"
    assert ROCM_CAPTURE_STEP in found.fix.steps


def test_hip_out_of_memory_or_missing_gfx_during_capture_has_no_rocm_step(tmp_path: Path) -> None:
    for inner in ("HIP error: out of memory", "HIP error: invalid device function"):
        found = diagnose_with_patterns(_capture_failed(tmp_path / inner[11:14], inner))
        assert found.category == "cuda-graph-capture", inner
        assert ROCM_CAPTURE_STEP not in found.fix.steps, inner


def test_cuda_error_during_capture_has_no_rocm_step(tmp_path: Path) -> None:
    printed = _capture_failed(tmp_path, "CUDA error: operation not permitted when stream is capturing")
    found = diagnose_with_patterns(printed)
    assert found.category == "cuda-graph-capture"
    assert ROCM_CAPTURE_STEP not in found.fix.steps
