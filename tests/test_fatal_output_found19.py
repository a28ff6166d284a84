"""Failures the last blind split left unfound or mistyped, each read as its class (issue 28, stop 55, branch found19).
Lines rebuilt in our own words from the printing code's format:

- an exception line a paste indented a little under the last frame's source line (sgl-project/sglang#5136): the
  exception, not a source line, so its type and message are read rather than inferred from the statement;
- an ERROR record that is only an exception's repr above a traceback (vLLM's multiprocessing engine logs
  `logger.exception(repr(e))`, vllm/engine/multiprocessing/engine.py MQLLMEngine.start and client.py _set_errored,
  0.6.x; vllm-project/vllm#9532): the type and message come from the repr, its escapes undone."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.tracebacks.grammar import record_repr
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

RAISING = '''
def get_quant_config(name):
    raise ValueError(
        f"{name} quantization needs kernels from a package that is not installed; install it first"
    )
get_quant_config("awq")
'''


def _reindented(traceback_text: str, extra: int, *, first_stripped: bool, header: bool) -> str:
    """The traceback as pastes re-indent it: every line moved right by `extra`, the header left out or kept, the
    first line's indentation lost where the paste's selection started at its text."""
    lines = traceback_text.rstrip("\n").splitlines()
    if not header:
        lines = lines[1:]
    lines = [" " * extra + line for line in lines]
    if first_stripped:
        lines[0] = lines[0].lstrip()
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("extra", "first_stripped", "header"), [
    (1, True, False),  # the sglang#5136 shape: `File …` at the margin, its source under it, ` ValueError: …`
    (1, False, False),
    (2, True, False),
    (1, True, True),
])
def test_an_exception_line_indented_a_little_under_the_last_frame_is_the_exception(
        extra: int, first_stripped: bool, header: bool) -> None:
    text = real_traceback(RAISING)
    exc_type, message, _ = primary(text)  # what the interpreter's own output reads as
    assert (exc_type, message) == ("ValueError", "awq quantization needs kernels from a package that is not "
                                                 "installed; install it first")
    block = diagnose_text(_reindented(text, extra, first_stripped=first_stripped, header=header),
                          OPTIONS).failures[0].failure.final
    assert (block.type, " ".join(block.message.split())) == (exc_type, message)
    assert not block.typed_from_statement


def test_a_source_line_at_its_frame_s_depth_stays_a_source_line() -> None:
    """A dict literal's line shaped like `KeyError: …` inside a frame's source is deeper than the frames: still source,
    so the traceback stays cut and its type comes from the statement."""
    text = ('File "/srv/app/config.py", line 9, in check\n'
            "    raise KeyError(\n"
            "      ValueError: 'not the exception, the statement goes on'\n")
    block = diagnose_text(text, OPTIONS).failures[0].failure.final
    assert block.type == "KeyError"
    assert block.typed_from_statement


def _repr_record(exc: BaseException) -> str:
    return f"ERROR 03-02 09:14:55 engine.py:160] {exc!r}"


def _logged_traceback(exc: BaseException) -> str:
    stamp = "ERROR 03-02 09:14:55 engine.py:160]"
    return "\n".join([
        _repr_record(exc),
        f"{stamp} Traceback (most recent call last):",
        f'{stamp}   File "/opt/venv/lib/python3.11/site-packages/vllm/engine/multiprocessing/engine.py", line 158, in start',
        f"{stamp}     self.run_engine_loop()",
        f'{stamp}   File "/opt/venv/lib/python3.11/site-packages/vllm/engine/multiprocessing/engine.py", line 221, in run_engine_loop',
        f"{stamp}     request_outputs = self.engine_step()",
    ]) + "\n"


class OutOfResources(Exception):
    """A class whose name ends in neither Error nor Exception (triton's `OutOfResources`)."""


@pytest.mark.parametrize(("exc", "exc_type", "message"), [
    (RuntimeError("CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously "
                  "reported at some other API call.\n"),
     "RuntimeError", "CUDA error: an illegal memory access was encountered CUDA kernel errors might be asynchronously "
                     "reported at some other API call."),
    (ValueError("the model's max seq len (8192) is larger than what fits: 'KV cache'"), "ValueError",
     "the model's max seq len (8192) is larger than what fits: 'KV cache'"),
    (OutOfResources("out of resource: shared memory, Required: 131072, Hardware limit: 101376"), "OutOfResources",
     "out of resource: shared memory, Required: 131072, Hardware limit: 101376"),
])
def test_an_error_record_that_is_an_exception_repr_names_the_cut_traceback(
        exc: BaseException, exc_type: str, message: str) -> None:
    block = diagnose_text(_logged_traceback(exc), OPTIONS).failures[0].failure.final
    assert (block.type, " ".join(block.message.split())) == (exc_type, message)


@pytest.mark.parametrize("text", [
    "Loaded ModelConfig('a', 'b')",  # words before it: no repr record
    "ModelConfig('a', 'b')",  # two arguments
    "retrying request_id('abc') in 2s",
])
def test_a_record_that_is_not_only_a_repr_is_not_read_as_one(text: str) -> None:
    assert record_repr(text) is None
