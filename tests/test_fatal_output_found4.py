"""A bare `AssertionError` with only the failing assert's source line above it (issue 28, stop 38's blind split;
tracebacks/scanner.ASSERT_SOURCE_ABOVE): a paste that cut the frames keeps CPython's last two lines, the assert
statement and the exception line.  The statement is kept as the innermost frame's source, so the divisibility rule
(reasoning/parallelism.py) reads the check, as it does when the `File` line is pasted too.  The engine's site: the
attention layers' `assert self.total_num_kv_heads % tp_size == 0` (sglang/srt/models/llama.py, qwen2.py; vLLM's
older attention layers the same)."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

# A mirror of the engines' attention layer check, raised by real CPython.
HEADS_CHECK = """
class Attention:
    def __init__(self, total_num_kv_heads, tp_size):
        self.total_num_kv_heads = total_num_kv_heads
        if self.total_num_kv_heads >= tp_size:
            assert self.total_num_kv_heads % tp_size == 0


Attention(total_num_kv_heads=8, tp_size=3)
"""


def _last_lines(text: str, count: int) -> str:
    return "\n".join(text.strip().splitlines()[-count:]) + "\n"


def test_the_assert_source_line_alone_above_assertion_error_names_the_divisibility_check() -> None:
    full = real_traceback(HEADS_CHECK)
    assert full.strip().splitlines()[-1] == "AssertionError"
    pasted = _last_lines(full, 3 if "^^^" in full else 2)  # the assert line (its carets) + `AssertionError`
    assert primary(pasted) == ("AssertionError", "", "parallel-config")
    frames = diagnose_text(pasted, OPTIONS).failures[0].failure.exceptions[-1].frames
    assert [frame.source for frame in frames] == ["assert self.total_num_kv_heads % tp_size == 0"]


def test_the_same_lines_with_their_file_line_are_read_as_before() -> None:
    full = real_traceback(HEADS_CHECK)
    pasted = _last_lines(full, 4 if "^^^" in full else 3)
    assert pasted.lstrip().startswith("File ")
    assert primary(pasted) == ("AssertionError", "", "parallel-config")


def test_a_source_line_that_is_no_assert_adds_no_frame() -> None:
    pasted = "    x = compute()\nAssertionError\n"
    assert diagnose_text(pasted, OPTIONS).failures[0].failure.exceptions[-1].frames == ()


def test_an_assertion_error_with_a_message_keeps_its_own_message() -> None:
    pasted = "    assert x > 0, 'x must be positive'\nAssertionError: x must be positive\n"
    block = diagnose_text(pasted, OPTIONS).failures[0].failure.exceptions[-1]
    assert (block.message, block.frames) == ("x must be positive", ())


# -- a client's HTTP error status before the engine's message, no exception type (logged_errors.status_candidates) --
# Clients print the status and the server's text their own way (ogx-ai/ogx#4534, langchain-ai/langchain#24058: the
# context-length refusal reaching the client after a 400).  vLLM's wording (serving_engine.py's length check, in the
# raise site index as a ValueError).
CONTEXT_REFUSAL = ("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in "
                   "the messages, 1000 in the completion). Please reduce the length of the messages or completion.")


@pytest.mark.parametrize("prefix", [
    "HTTP 400: ",
    "status_code=400, message=",
    "400 Bad Request: ",
    "[ERROR] Request failed (HTTP 400): ",
    "Request failed with code 400 Bad Request - ",
])
def test_an_engine_message_after_a_client_printed_http_status_is_the_failure(prefix: str) -> None:
    assert primary(prefix + CONTEXT_REFUSAL + "\n") == ("ValueError", CONTEXT_REFUSAL, "context-length")


@pytest.mark.parametrize("log", [
    'INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request\n',
    "HTTP 400: the request could not be parsed, see the client's documentation for the accepted fields\n",
    "Done, status 400 samples: 12 of 40 failed\n",
])
def test_a_status_without_an_engine_message_is_no_failure(log: str) -> None:
    assert diagnose_text(log, OPTIONS).failures == ()


def test_the_status_prefilter_skips_metrics_lines_and_keeps_every_status_shape() -> None:
    # the status reader's regex tries its keywords at every position; SGLang's `Decode batch` lines (a long log's most
    # common line) hold `code` inside `Decode` and must not reach it, every client status shape must
    from logsleuth.tracebacks.logged_errors import may_hold_status

    assert not may_hold_status("[2025-06-01 10:00:00 TP0] Decode batch. #running-req: 45, #token: 45120, "
                               "token usage: 0.42, gen throughput (token/s): 450.23, #queue-req: 0")
    for shape in ("Error code: 400 - {'object': 'error'}", "code=400 message=x", "HTTP 400: x", "status_code=400",
                  "400 Bad Request: x", "Bad Request: x", "Request failed (HTTP 500): x", "code: 503"):
        assert may_hold_status(shape), shape
