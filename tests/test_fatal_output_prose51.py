"""Failures a person states or retypes in prose (issue 28, stop 51; the classes the retired blind split 14 missed,
generalized from their raising code):

- a failure stated only in words, the launch command pasted and no log line: the out-of-memory class the engines print
  named in a sentence that says the run failed (`… but it OOMs.` over `vllm serve …`, vllm-project/vllm#9445;
  `the server OOMs at startup`), typed as torch's CUDA out-of-memory error and marked as stated in words; a question,
  a hope, a negation, a condition, a past got past, a description of a behaviour or a PR, host memory, and the classes
  no thread evidences (an illegal memory access, an exception type named in words) state none (review 3 of stop 51);
- an error line retyped by hand inside a sentence, its spacing changed: argparse's `%(prog)s: error: %(message)s`
  (CPython Lib/argparse.py ArgumentParser.error) with no space after its colons, in typographic quotes
  (`报错：“vllm:error:unrecognized arguments:--enable-reason”`, datawhalechina/self-llm#459); an engine's message
  (vLLM's `Bfloat16 is only supported on GPUs with compute capability of at least 8.0. …`, the raise site index)
  retyped with a space before its punctuation.
"""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from tests.helpers import argparse_error_line, real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

VLLM_COMMAND = "vllm serve meta-llama/Llama-3.2-11B-Vision-Instruct --max-model-len 1024"
SGLANG_COMMAND = "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8"


def _text(log: str) -> str:
    return render(diagnose_text(log, OPTIONS), RenderOptions(format=OutputFormat.TEXT, width=200))


# -- a failure stated only in words -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("sentence", [
    "Serving this checkpoint on one card, but it OOMs. Launched with:",
    "The server OOMs at startup with this command:",
    "I get an OOM error as soon as the weights are loaded:",
    "It runs out of memory during CUDA graph capture:",
])
def test_an_oom_stated_in_words_over_the_launch_command_is_the_failure(sentence: str) -> None:
    log = f"{sentence}\n```\n{VLLM_COMMAND}\n```\nThe same command works for a smaller model.\n"
    assert primary(log) == ("torch.OutOfMemoryError", "CUDA out of memory", "gpu-oom")
    report = diagnose_text(log, OPTIONS)
    assert report.failures[0].failure.final.read_from_prose == "stated"
    assert report.launch.engine == "vllm"
    assert "stated by the user in words" in _text(log)  # inferred, never shown as printed


# Only the out-of-memory class is read (review 3 of stop 51): a person naming an illegal memory access or an exception
# type describes a behaviour or a PR's purpose as often as a run, and no thread but the brief's example evidences them.
@pytest.mark.parametrize("sentence", [
    "It crashes with an illegal memory access when I send 64 long prompts at once.",
    "It crashes with a KeyError when loading the checkpoint.",
])
def test_another_class_named_in_words_is_no_failure(sentence: str) -> None:
    assert not diagnose_text(f"{sentence}\n{SGLANG_COMMAND}\n", OPTIONS).failures


@pytest.mark.parametrize("sentence", [
    "Why does it OOM with this command?",
    "Does it crash with a KeyError for you?",
    "To avoid OOM I lowered the memory fraction, and it starts fine now.",
    "It does not OOM anymore after the upgrade.",
    "I worry it might run out of memory at 128k context.",
    "If it runs out of memory, lower --max-model-len.",
    "Does it crash with an illegal memory access for you too?",
    "No OOM errors so far.",
])
def test_a_sentence_that_asks_hopes_or_denies_states_no_failure(sentence: str) -> None:
    assert not diagnose_text(f"{sentence}\n{VLLM_COMMAND}\n", OPTIONS).failures


# Look-alikes of a stated failure (review 3 of stop 51, our own sentences of each shape): a past the sentence or its
# line says was got past, a condition (with `and` or a comma between it and the match), a general behaviour, a PR's
# purpose, a code comment, the engines' own test wording.
@pytest.mark.parametrize("sentence", [
    "It OOMed before I set --gpu-memory-utilization 0.8; now it works fine.",
    "We hit OOM with batch 256, so we use batch 128 and everything works.",
    "Previously it crashed with an illegal memory access, the upgrade solved it.",
    "With 0.6.0 it OOMed; with 0.6.3 it works.",
    "Earlier I got an OOM, which was my fault. Now everything is running.",
    "If you use batch 512 and it OOMs, lower --max-num-seqs.",
    "In case the model OOMs, lower the batch.",
    "Whenever the server runs out of memory, the watchdog restarts it.",
    "The server OOMs if the batch is above 512.",
    "The engine raises a ValueError when max_model_len exceeds the derived length, which is expected.",
    "# the server raises a ValueError when the prompt is too long",
    "This PR fixes the bug where the server crashes with a KeyError on empty prompts.",
    "This PR fixes the bug where the server runs out of memory on long prompts.",
    "on 3.10 it raises AttributeError",
])
def test_a_past_fix_a_condition_or_a_description_states_no_failure(sentence: str) -> None:
    assert not diagnose_text(f"{sentence}\n{VLLM_COMMAND}\n", OPTIONS).failures


