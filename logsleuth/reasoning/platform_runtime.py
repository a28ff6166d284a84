"""A graph capture invalidated inside a non-NVIDIA accelerator's runtime: the step that points at that runtime.

The engines record the decode pass as graphs at start-up (SGLang's cuda_graph_runner.py: "Capture cuda graph failed:
{e}"; vLLM's graph capture), and on ROCm the inner error is the HIP runtime's, in torch's words (c10/hip's check:
`HIP error: <hipGetErrorString>`, with the error's name in the search hint it prints).  Turning graphs off is the
stop-gap the capture's own diagnosis gives; what it misses is that a capture the HIP runtime itself invalidated
(`hipErrorStreamCaptureInvalidated`: "operation failed due to a previous error during capture", and the other
`hipErrorStreamCapture*` errors) has been the runtime's or the collective library's inside the graph:
sgl-project/sglang#23580 (a ROCm 7.2.0 runtime bug invalidating the capture during a custom all-reduce, fixed in a
later ROCm).  Only that class: a HIP out-of-memory has the memory advice, an `invalid device function` or
`hipErrorNoBinaryForGpu` is a build without the GPU's gfx (the hardware rule), and a memory access fault
(`HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION`, iree-org/wave#466) is a kernel's fault, none of them the runtime's
capture.  Said as general guidance."""

from __future__ import annotations

from dataclasses import replace

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Failure
from logsleuth.reasoning.evidence import exception_lines

# HIP's own capture errors, by name or by hipGetErrorString's words after torch's `HIP error: ` (CUDA's words for its
# cudaErrorStreamCapture* errors are the same, hence the HIP prefix).
_HIP_CAPTURE_ERROR = compile_lazily(
    r"\bhipErrorStreamCapture\w{1,40}"
    r"|\bHIP error: (?:operation failed due to a previous error during capture|operation would make the legacy stream"
    r"|operation not permitted when stream is capturing)"
)
ROCM_CAPTURE_STEP = (
    "General guidance: the ROCm (HIP) runtime invalidated the capture, which is often the runtime's fault rather than "
    "the model's code. On ROCm a capture the runtime invalidates has been a bug of the ROCm release itself, or of the "
    "collective library that runs inside the graph (RCCL, or a custom all-reduce the engine takes from a ROCm kernel library): check the image's "
    "ROCm version against the notes of newer ROCm releases and the engine's issues for this error, and try the engine's "
    "own all-reduce in place of the library's; running without graphs is the stop-gap, not the fix."
)


def with_platform_runtime(diagnosis: Diagnosis | None, failure: Failure) -> Diagnosis | None:
    """A graph-capture diagnosis with the ROCm runtime step last, when its inner error is HIP's capture error."""
    if diagnosis is None or diagnosis.fix is None or diagnosis.category != "cuda-graph-capture":
        return diagnosis
    if not any(_HIP_CAPTURE_ERROR.search(line) for line in exception_lines(failure)):
        return diagnosis
    if ROCM_CAPTURE_STEP in diagnosis.fix.steps:
        return diagnosis
    return replace(diagnosis, fix=replace(diagnosis.fix, steps=(*diagnosis.fix.steps, ROCM_CAPTURE_STEP)))
