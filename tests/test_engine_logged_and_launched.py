"""The engine from two more kinds of positive evidence on short pastes (issue 28, item 4: the engine left unnamed on
pastes that showed it), each with look-alikes where nothing must be named.

- A line one engine's code logs as an error, pasted without its record's header, which the scanner types only by
  its level (`ERROR`): SGLang's `Piecewise CUDA Graph failed with error: …` (sglang/srt/compilation/
  piecewise_context_manager.py enable_piecewise_cuda_graph, logger.error; split 13's E-03) and `Rank 0 scheduler is
  dead. Please check if there are relevant logs.` (its launcher's logger.error).  Such a line is matched whole against
  what the engines log, never as a raise's opening: a wrapper's ERROR record quoting torch's rendezvous timeout
  (`Timed out after 601 seconds waiting for clients. 1/2 clients joined.`, xorbitsai/inference#2486) named vLLM, its
  `Timed out after {}s waiting for {} lock: {}` opened by letting a hole swallow a whole sentence.
- A launcher's word that the engine it started did not come up: instructlab's `vLLM failed to start.  Retry with
  --enable-serving-output …` (instructlab/instructlab#3466), a benchmark runner's `sglang did not become healthy at
  http://127.0.0.1:30000/health within 900s` (split 13's C-03).  Not a sentence, a question, or a line naming both.

Tracebacks are real CPython's (a user's script, or a module installed under an engine's package tree)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.facts.message_templates import opening_matched
from logsleuth.ingest.engine_evidence import launched_engine
from tests.helpers import real_traceback, traceback_in_package

OPTIONS = DiagnoseOptions(include_user_patterns=False)
PIECEWISE = "Piecewise CUDA Graph failed with error: CUDA error: an illegal memory access was encountered"
SCHEDULER_DEAD = "Rank 0 scheduler is dead. Please check if there are relevant logs."
RENDEZVOUS = ("2024-10-25 12:21:14,974 xinference.api.restful_api 37502 ERROR    [address=172.22.149.188:45585, "
              "pid=43525] Timed out after 601 seconds waiting for clients. 1/2 clients joined.")


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


@pytest.mark.parametrize(("line", "engine"), [
    ("vLLM failed to start.  Retry with --enable-serving-output to learn more about the failure.", "vllm"),
    ("sglang did not become healthy at http://127.0.0.1:30000/health within 900s", "sglang"),
    ("2025-01-01 10:00:00 ERROR: SGLang server failed to start within 600 seconds", "sglang"),
])
def test_a_launcher_saying_the_engine_did_not_come_up_names_it(line: str, engine: str) -> None:
    traceback = real_traceback("import subprocess\nsubprocess.run(['ninja-that-is-not-here'])\n")
    assert launched_engine(line) == engine
    assert engine_of(f"{line}\n{traceback}") == engine


@pytest.mark.parametrize("line", [
    "I think vLLM failed to start because of the driver",
    "vllm failed to start, so I tried sglang",
    "why did sglang not become healthy? vLLM failed to start too",
])
def test_look_alike_a_sentence_about_an_engine_that_did_not_start_names_nothing(line: str) -> None:
    assert launched_engine(line) is None
    traceback = real_traceback("raise RuntimeError('boom')\n")
    assert engine_of(f"{line}\n{traceback}") is None


def test_vllm_s_own_engine_core_line_is_no_launcher_s() -> None:
    """`EngineCore failed to start.` names vLLM's process (the message rule reads it as vLLM's logged line)."""
    assert launched_engine("EngineCore failed to start.") is None


def test_the_failure_s_own_frames_outrank_a_launcher_line(tmp_path: Path) -> None:
    """The weakest kind of evidence: a frame in the other engine's package decides."""
    traceback = traceback_in_package(tmp_path, "vllm/engine/llm_engine.py", "raise RuntimeError('boom')")
    assert engine_of(f"sglang did not become healthy at http://127.0.0.1:30000/health within 900s\n{traceback}") == "vllm"
