"""A number is read as a CUDA status only where CUDA's code prints it, never HIP's or another program's, and the versions
step reads the installed torch and says what fits the status (issue 28, stop 56, review of branch cuda20).  Lines
rebuilt from the printing code's templates with made-up versions: torch's c10/cuda/CUDAFunctions.cpp device_count_impl
(hipified on ROCm as `hipGetDeviceCount()` … `NumHipDevices()`), torch/cuda/__init__.py _check_driver, pip's resolver
line, urllib's HTTPError, old torch's `NCCL Error 1: unhandled cuda error`."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.facts.gpu_error_names import driver_mismatch_named, status_names_in
from logsleuth.facts.torch_builds import cuda_versions_in
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from tests.test_fatal_output_shapes import OPTIONS, primary

_HIP_COUNT = ("RuntimeError: Unexpected error from hipGetDeviceCount(). Did you run some cuda functions before calling "
              "NumHipDevices() that might have already set an error? Error {code}: {string}")
_SMI = "| NVIDIA-SMI {driver}                 Driver Version: {driver}         CUDA Version: {cuda}     |"
_FRAMES = [
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 120, in init_device',
    "    self.model_runner.load_model()",
]


def _text(lines: list[str]) -> str:
    return render(diagnose_text("\n".join(lines) + "\n", OPTIONS), RenderOptions(format=OutputFormat.TEXT, width=200))


@pytest.mark.parametrize("line", [
    _HIP_COUNT.format(code=35, string="hipErrorInsufficientDriver"),
    _HIP_COUNT.format(code=100, string="no ROCm-capable device is detected"),
    "urllib.error.HTTPError: HTTP Error 500: Internal Server Error for https://developer.download.nvidia.com/compute/cuda/redist/x.json",
    "RuntimeError: Worker exited with error code 1 during cuda graph capture",
    "RuntimeError: NCCL Error 1: unhandled cuda error",
    "RuntimeError: Error 35: SSL connect error while downloading cuda-toolkit",
])
def test_a_number_that_is_no_cuda_status_is_not_named(line: str) -> None:
    assert status_names_in(line) == ()
    assert driver_mismatch_named(line) is None


@pytest.mark.parametrize(("lines", "not_category"), [
    (["PyTorch version: 2.5.1+rocm6.2", *_FRAMES, _HIP_COUNT.format(code=35, string="hipErrorInsufficientDriver")],
     "dependency-version"),
    ([*_FRAMES, _HIP_COUNT.format(code=100, string="no ROCm-capable device is detected")], "cuda-error"),
    ([*_FRAMES, "urllib.error.HTTPError: HTTP Error 500: Internal Server Error for "
                "https://developer.download.nvidia.com/compute/cuda/redist/x.json"], "cuda-error"),
])
def test_a_rocm_or_http_line_gets_no_nvidia_reading(lines: list[str], not_category: str) -> None:
    assert primary("\n".join(lines) + "\n")[2] != not_category
    text = _text(lines)
    assert "nvidia-smi" not in text and "cuda-compat" not in text and "built for CUDA" not in text


def test_a_cuda_graph_capture_line_keeps_its_reading() -> None:
    assert primary("\n".join([*_FRAMES, "RuntimeError: Worker exited with error code 1 during cuda graph capture"])
                   + "\n")[2] == "cuda-graph-capture"


@pytest.mark.parametrize(("lines", "torch", "cuda", "platform"), [
    (["PyTorch version: 2.5.1+rocm6.2"], "2.5.1", None, "rocm"),
    (["torch==2.4.0+cpu"], "2.4.0", None, "cpu"),
    (["torch==2.3.0+cu92"], "2.3.0", "9.2", None),
    # pip's resolver line: the installed torch is the one after `you have`, not what another package requires
    (["vllm 0.6.3 requires torch==2.4.0, but you have torch 2.6.0+cu126 which is incompatible."], "2.6.0", "12.6", None),
])
def test_torch_is_read_with_its_local_tag(lines: list[str], torch: str, cuda: str | None, platform: str | None) -> None:
    shown = cuda_versions_in(lines)
    assert (shown.torch, shown.torch_cuda, shown.torch_platform) == (torch, cuda, platform)


def test_torchs_driver_too_old_gets_the_versions_step() -> None:
    text = _text([_SMI.format(driver="470.57.02", cuda="11.4"), "torch==2.3.0+cu121", *_FRAMES,
                  "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update."])
    assert "host driver 470.57.02, whose newest CUDA is 11.4" in text and "torch 2.3.0, built for CUDA 12.1" in text
    # any 11.x build runs on driver 470 (minor version compatibility): not "11.4 or older", which steers to cu113
    assert "CUDA 11.x" in text and "11.4 or older" not in text
    assert cuda_versions_in(["RuntimeError: The NVIDIA driver on your system is too old (found version 11040)."]
                            ).driver_cuda == "11.4"


def test_status_36_on_a_minor_release_names_a_newer_driver_not_compat_libraries() -> None:
    text = _text([_SMI.format(driver="535.104.05", cuda="12.2"), "torch==2.7.0+cu128", *_FRAMES,
                  "RuntimeError: CUDA error: API call is not supported in the installed CUDA driver"])
    assert "torch 2.7.0, built for CUDA 12.8" in text and "limited feature set" in text
    assert "compat libraries in the way" not in text


def test_a_driver_below_the_familys_minimum_is_said() -> None:
    text = _text([_SMI.format(driver="450.36.06", cuda="11.0"), "torch==2.0.1+cu117", *_FRAMES,
                  "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
                  "calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported "
                  "display driver / cuda driver combination"])
    assert "below 450.80.02" in text and "compat libraries in the way" not in text


def test_the_resolver_lines_required_torch_is_not_the_installed_one() -> None:
    text = _text([_SMI.format(driver="535.104.05", cuda="12.2"),
                  "vllm 0.6.3 requires torch==2.4.0, but you have torch 2.6.0+cu126 which is incompatible.", *_FRAMES,
                  "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
                  "calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported "
                  "display driver / cuda driver combination"])
    assert "torch 2.6.0, built for CUDA 12.6" in text and "torch 2.4.0" not in text


def test_a_driver_mismatch_reads_as_its_own_meaning_and_asks_no_engine_release() -> None:
    diagnosis = diagnose_text("\n".join([
        "[2025-03-02 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 300, in __init__',
        "    self.tp_worker = TpWorkerClass(",
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non "
        "supported HW"]) + "\n", OPTIONS).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "dependency-version"
    assert "NVIDIA driver and the CUDA the program loads do not fit" in diagnosis.root_cause
    assert "an installed package" not in diagnosis.root_cause
    assert not any("pip show sglang" in step for step in diagnosis.fix.steps)
