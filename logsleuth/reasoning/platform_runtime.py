"""A graph capture failing inside a non-NVIDIA accelerator's runtime: the step that points at that runtime.

The engines record the decode pass as graphs at start-up (SGLang's cuda_graph_runner.py: "Capture cuda graph failed:
{e}"; vLLM's graph capture), and on ROCm the inner error is the HIP runtime's, in torch's words (c10/hip's check:
`HIP error: <hipGetErrorString>`, with the error's name, `hipErrorStreamCaptureInvalidated`, in the search hint it
prints).  Turning graphs off is the stop-gap the capture's own diagnosis gives; what it misses is that on these stacks
the capture is broken by the platform's runtime or by the collective library that runs inside the graph, not by the
model: sgl-project/sglang#23580 (a ROCm 7.2.0 runtime bug invalidating the capture during a custom all-reduce, fixed in
a later ROCm), iree-org/wave#466 (a memory access fault on the AMD runtime while SGLang captured graphs with another
attention backend).  Said as general guidance, for every graph-capture diagnosis whose inner error is HIP's."""

from __future__ import annotations

from dataclasses import replace

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Failure
from logsleuth.reasoning.evidence import exception_lines

_HIP_ERROR = compile_lazily(r"\bHIP error\b|\bhipError[A-Z]\w{2,60}|\bHSA_STATUS_ERROR\w{0,40}")
ROCM_CAPTURE_STEP = (
    "General guidance: the error inside the capture is the ROCm (HIP) runtime's, not the model's code. On ROCm a capture "
    "the runtime invalidates or aborts has been a bug of the ROCm release itself, or of the collective library that "
    "runs inside the graph (RCCL, or a custom all-reduce the engine takes from a ROCm kernel library): check the image's "
    "ROCm version against the notes of newer ROCm releases and the engine's issues for this error, and try the engine's "
    "own all-reduce in place of the library's; running without graphs is the stop-gap, not the fix."
)


def with_platform_runtime(diagnosis: Diagnosis | None, failure: Failure) -> Diagnosis | None:
    """A graph-capture diagnosis with the ROCm runtime step last, when its inner error is HIP's."""
    if diagnosis is None or diagnosis.fix is None or diagnosis.category != "cuda-graph-capture":
        return diagnosis
    if not any(_HIP_ERROR.search(line) for line in exception_lines(failure)):
        return diagnosis
    if ROCM_CAPTURE_STEP in diagnosis.fix.steps:
        return diagnosis
    return replace(diagnosis, fix=replace(diagnosis.fix, steps=(*diagnosis.fix.steps, ROCM_CAPTURE_STEP)))