# The host's memory, not the GPU's: a container's, a pod's or the kernel's OOM kill is no CUDA out-of-memory error
# (categories.toml's host-memory); no type is guessed from such a sentence.
@pytest.mark.parametrize("sentence", [
    "The pod OOMs at startup:",
    "The container runs out of memory while loading the safetensors shards:",
    "It runs out of RAM while loading the weights:",
    "It OOMs and the OOM killer stops it:",
])
def test_a_host_memory_oom_stated_in_words_is_no_cuda_oom(sentence: str) -> None:
    report = diagnose_text(f"{sentence}\n{VLLM_COMMAND}\n", OPTIONS)
    assert not any("CUDA out of memory" in failure.failure.final.message for failure in report.failures)


def test_an_oom_a_later_line_says_was_got_past_is_no_failure() -> None:
    log = f"It OOMs with this command:\n```\n{VLLM_COMMAND}\n```\nNow it works after I lowered --max-model-len.\n"
    assert not diagnose_text(log, OPTIONS).failures


def test_the_category_of_a_stated_oom_says_its_words_were_inferred() -> None:
    report = diagnose_text(f"The server OOMs at startup with this command:\n{VLLM_COMMAND}\n", OPTIONS)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "gpu-oom"
    assert "inferred from the user's sentence" in _text(f"The server OOMs at startup with this command:\n{VLLM_COMMAND}\n")


def test_a_failure_the_log_shows_outranks_the_one_stated_in_words() -> None:
    traceback = real_traceback("raise ValueError('max_model_len is larger than the model allows')\n")
    log = f"The server OOMs at startup, here is the log:\n{traceback}"
    assert primary(log)[:2] == ("ValueError", "max_model_len is larger than the model allows")


# -- an error line retyped by hand -------------------------------------------------------------------------------------------
def test_argparses_error_retyped_without_its_spaces_is_the_failure() -> None:
    error = argparse_error_line("vllm", ["--model-path", "m", "--enable-reason"])
    assert error == "vllm: error: unrecognized arguments: --enable-reason"
    retyped = error.replace(": ", ":")  # `vllm:error:unrecognized arguments:--enable-reason`
    log = f"1.执行命令：vllm serve m --enable-reasoning\n2.报错：\u201c{retyped}\u201d\n"
    report = diagnose_text(log, OPTIONS)
    failure = report.failures[0].failure
    assert (failure.kind, failure.final.message) == ("usage", "unrecognized arguments: --enable-reason")
    assert failure.final.read_from_prose == "retyped"
    assert report.failures[0].diagnosis is not None and report.failures[0].diagnosis.category == "unknown-flag"
    assert "retyped by hand" in _text(log)


def test_the_program_of_a_retyped_argparse_line_names_the_engine() -> None:
    retyped = argparse_error_line("launch_server.py", ["--model-path", "m", "--enable-flashinfer-mla"]).replace(": ", ":")
    report = diagnose_text(f"运行后报错：\u201c{retyped}\u201d\n", OPTIONS)
    assert report.failures and report.launch.engine == "sglang"


def test_other_words_around_error_and_colons_are_no_usage_error() -> None:
    assert not diagnose_text("The log said error:none and arguments:ok, all good.\n", OPTIONS).failures


BF16 = ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0 . Your Tesla P40 GPU has "
        "compute capability 6.1")


def test_an_engines_message_retyped_with_its_spacing_changed_is_read_against_the_index() -> None:
    log = f'Running vllm serve on a P40 fails with the error "{BF16}"\n'
    block = diagnose_text(log, OPTIONS).failures[0].failure.final
    assert block.type == "ValueError" and block.message.startswith("Bfloat16 is only supported on GPUs")
    assert block.read_from_prose == "retyped"
