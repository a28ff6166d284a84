"""A traceback the paste cut before its exception line, under the error line the server or a wrapper printed a little
above it (issue 28, stop 39's blind split: a prose `Error in request: …` line, a blank line or a line of its own in
between, and the report headlined "exception line missing").  The tracebacks are real CPython's, cut as pastes cut
them; the error lines are our own text in the shape of vLLM's and SGLang's request-error lines."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS

HANDLER = '''
def apply_chat_template(conversation, **kwargs):
    raise TypeError("apply_chat_template() got an unexpected keyword argument 'tools'")


def handle(request):
    return apply_chat_template(request, tools=[])


handle({})
'''


def _cut(traceback: str) -> str:
    """The traceback cut inside its frames, before the raising one (a raising statement would name the type itself:
    tracebacks/raising_statement.py)."""
    lines = traceback.rstrip("\n").splitlines()
    assert lines[-1].startswith("TypeError: ") and lines[-2].strip().startswith("raise TypeError(")
    return "\n".join(lines[:-3]) + "\n"


@pytest.mark.parametrize("between", ["", "\n", "INFO:     127.0.0.1:5000 - \"POST /v1/chat/completions HTTP/1.1\" 500\n"])
def test_the_error_line_a_little_above_names_the_cut_traceback(between: str) -> None:
    said = "Error in request: the chat template could not be applied to the conversation"
    log = f"{said}\n{between}{_cut(real_traceback(HANDLER))}"
    final = diagnose_text(log, OPTIONS).failures[0].failure.final
    assert (final.type, final.message) == ("ERROR", said)


def test_a_line_that_says_no_error_names_nothing() -> None:
    log = f"Processing the chat request for the conversation now\n\n{_cut(real_traceback(HANDLER))}"
    final = diagnose_text(log, OPTIONS).failures[0].failure.final
    assert final.type != "ERROR"


def test_the_raising_statement_outranks_a_line_that_only_says_error() -> None:
    lines = real_traceback(HANDLER).rstrip("\n").splitlines()
    log = "Error in request: the chat template could not be applied to the conversation\n" + "\n".join(lines[:-1]) + "\n"
    final = diagnose_text(log, OPTIONS).failures[0].failure.final
    assert (final.type, final.message) == ("TypeError", "")


def test_an_error_line_too_far_above_names_nothing() -> None:
    log = ("Error in request: the chat template could not be applied to the conversation\n"
           "step one done\nstep two done\nstep three done\nstep four done\n" + _cut(real_traceback(HANDLER)))
    final = diagnose_text(log, OPTIONS).failures[0].failure.final
    assert final.type != "ERROR"
