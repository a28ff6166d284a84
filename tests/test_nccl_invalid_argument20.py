"""NCCL's `unhandled cuda error` with `Cuda failure 'invalid argument'` after it: the NCCL patterns name the NCCL release
and the legacy CUDA IPC path (issue 28, stop 56, branch cuda20; split 19's D-04, vllm-project/vllm#3688, and split 17's
F-04, NVIDIA-NeMo/RL#722).  Lines rebuilt from torch's ProcessGroupNCCL template and NCCL's ncclGetLastError text."""

from __future__ import annotations

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


def test_an_invalid_argument_under_nccl_names_the_nccl_release_and_legacy_ipc() -> None:
    pattern, steps = _steps([_PREFIX + _TORCH_NCCL, _PREFIX + "ncclUnhandledCudaError: Call to CUDA function failed.",
                             _PREFIX + "Last error:", _PREFIX + "Cuda failure 'invalid argument'"])
    assert pattern == "vllm-nccl-error"
    step = next(step for step in steps if "'invalid argument'" in step)
    assert "NCCL version" in step and "NCCL_CUMEM_ENABLE=0" in step


def test_pynccls_own_wording_with_no_engine_gets_the_categorys_check() -> None:
    # no engine in the paste: the engine-neutral reading of the category (split 17's F-04 shape)
    report = diagnose_text("RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n",
                           OPTIONS)
    text = render(report, RenderOptions(format=OutputFormat.TEXT, width=200))
    assert report.failures[0].diagnosis is not None and report.failures[0].diagnosis.category == "nccl"
    assert "NCCL_CUMEM_ENABLE=0 is set" in text and "NCCL version" in text

