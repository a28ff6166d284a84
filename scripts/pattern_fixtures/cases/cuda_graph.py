"""CUDA graph capture at start-up failing: out of memory, or any other error in a captured kernel.

Patterns: sglang-gpu-oom-cuda-graph, sglang-gpu-oom-cuda-graph-v0523 (the 0.5.23 message),
sglang-cuda-graph-capture-failed, sglang-cuda-graph-capture-failed-v0523.
Each failure is filed five times: positive for both older versions and for 0.5.23 under its own
pattern, and each version as the near miss of the other version's pattern.
"""

from __future__ import annotations

from ..engine import Frame
from ..mirror import (
    CAPTURE_BEGIN,
    KV_LINE,
    LOAD_END,
    LOGITS_ALLOC,
    QWEN_FORWARD,
    cuda_graph_frames,
    oom,
    scheduler_crash,
)

TRITON_LAUNCH = Frame(
    "sglang/srt/layers/attention/triton_ops/decode_attention.py",
    "_decode_att_m_fwd",
    "_fwd_kernel_stage1[grid](q, k_buffer, v_buffer, sm_scale, kv_indptr, kv_indices, att_out)",
    env=(("_fwd_kernel_stage1", "{(1, 28, 8): __import__('torch').ops.triton_launch}"), ("grid", "(1, 28, 8)")),
    lineno=120,
)

# pattern: (the frames below ModelRunner.forward_decode, the error torch raises there)
FAILURES = {
    "sglang-gpu-oom-cuda-graph": ((QWEN_FORWARD, LOGITS_ALLOC), oom("594.00 MiB", free="311.44 MiB")),
    "sglang-cuda-graph-capture-failed": ((TRITON_LAUNCH,), ("RuntimeError", "Triton Error [CUDA]: operation not permitted when stream is capturing")),
}
# (pattern suffix, fixture name, version, the line of ModelRunner.forward_decode)
FILINGS = (
    ("", "positive-0.4.10.post2", "0.4.10.post2", 1545),
    ("", "positive-0.5.9", "0.5.9", 1545),
    ("", "negative-0.5.23", "0.5.23", 2800),
    ("-v0523", "positive-0.5.23", "0.5.23", 2800),
    ("-v0523", "negative-0.5.9", "0.5.9", 2290),
)

CASES = tuple(
    scheduler_crash(
        pattern + suffix, name, (*cuda_graph_frames(version, forward_lineno), *inner),
        # the 0.5.23 fixtures have no "Capture cuda graph begin" record
        before=(LOAD_END, KV_LINE) if version == "0.5.23" else (LOAD_END, KV_LINE, CAPTURE_BEGIN),
        torch_error=error,
    )
    for pattern, (inner, error) in FAILURES.items()
    for suffix, name, version, forward_lineno in FILINGS
)
