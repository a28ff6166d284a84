"""NCCL's `unhandled cuda error` with `Cuda failure 'invalid argument'` after it: the NCCL patterns name the NCCL release
and the legacy CUDA IPC path (issue 28, stop 56, branch cuda20; split 19's D-04, vllm-project/vllm#3688, and split 17's
F-04, NVIDIA-NeMo/RL#722).  Lines rebuilt from torch's ProcessGroupNCCL template and NCCL's ncclGetLastError text."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from tests.test_fatal_output_shapes import OPTIONS

_PREFIX = "(RayWorkerVllm pid=311) ERROR 05-02 10:00:00 ray_utils.py:44] "
_TORCH_NCCL = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
               "1333, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1")


def _steps(lines: list[str]) -> tuple[str, tuple[str, ...]]:
    report = diagnose_text("\n".join(lines) + "\n", OPTIONS)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None
    return diagnosis.pattern or "", diagnosis.fix.steps


def _invalid_argument(version: str, last: str = "Cuda failure 'invalid argument'") -> list[str]:
    return [_PREFIX + _TORCH_NCCL.replace("2.18.1", version), _PREFIX + "ncclUnhandledCudaError: Call to CUDA function failed.",
            _PREFIX + "Last error:", _PREFIX + last]


def test_an_invalid_argument_under_nccl_names_the_nccl_release_read_from_the_line() -> None:
    pattern, steps = _steps(_invalid_argument("2.18.1"))
    assert pattern == "vllm-nccl-error"
    step = next(step for step in steps if "'invalid argument'" in step)
    assert "NCCL 2.18.1, older than 2.19.3" in step
    # vLLM sets NCCL_CUMEM_ENABLE=0 itself: the test is the other value, never "check whether =0 is set"
    assert "vllm/env_override.py" in step and "NCCL_CUMEM_ENABLE=1" in step and "is set for the process" not in step


def test_a_newer_nccl_is_not_called_older() -> None:
    _, steps = _steps(_invalid_argument("2.21.5"))
    step = next(step for step in steps if "'invalid argument'" in step)
    assert "older than" not in step and "2.21.5" not in step


@pytest.mark.parametrize("lines", [
    # another last error: out of memory
    _invalid_argument("2.18.1", "Cuda failure 'out of memory'"),
    # pynccl's unhandled system error (sgl-project/sglang#4289: /dev/shm), with vLLM's release line
    ["INFO 05-02 10:00:01 pynccl.py:69] vLLM is using nccl==2.18.1", "Traceback (most recent call last):",
     '  File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/device_communicators/pynccl.py", line 90, in __init__',
     "    self.comm = self.nccl.ncclCommInitRank(self.world_size, self.unique_id, self.rank)",
     "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"],
    # an unhandled cuda error with no last error shown
    _invalid_argument("2.18.1")[:2],
])
def test_no_invalid_argument_step_without_invalid_argument(lines: list[str]) -> None:
    _, steps = _steps(lines)
    assert not any("'invalid argument'" in step or "NCCL_CUMEM_ENABLE" in step for step in steps)


def test_in_nccls_cumem_functions_only_the_rows_cumem_check_is_said() -> None:
    report = diagnose_text("\n".join(_invalid_argument("2.21.5", "Cuda failure 'invalid argument' in ncclCuMemAlloc"))
                           + "\n", OPTIONS)
    text = render(report, RenderOptions(format=OutputFormat.TEXT, width=200))
    assert "NCCL's last error is" not in text


def test_with_no_engine_shown_the_step_still_reads_the_last_error() -> None:
    # no engine in the paste (split 17's F-04 shape): the engine-neutral reading gets the same step
    log = ["RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
           "Last error:", "Cuda failure 'invalid argument'"]
    report = diagnose_text("\n".join(log) + "\n", OPTIONS)
    text = render(report, RenderOptions(format=OutputFormat.TEXT, width=200))
    assert report.failures[0].diagnosis is not None and report.failures[0].diagnosis.category == "nccl"
    assert "NCCL's last error is" in text
