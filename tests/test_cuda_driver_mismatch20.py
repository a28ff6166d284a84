"""A CUDA runtime status printed by its number is read as its name, and the driver/runtime mismatch statuses get their
own reading (issue 28, stop 56, branch cuda20; split 19's D-01 and H-03, vllm-project/vllm#5510 and
gpustack/gpustack#4678).  Lines rebuilt from the printing code's template, never a user's paste: torch's
c10/cuda/CUDAFunctions.cpp device_count_impl (`Unexpected error from cudaGetDeviceCount(). … Error <code>: <string>`,
as CompVis/stable-diffusion#439, easydiffusion/easydiffusion#379 and yhlleo/DeepSegmentor#31 show it), its
`CUDA initialization:` warning, a native library's `CUDA error <code> at <file>:<line>`, glog's CHECK on a runtime call;
the status values from CUDA's driver_types.h (facts/gpu_error_names.toml [codes])."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.facts.gpu_error_names import family_of, status_names_in, with_status_names
from logsleuth.facts.table import parsed_toml
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from tests.test_fatal_output_shapes import OPTIONS, primary

_DEVICE_COUNT = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
                 "calling NumCudaDevices() that might have already set an error? Error {code}: {string}")
_FORWARD_COMPAT = "forward compatibility was attempted on non supported HW"
_DISPLAY_DRIVER = "system has unsupported display driver / cuda driver combination"
_INSUFFICIENT = "CUDA driver version is insufficient for CUDA runtime version"


def _text(log: str) -> str:
    return render(diagnose_text(log, OPTIONS), RenderOptions(format=OutputFormat.TEXT, width=200))


@pytest.mark.parametrize(("text", "names"), [
    (_DEVICE_COUNT.format(code=804, string=_FORWARD_COMPAT), ("cudaErrorCompatNotSupportedOnDevice",)),
    (_DEVICE_COUNT.format(code=803, string=_DISPLAY_DRIVER), ("cudaErrorSystemDriverMismatch",)),
    (f"CUDA error 35 at csrc/ops.cu:41: {_INSUFFICIENT}", ("cudaErrorInsufficientDriver",)),
    (f"Check failed: error == cudaSuccess (803 vs. 0) {_DISPLAY_DRIVER}", ("cudaErrorSystemDriverMismatch",)),
    ("cudaGetDeviceCount failed with error code 100", ("cudaErrorNoDevice",)),
    # no CUDA on the line: any program's `Error 35`
    ("Error 35: the request was refused", ()),
    # a status a healthy program prints (cudaErrorNotReady, 600) is no failure's name
    ("CUDA error 600 while polling the stream", ()),
    # a number the header does not define
    ("CUDA error 4242 at kernel.cu:1", ()),
])
def test_a_status_number_is_read_as_the_headers_name(text: str, names: tuple[str, ...]) -> None:
    assert status_names_in(text) == names


def test_the_name_is_added_once_and_a_line_without_a_number_is_kept_as_it_is() -> None:
    line = _DEVICE_COUNT.format(code=804, string=_FORWARD_COMPAT)
    # the number the paste showed, with the name it is read as
    assert with_status_names(line).endswith("(status 804 read as cudaErrorCompatNotSupportedOnDevice)")
    named = "cudaErrorCompatNotSupportedOnDevice: CUDA error 804"
    assert with_status_names(named) == named
    assert with_status_names("CUDA error: invalid argument") == "CUDA error: invalid argument"


@pytest.mark.parametrize(("value", "name"), [
    # driver_types.h's values, written out here (not read back from the table): a swapped or shifted number fails
    ("1", "cudaErrorInvalidValue"), ("2", "cudaErrorMemoryAllocation"), ("35", "cudaErrorInsufficientDriver"),
    ("36", "cudaErrorCallRequiresNewerDriver"), ("100", "cudaErrorNoDevice"), ("209", "cudaErrorNoKernelImageForDevice"),
    ("700", "cudaErrorIllegalAddress"), ("803", "cudaErrorSystemDriverMismatch"),
    ("804", "cudaErrorCompatNotSupportedOnDevice"),
])
def test_the_codes_are_driver_types_values(value: str, name: str) -> None:
    assert parsed_toml("gpu_error_names.toml")["codes"][value] == name
    assert status_names_in(f"CUDA error {value} at kernel.cu:7") == (name,)


def test_every_code_names_an_error_the_runtime_family_defines_or_one_a_healthy_program_prints() -> None:
    for value, name in parsed_toml("gpu_error_names.toml")["codes"].items():
        assert int(value) > 0, value
        assert name.startswith("cudaError"), name
        assert family_of(name) is not None or name in {"cudaErrorNotReady", "cudaErrorCudartUnloading",
                                                       "cudaErrorPeerAccessAlreadyEnabled"}, name


@pytest.mark.parametrize("log", [
    _DEVICE_COUNT.format(code=804, string=_FORWARD_COMPAT),
    _DEVICE_COUNT.format(code=803, string=_DISPLAY_DRIVER),
    f"RuntimeError: CUDA error 35 at csrc/ops.cu:41: {_INSUFFICIENT}",
    "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver.",
    # torch's warning alone (it then counts zero GPUs): the same status; of the two rows that name it outright, the one
    # written first
    ("/usr/lib/python3.10/site-packages/torch/cuda/__init__.py:118: UserWarning: CUDA initialization: Unexpected error "
     "from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already "
     f"set an error? Error 803: {_DISPLAY_DRIVER} (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)"),
])
def test_a_driver_and_cuda_mismatch_is_a_dependency_version(log: str) -> None:
    assert primary(log + "\n")[2] == "dependency-version"


def test_each_status_gets_its_own_check_and_not_the_others() -> None:
    forward = _text(_DEVICE_COUNT.format(code=804, string=_FORWARD_COMPAT) + "\n")
    display = _text(_DEVICE_COUNT.format(code=803, string=_DISPLAY_DRIVER) + "\n")
    assert "data-center GPUs" in forward and "cuda-compat" in forward and "libcuda.so.1" not in forward
    assert "libcuda.so.1" in display and "data-center GPUs" not in display
    for text in (forward, display):
        assert "CUDA_LAUNCH_BLOCKING" not in text and "Xid" not in text  # the GPU-health checks of cuda-error


@pytest.mark.parametrize(("log", "category"), [
    # other statuses keep their reading, whichever way the paste prints them
    ("RuntimeError: CUDA error: invalid argument", "cuda-error"),
    (_DEVICE_COUNT.format(code=100, string="no CUDA-capable device is detected"), "cuda-error"),
])
def test_other_statuses_keep_their_reading(log: str, category: str) -> None:
    assert primary(log + "\n")[2] == category


def test_the_mismatch_names_read_as_dependency_version_however_printed() -> None:
    # the reading the lines get, not the table read back: each status by its name, its number and its string
    for log in ("RuntimeError: CUDA error: cudaErrorInsufficientDriver", f"RuntimeError: CUDA error 35: {_INSUFFICIENT}",
                "RuntimeError: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH at init", f"RuntimeError: {_DISPLAY_DRIVER}"):
        assert primary(log + "\n")[2] == "dependency-version", log


_ALLOCATION = [
    "[2026-01-04 09:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/overlap_utils.py", line 63, in __init__',
    "    self.buffer = torch.empty(",
]


def test_invalid_argument_at_a_plain_call_points_at_a_companion_librarys_release() -> None:
    # sgl-project/sglang#16502 (split 19's B-01), tl2012tl/TE-ComfyUI-DLSS5#1, showlab/Tune-A-Video#21
    text = _text("\n".join([*_ALLOCATION, "torch.AcceleratorError: CUDA error: invalid argument"]) + "\n")
    assert "another native library in the same process" in text and "previous release" in text


def test_another_cuda_error_does_not_get_the_invalid_argument_check() -> None:
    text = _text("\n".join([*_ALLOCATION, "torch.AcceleratorError: CUDA error: unspecified launch failure"]) + "\n")
    assert "another native library in the same process" not in text


_SMI_HEADER = "| NVIDIA-SMI {driver}                 Driver Version: {driver}         CUDA Version: {cuda}     |"


def test_the_versions_the_paste_shows_are_said_and_a_newer_major_release_is_named() -> None:
    # nvidia-smi's header and a pip listing (faster-whisper#653's shape: driver 470, CUDA 11.4, a CUDA 12 build)
    text = _text("\n".join([_SMI_HEADER.format(driver="470.57.02", cuda="11.4"), "torch==2.3.0+cu121",
                            _DEVICE_COUNT.format(code=804, string=_FORWARD_COMPAT)]) + "\n")
    assert "host driver 470.57.02, whose newest CUDA is 11.4" in text
    assert "torch 2.3.0, built for CUDA 12.1" in text and "newer major release" in text


def test_a_newer_minor_release_is_no_driver_too_old() -> None:
    # torch's collect_env lines; CUDA 12.4 on a CUDA 12.2 driver runs under minor version compatibility
    text = _text("\n".join([_SMI_HEADER.format(driver="535.104.05", cuda="12.2"), "PyTorch version: 2.5.1+cu124",
                            _DEVICE_COUNT.format(code=803, string=_DISPLAY_DRIVER)]) + "\n")
    assert "torch 2.5.1, built for CUDA 12.4" in text and "minor version compatibility" in text
    assert "newer major release" not in text


def test_the_versions_are_said_only_beside_a_mismatch_status() -> None:
    text = _text("\n".join([_SMI_HEADER.format(driver="535.104.05", cuda="12.2"), "PyTorch version: 2.5.1+cu124",
                            "RuntimeError: CUDA error: invalid argument"]) + "\n")
    assert "The paste shows the host driver" not in text


def test_invalid_argument_at_a_kernel_launch_keeps_the_general_checks() -> None:
    # a Triton launch chose its own grid and shared memory: no companion-library check (review of cuda20, item 10)
    text = _text("\n".join([
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/model_executor/layers/fused_moe/fused_moe.py", line 500, '
        "in invoke_fused_moe_kernel",
        "    fused_moe_kernel[grid](",
        '  File "/usr/local/lib/python3.10/dist-packages/triton/runtime/jit.py", line 345, in <lambda>',
        "    return lambda *args, **kwargs: self.run(grid=grid, warmup=False, *args, **kwargs)",
        "RuntimeError: CUDA error: invalid argument"]) + "\n")
    assert "another native library in the same process" not in text and "CUDA_LAUNCH_BLOCKING" in text
