"""Shapes stop 40's dev sweep of fresh pastes misread (branch h-found7):

- one rank's named error (`RuntimeError: NCCL error: …`, worded like a cascade) and the next rank's traceback cut
  before its exception line: the cut one names no cause and no longer leads (diagnosis/grouping.names_no_cause);
- Hydra's `Error executing job with overrides: […]` (hydra/core/utils.py JobReturn.return_value, logged before the
  job's exception is re-raised; verl runs under Hydra): a failure when the paste shows no other, never the failure
  when the job's own traceback follows (tracebacks/typeless_errors.py);
- a message an engine's code logs as an error (not one it raises), bare right after the launch command or ending a
  paste: read against the index's logged sites (tracebacks/logged_errors.engine_message), while the engine's
  informational lines after the command stay no failure.

Tracebacks are printed by real CPython (tests.helpers.real_traceback) and cut as the pastes were."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import diagnose_text
from logsleuth.tracebacks.typeless_errors import HYDRA_JOB_ERROR, typeless_error
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

WILD = Path(__file__).parent / "fixtures" / "wild"

# Hydra's line as verl-project/verl#10 and hkust-nlp/simpleRL-reason#80 show it (overrides shortened).
HYDRA_LINE = ("Error executing job with overrides: ['data.train_batch_size=1024', 'actor_rollout_ref.rollout.name=vllm', "
              "'actor_rollout_ref.rollout.gpu_memory_utilization=0.4']")


@pytest.mark.parametrize("line", [
    HYDRA_LINE,
    "> " + HYDRA_LINE,  # a block quote in the prose
    "Error executing job with overrides: []",  # a job run without overrides
    "(main_task pid=90508) " + HYDRA_LINE,  # under Ray's prefix
])
def test_hydra_line_is_a_fallback_failure_without_the_overrides_as_its_message(line: str) -> None:
    found = typeless_error(line)
    assert found == (HYDRA_JOB_ERROR, "Error executing job with overrides", True)


@pytest.mark.parametrize("line", [
    "Running with overrides: ['trainer.n_gpus_per_node=8']",
    "The job prints its overrides: ['a=1'] before it starts (no error executing job here)",
])
def test_lines_that_only_mention_overrides_are_no_hydra_failure(line: str) -> None:
    assert typeless_error(line) is None


def test_hydra_line_alone_is_the_failure_its_overrides_name_no_category() -> None:
    log = "(main_task pid=90508) Using LocalLogger is deprecated. The constructor API will change\n" + HYDRA_LINE + "\n"
    type_name, message, category = primary(log)
    # gpu_memory_utilization in the overrides is configuration, not a memory failure
    assert (type_name, message, category) == (HYDRA_JOB_ERROR, "Error executing job with overrides", "unclassified")


def test_the_jobs_own_traceback_after_hydras_line_is_the_failure() -> None:
    printed = real_traceback("""
        def fit():
            raise RuntimeError("The actor died unexpectedly before finishing this task.")


        fit()
    """)
    type_name, message, _ = primary(HYDRA_LINE + "\n" + printed)
    assert (type_name, message) == ("RuntimeError", "The actor died unexpectedly before finishing this task.")


@pytest.mark.parametrize("log", [
    # right after the command (gpustack/gpustack#3848's words, the record header lost)
    "$ sglang serve --model-path /models/FLUX.1-dev --port 30000\n"
    "Rank 0 scheduler is dead. Please check if there are relevant logs.\n",
    # a blank line between, the paste ending on it
    "$ python3 -m sglang.launch_server --model-path /models/Qwen2.5-7B --tp 2\n\n"
    "Rank 1 scheduler is dead. Please check if there are relevant logs.\n",
    # SGLang's record ending the paste (its header kept: SGLang names no level)
    "[2025-12-11 17:47:40] Load weight begin. avail mem=78.50 GB\n"
    "[2025-12-11 17:52:52] Rank 0 scheduler is dead. Please check if there are relevant logs.\n",
    # the diffusion server's shorter time, in a fence whose closing line is not the paste's last line of content
    "```\n[12-11 17:47:40] Loading FluxTransformer2DModel, default_dtype: torch.bfloat16\n"
    "[12-11 17:52:52] Rank 0 scheduler is dead. Please check if there are relevant logs.\n```\n",
])
def test_a_message_the_engine_logs_as_an_error_after_the_command_or_ending_the_paste_is_a_failure(log: str) -> None:
    type_name, message, category = primary(log)
    assert type_name == "ERROR"
    assert message.endswith("scheduler is dead. Please check if there are relevant logs.")
    assert category == "process-killed"


def test_the_engines_informational_lines_after_the_command_stay_no_failure() -> None:
    log = ("$ python -m sglang.launch_server --model-path mistralai/Mistral-7B-Instruct-v0.1 --port 30000\n"
           "Load weight end. type=MistralForCausalLM, dtype=torch.bfloat16, avail mem=9.69 GB\n"
           "Memory pool end. avail mem=2.44 GB\n"
           "Capture cuda graph end. Time elapsed: 2.19 s\n")
    assert not diagnose_text(log, OPTIONS).failures


def test_a_raised_message_still_takes_its_raised_type() -> None:
    log = "vllm serve /models/llama --tensor-parallel-size 3\n" \
          "Total number of attention heads (32) must be divisible by tensor parallel size (3).\n"
    assert primary(log)[0] == "ValueError"


def test_a_named_error_leads_the_next_ranks_cut_traceback() -> None:
    # generated by scripts/wild_fixtures (dev_found7.py) from real CPython: rank 0's pynccl error, its header cut, then
    # rank 3's 'WorkerProc failed to start.' and its traceback cut after the constructor's call
    log = (WILD / "dev-named-error-before-cut-traceback" / "gpustack-gpustack-2680-rank-after-nccl-error.log").read_text()
    report = diagnose_text(log, OPTIONS)
    assert [group.failure.exceptions[-1].type for group in report.failures] == ["RuntimeError"]
    assert report.failures[0].failure.exceptions[-1].message.startswith("NCCL error: unhandled system error")
    # the cut traceback names no cause: one line of what followed the error (diagnosis/restated.py)
    assert any("cut before its exception line" in line for line in report.failures[0].cascade)


def test_a_cut_traceback_still_leads_a_cascade_printed_after_it() -> None:
    printed = real_traceback("""
        def load_model():
            raise MemoryError("the paste cut this line")


        load_model()
    """)
    lines = printed.strip().splitlines()
    # cut before the innermost frame: no raising statement, no exception line
    cut = "\n".join(lines[: next(i for i, line in enumerate(lines) if "in load_model" in line)]) + "\n"
    later = "[2025-03-25 14:34:12 TP1] Load weight begin. avail mem=78.50 GB\nRuntimeError: Connection reset by peer\n"
    report = diagnose_text(cut + later, OPTIONS)
    # both name no root cause of their own: log order decides, the cut traceback printed first leads
    assert [group.failure.exceptions[-1].type for group in report.failures] == ["", "RuntimeError"]


# SGLang's custom all-reduce failing in CUDA graph capture (sgl-project/sglang#9706): the paste cut after the innermost
# frame's `File` line, the exception line lost.
GRAPH_BUFFERS = """
def register_graph_buffers():
    raise RuntimeError("invalid argument")


