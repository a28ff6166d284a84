"""torch's CUDA check line for the out-of-memory status (`CUDA error: out of memory`, c10/cuda/CUDAException.cpp:
"CUDA error: " + cudaGetErrorString(cudaErrorMemoryAllocation)) is out of GPU memory, not the cuda-error row's failed
call, whose checks say "not out of memory" and lead to driver and GPU-health checks (found scoring stop 56's held-out
split, after it was scored).  The traceback is real CPython's: a graph capture's `capture_end` in a module at
`torch/cuda/graphs.py` (the frames through torch/cuda that made the cuda-error row win)."""

from __future__ import annotations

import importlib.util
import traceback
from pathlib import Path

import pytest

from tests.test_fatal_output_shapes import primary

_GRAPHS = '''
def capture_end(message):
    raise RuntimeError(message)
'''


def _cpython_traceback(root: Path, message: str) -> str:
    module_path = root / "site-packages" / "torch" / "cuda" / "graphs.py"
    module_path.parent.mkdir(parents=True)
    module_path.write_text(_GRAPHS)
    spec = importlib.util.spec_from_file_location("graphs_under_test", module_path)
    assert spec is not None and spec.loader is not None
    graphs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(graphs)
    try:
        graphs.capture_end(message)
    except RuntimeError:
        return traceback.format_exc()
    raise AssertionError("the capture did not raise")


@pytest.mark.parametrize(("message", "category"), [
    ("CUDA error: out of memory", "gpu-oom"),
    # another status's string under the same check stays the failed call's
    ("CUDA error: invalid argument", "cuda-error"),
])
def test_the_out_of_memory_status_under_torchs_cuda_check_is_gpu_oom(tmp_path: Path, message: str, category: str) -> None:
    log = ("INFO 06-05 06:18:10 model_runner.py:1000] Capturing cudagraphs for decoding.\n"
           + _cpython_traceback(tmp_path, message)
           + "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")
    exception_type, read_message, read_category = primary(log)
    # torch's hint lines are part of its message (CUDAException.cpp appends them), so the message opens with the status
    assert (exception_type, read_category) == ("RuntimeError", category)
    assert read_message.startswith(message)
