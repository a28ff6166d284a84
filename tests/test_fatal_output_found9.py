"""Shapes stop 41's blind split showed unread (issue 28, branch h-found9), on real wordings and real CPython
tracebacks:

- a failure stated only in a sentence that quotes the engine's assert statement (`it crashes at \\`assert …\\``,
  vllm-project/vllm#10648; a title `\\`assert …\\` fails when …`, vllm-project/vllm#4422; `assert error: assert …`,
  vllm-project/vllm#7156): an AssertionError raised there, the statement kept as its check;
- a sentence that quotes a type alone is a failure only when it says it happened: `is this an \\`AssertionError\\`?`
  states none."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

HEALTHY = (
    "INFO 05-29 07:34:20 [api_server.py:1043] vLLM API server version 0.8.5\n"
    "INFO 05-29 07:34:21 [gpu_model_runner.py:1329] Model loading took 14.99 GiB and 4.2 seconds\n"
    "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)\n"
)


@pytest.mark.parametrize(
    ("sentence", "statement"),
    [
        ("With --tp 4 the server crashes at `assert self.total_num_kv_heads % tp_size == 0` in the attention layer.",
         "assert self.total_num_kv_heads % tp_size == 0"),
        ("Enabling DP attention, the scheduler hits **assert dp_size > 1** and the server exits.", "assert dp_size > 1"),
        ("[Bug]: `assert num_new_tokens == 1` fails when `SamplingParams.n` is not `1`", "assert num_new_tokens == 1"),
        ("[Usage]: assert error: assert self._num_computed_tokens <= self.get_len()",
         "assert self._num_computed_tokens <= self.get_len()"),
        ("The engine dies with an assertion error `assert self.page_size == 1` when I set --page-size 16.",
         "assert self.page_size == 1"),
    ],
)
def test_a_sentence_quoting_the_assert_that_failed_is_an_assertion_error_there(sentence: str, statement: str) -> None:
    report = diagnose_text(HEALTHY + sentence + "\n", OPTIONS)
    assert report.failures, sentence
    block = report.failures[0].failure.final
    assert (block.type, block.message) == ("AssertionError", "")
    assert block.frames[-1].source == statement
    assert block.typed_from_statement  # said to be read from the statement, not shown as if printed


def test_a_quoted_type_after_the_quoted_statement_keeps_the_statement_as_its_check() -> None:
    sentence = "With my patch it now crashes with an `assert ts != -1` `AssertionError` instead of a CUDA error.\n"
    block = diagnose_text(sentence, OPTIONS).failures[0].failure.final
    assert (block.type, block.frames[-1].source) == ("AssertionError", "assert ts != -1")


@pytest.mark.parametrize(
    "sentence",
    [
        "Is this an `AssertionError`? The server seems slow after loading the weights.",
        "Does the server raise **AssertionError** when the tp size is wrong?",
        "I read the `assert dp_size > 1` check in scheduler.py and it looks right to me.",
        "Should we replace `assert x` with a proper error message?",
        "The docs say to use `assert` sparingly.",
    ],
)
def test_a_sentence_that_only_mentions_a_type_or_an_assert_is_no_failure(sentence: str) -> None:
    report = diagnose_text(HEALTHY + sentence + "\n", OPTIONS)
    assert not report.failures, sentence


def test_a_healthy_log_stays_no_failure() -> None:
    assert not diagnose_text(HEALTHY, OPTIONS).failures


@pytest.mark.parametrize("sentence", ["The server crashes with `AssertionError` after warm-up.",
                                      "Why do I get `ValueError` here? It worked yesterday."])
def test_a_quoted_type_in_a_sentence_that_says_it_happened_is_still_the_failure(sentence: str) -> None:
    assert diagnose_text(sentence + "\n", OPTIONS).failures


def test_the_traceback_a_paste_shows_outranks_the_statement_its_prose_quotes() -> None:
    traceback = real_traceback("def check(size):\n    raise ValueError(f'bad size {size}')\n\ncheck(3)\n")
    log = "It crashes at `assert self.page_size == 1` I think, full log:\n" + traceback
    assert primary(log)[:2] == ("ValueError", "bad size 3")
