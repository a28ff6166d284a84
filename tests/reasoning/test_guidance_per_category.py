"""Every failure category, one line each: a failure of that category that no pattern names still gets its
category, from a rule (basis "rule") or the general guidance (basis "general", shown as "general guidance, not a
proven fix"), and the guidance names the category's usual cause (the row's title) and what to check (its checks).
The reasoning is called directly (reasoning/registry.reason), as api.py does when no pattern matches, so a pattern
that knows the line does not hide a gap.  Each line is the shape the category's code site prints (the sources of
its row in logsleuth/facts/categories.toml), reduced to its exception line."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.schema import CATEGORIES
from logsleuth.models import LaunchInfo
from logsleuth.reasoning.registry import Evidence, reason

OPTIONS = DiagnoseOptions(include_user_patterns=False)
SCHEDULER = '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 1200, in run_batch\n'

ONE_LINE = {
    "spec-decoding-args": "AssertionError: speculative_eagle_topk must be 1 when speculative_num_steps is 1 for the draft model",
    "unknown-flag": "launch_server.py: error: unrecognized arguments: --foo-bar 3",
    "invalid-flag-value": "launch_server.py: error: argument --dtype: invalid choice: 'fp7' (choose from 'auto', 'half')",
    "missing-flag": "launch_server.py: error: the following arguments are required: --model-path",
    "parallel-config": "ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (8).",
    "lora-config": "ValueError: LoRA adapter my-adapter targets modules that --lora-target-modules does not include",
    "context-length": "ValueError: This model's maximum context length is 4096 tokens. However, you requested 8200 tokens.",
    "model-path": "OSError: /models/llama-3 does not appear to have a file named config.json.",
    "weight-loading": "RuntimeError: size mismatch for lm_head.weight: copying a param with shape torch.Size([151936, 896]) from checkpoint, the shape in current model is torch.Size([151646, 896]).",
    "unsupported-architecture": "ValueError: Model architectures ['FooForCausalLM'] are not supported for now.",
    "gpu-oom": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB",
    "kv-cache-memory": "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
    "cuda-graph-capture": "RuntimeError: Capture cuda graph failed: operation not permitted when stream is capturing",
    "nccl": "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error, NCCL version 2.21.5",
    "gpu-arch-unsupported": "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "dependency-version": "ImportError: cannot import name 'ProcessorMixin' from 'transformers' (/usr/lib/python3/dist-packages/transformers/__init__.py)",
    "illegal-memory-access": "RuntimeError: CUDA error: an illegal memory access was encountered",
    "port-in-use": "OSError: [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use",
    "process-killed": "Killed",
    "serving-memory": "RuntimeError: Prefill out of memory. Try to lower your batch size.",
    "device-assert": "RuntimeError: CUDA error: device-side assert triggered",
    "hang-timeout": "RuntimeError: Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
    "native-crash": "Fatal Python error: Segmentation fault",
    "host-memory": "OSError: [Errno 12] Cannot allocate memory",
    "feature-conflict": "ValueError: Speculative decoding is not supported with the flashinfer attention backend together with pipeline parallelism",
    "tokenizer": "ValueError: Cannot use chat template functions because tokenizer.chat_template is not set and no template argument was passed!",
    # an engine bug needs the engine's own frame (a NameError alone names no code)
    "engine-bug": f"Traceback (most recent call last):\n{SCHEDULER}    out = self.tp_worker.forward(forward_batch)\nNameError: name 'forward_batch' is not defined",
    "network": "httpx.ProxyError: 502 Bad Gateway",
    "cuda-error": "RuntimeError: CUDA error: uncorrectable ECC error encountered",
    "router": "Error: Failed to start router: no healthy workers available (sgl-router)",
    "quantization": "ValueError: Quantization method specified in the model config (awq) does not match the quantization method specified in the `quantization` argument (gptq).",
}
# Categories a one-line failure cannot show: the health report's (a trend over a run, docs/health.md), the fallback,
# and orchestration, whose events (kubectl's `FailedScheduling`, `ImagePullBackOff`) are read from a pod's events
# or a runtime's source, not found as a failure in a pasted line.
NOT_ONE_LINE = {"speculative-acceptance", "queueing", "throughput", "cuda-graph-disabled", "precision-fallback",
                "unclassified", "orchestration"}


def test_every_failure_category_has_its_line() -> None:
    assert set(ONE_LINE) == set(CATEGORIES) - NOT_ONE_LINE


@pytest.mark.parametrize("category", sorted(ONE_LINE))
def test_a_line_without_a_pattern_gets_its_category_and_checks(category: str) -> None:
    report = diagnose_text(ONE_LINE[category] + "\n", OPTIONS)
    assert report.failures, "not found as a failure"
    diagnosis = reason(Evidence(report.failures[0].failure, LaunchInfo()))
    assert diagnosis is not None
    assert diagnosis.category == category
    assert diagnosis.fix is not None and (diagnosis.fix.steps or diagnosis.fix.flags or diagnosis.fix.needs_input)
    if diagnosis.basis == "general":
        assert diagnosis.fix.summary.startswith(f"General checks for {category}")
        assert diagnosis.title and category in diagnosis.root_cause
    else:
        assert diagnosis.basis == "rule"