def capture():
    register_graph_buffers()


capture()
"""


def _cut_after_innermost_file_line(printed: str) -> str:
    lines = printed.strip().splitlines()
    return "\n".join(lines[: 1 + max(i for i, line in enumerate(lines) if "in register_graph_buffers" in line)]) + "\n"


@pytest.mark.parametrize(("above", "expected"), [
    # a record that says what failed, a heading and a collapsed block between it and the traceback
    ("[2025-08-27 10:00:01 TP0] Capture cuda graph failed: invalid argument\n\n### Log\n<details>\n<summary>Full log</summary>\n\n```\n",
     ("ERROR", "Capture cuda graph failed: invalid argument")),
    # vLLM's error record, a sentence and a fence between
    ("ERROR 08-27 10:00:01 [gpu_model_runner.py:2400] Error in CUDA graph capture: invalid argument\n\nThe traceback:\n\n```text\n",
     ("ERROR", "Error in CUDA graph capture: invalid argument")),
    # the sentence naming the exception unquoted, a heading named "Error" nearer (it names nothing and gives way)
    ("SGLang fails to capture CUDA graph with a RuntimeError: invalid argument\n\n## Full Error Traceback\n```\n",
     ("RuntimeError", "invalid argument")),
    # the same quoted in backticks
    ("SGLang fails to capture CUDA graph with a `RuntimeError: invalid argument` in the all-reduce.\n\n## Full Error Traceback\n```\n",
     ("RuntimeError", "invalid argument")),
])
def test_the_error_stated_above_a_cut_traceback_is_reached_across_markdown(above: str, expected: tuple[str, str]) -> None:
    log = above + _cut_after_innermost_file_line(real_traceback(GRAPH_BUFFERS)) + "```\n"
    assert primary(log)[:2] == expected


def test_a_step_announced_as_failed_without_a_reason_names_nothing() -> None:
    # vLLM's `WorkerProc failed to start.` announces the traceback after it, as "hit an exception" does
    log = "Worker setup: WorkerProc failed to start.\n" + _cut_after_innermost_file_line(real_traceback(GRAPH_BUFFERS))
    assert primary(log)[0] == ""


def test_markdown_alone_above_a_cut_traceback_names_nothing() -> None:
    log = "## Error log\n<details>\n<summary>Error</summary>\n\n```\n" + _cut_after_innermost_file_line(real_traceback(GRAPH_BUFFERS))
    assert primary(log)[0] == ""


def test_a_message_the_paste_put_in_bold_is_read_without_the_markers() -> None:
    printed = real_traceback("""
        raise ValueError("There is no module or parameter named 'score' in Qwen2VLForConditionalGeneration")
    """)
    lines = printed.strip().splitlines()
    type_name, _, message = lines[-1].partition(": ")
    log = "".join(f"[rank0]: {line}\n" for line in [*lines[:-1], f"{type_name}: **{message}**"])
    assert primary(log)[:2] == ("ValueError", "There is no module or parameter named 'score' in Qwen2VLForConditionalGeneration")


def test_a_message_holding_python_double_star_keeps_it() -> None:
    printed = real_traceback("""
        def f(**kwargs):
            return kwargs


        f(**None)
    """)
    message = printed.strip().splitlines()[-1].partition(": ")[2]  # `… argument after ** must be a mapping, not NoneType`
    assert "**" in message
    assert primary(printed)[:2] == ("TypeError", message)


SPAN_COMMAND = "`vllm serve /data/models/Qwen1.5-32B-Chat \\\n  --tensor-parallel-size 6 \\\n  --max-model-len 8192\n `\n"


def test_the_engines_message_after_a_command_in_an_inline_code_span_is_read() -> None:
    # the closing backtick starts a new record for the normalizer, with nothing stripped off the line after it
    log = SPAN_COMMAND + "Total number of attention heads (40) must be divisible by tensor parallel size (6).\n"
    type_name, message, category = primary(log)
    assert (type_name, category) == ("ValueError", "parallel-config")
    assert message.startswith("Total number of attention heads (40)")


def test_an_informational_line_after_a_command_in_an_inline_code_span_is_no_failure() -> None:
    log = SPAN_COMMAND + "Automatically detected platform cuda.\n"
    assert not diagnose_text(log, OPTIONS).failures


@pytest.mark.parametrize("log", [
    "[2025-12-11 17:47:40] Load weight end. avail mem=61.94 GB\n[2025-12-11 17:48:20] The server is fired up and ready to roll!\n",
    "```\n[2025-12-11 17:48:21 TP0] Decode batch. #running-req: 1, #token: 2625, token usage: 0.01, #queue-req: 0\n```\n",
])
def test_a_healthy_last_record_is_no_failure(log: str) -> None:
    assert not diagnose_text(log, OPTIONS).failures
