"""The engine from one more kind of positive evidence on short pastes (issue 28, item 4: the engine left unnamed on
pastes that showed it), with look-alikes where nothing must be named.

- A line one engine's code logs as an error, pasted without its record's header, which the scanner types only by
  its level (`ERROR`): SGLang's `Piecewise CUDA Graph failed with error: …` (sglang/srt/compilation/
  piecewise_context_manager.py enable_piecewise_cuda_graph, logger.error; split 13's E-03) and `Rank 0 scheduler is
  dead. Please check if there are relevant logs.` (its launcher's logger.error).  Such a line is matched whole against
  what the engines log, never as a raise's opening: a wrapper's ERROR record quoting torch's rendezvous timeout
  (`Timed out after 601 seconds waiting for clients. 1/2 clients joined.`, xorbitsai/inference#2486) named vLLM, its
  `Timed out after {}s waiting for {} lock: {}` opened by letting a hole swallow a whole sentence.
- That refusal holds only where fixed text follows the hole: a template that ends in a hole takes a value of several
  sentences whole (torch's `CUDA out of memory. Tried to allocate …` in SGLang's `Capture cuda graph failed: {}`,
  srt/model_executor/cuda_graph_runner.py CudaGraphRunner.__init__; in vLLM's `Worker {} failed to initialize: {}`,
  v1/executor/ray_executor_v2.py RayExecutorV2._init_executor, as Xinference's actor pool re-raises it).
- A launcher's word that an engine did not come up names none (test_engine_everywhere's ONLY_NAMING): any line may
  say it, of any engine (instructlab/instructlab#3466's `vLLM failed to start.  Retry with …`).

Tracebacks are real CPython's (a user's script, or a module installed under an engine's package tree)."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.facts.message_templates import opening_matched
from tests.helpers import real_traceback

OPTIONS = DiagnoseOptions(include_user_patterns=False)
PIECEWISE = "Piecewise CUDA Graph failed with error: CUDA error: an illegal memory access was encountered"
SCHEDULER_DEAD = "Rank 0 scheduler is dead. Please check if there are relevant logs."
# Xinference's record of an actor's error (xorbitsai/inference#2486's shape; the address is a log's text, never contacted)
XINFERENCE_RECORD = "2024-10-25 12:21:14,974 xinference.api.restful_api 37502 ERROR    [address=127.0.0.1:45585, pid=43525] "
RENDEZVOUS = XINFERENCE_RECORD + "Timed out after 601 seconds waiting for clients. 1/2 clients joined."


def engine_of(log: str) -> str | None:
    return diagnose_text(log, OPTIONS).launch.engine


@pytest.mark.parametrize("line", [PIECEWISE, SCHEDULER_DEAD])
def test_a_line_only_sglang_logs_as_an_error_names_sglang_without_its_header(line: str) -> None:
    report = diagnose_text(f"Capture cuda graph bs [1, 2, 4, 8]\n{line}\n", OPTIONS)
    assert [group.failure.final.type for group in report.failures] == ["ERROR"]
    assert report.launch.engine == "sglang"


def test_look_alike_a_wrapper_record_quoting_torch_names_no_engine() -> None:
    """torch's rendezvous timeout in Xinference's ERROR record (Xinference runs either engine): no engine, alone or
    above the traceback it logged."""
    assert engine_of(RENDEZVOUS + "\n") is None
    traceback = real_traceback("def launch_model():\n    raise RuntimeError('actor failed')\n\nlaunch_model()\n")
    assert engine_of(f"{RENDEZVOUS}\n{traceback}") is None


def test_a_hole_does_not_run_past_a_sentence_to_open_a_template() -> None:
    """A message that ends inside a hole of a template, that hole holding a sentence's end and another sentence,
    is a whole message of other words; a value cut inside the hole still opens it."""
    template = "Timed out after {}s waiting for {} lock: {}"
    assert opening_matched(template, "Timed out after 601 seconds waiting for clients. 1/2 clients joined.") == 0
    assert opening_matched(template, "Timed out after 30s waiting for /tmp/cache/model") >= 24


TORCH_OOM = ("CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.20 GiB "
             "is free.")


def test_a_template_ending_in_a_hole_takes_a_value_of_several_sentences() -> None:
    assert opening_matched("Capture cuda graph failed: {}\n{}", f"Capture cuda graph failed: {TORCH_OOM}") >= 24
    assert opening_matched("Worker {} failed to initialize: {}", f"Worker 0 failed to initialize: {TORCH_OOM}") >= 24


def test_a_wrapper_s_record_of_sglang_s_cuda_graph_oom_is_diagnosed_as_sglang_s() -> None:
    """A wrapper's ERROR record, then the line SGLang's CUDA graph failure ends on, holding torch's two-sentence OOM
    message (the paste kept no traceback)."""
    report = diagnose_text("2024-10-25 12:21:14,974 xinference.core.worker 37502 ERROR    Failed to load model\n"
                           f"Capture cuda graph failed: {TORCH_OOM}\n", OPTIONS)
    assert report.launch.engine == "sglang"
    assert [group.diagnosis.pattern for group in report.failures] == ["sglang-gpu-oom-cuda-graph"]


def test_a_wrapper_s_copy_of_vllm_s_worker_failure_keeps_its_engine() -> None:
    """Xinference's actor pool re-raising vLLM's `Worker {} failed to initialize: {}` with a torch OOM message."""
    record = f"{XINFERENCE_RECORD}Worker 0 failed to initialize: {TORCH_OOM}\n"
    assert engine_of(record) == "vllm"


def test_look_alike_a_sentence_that_the_other_engine_failed_to_start_leaves_the_failure_s_engine() -> None:
    """A user's word that vLLM failed to start too, above SGLang's own KV cache message: SGLang, and its pattern."""
    report = diagnose_text("vLLM failed to start on this machine as well.\nWith SGLang:\n"
                           "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n", OPTIONS)
    assert report.launch.engine == "sglang"
    assert [group.diagnosis.pattern for group in report.failures] == ["sglang-kv-cache-not-enough-memory"]
