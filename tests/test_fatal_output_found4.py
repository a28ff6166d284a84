"""A bare `AssertionError` with only the failing assert's source line above it (issue 28, stop 38's blind split;
tracebacks/scanner.ASSERT_SOURCE_ABOVE): a paste that cut the frames keeps CPython's last two lines, the assert
statement and the exception line.  The statement is kept as the innermost frame's source, so the divisibility rule
(reasoning/parallelism.py) reads the check, as it does when the `File` line is pasted too.  The engine's site: the
attention layers' `assert self.total_num_kv_heads % tp_size == 0` (sglang/srt/models/llama.py, qwen2.py; vLLM's
older attention layers the same)."""

from __future__ import annotations

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
