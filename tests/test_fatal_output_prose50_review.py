"""The faults review 1 of stop 50 found in the reading of failures retyped into prose (tests/test_fatal_output_prose50.py):

- only a person's sentence above a traceback whose exception line was cut names it: a program's own `Exception: …`
  print stays a fallback (the sentence class: vllm-project/vllm#18124's `报错`; in the retired blind split 13's D-02
  an issue form puts its other sections between the sentence and the traceback, so no distance is required);
- the nearest line above a cut traceback that quotes `Type: message` names it, not an error the engine logged farther
  up (SGLang's srt/compilation/piecewise_context_manager.py logs `Piecewise CUDA Graph failed with error: {}` and its
  workaround lines before the scheduler's traceback; a record quoting the exception, as vLLM's and SGLang's
  `… hit an exception: RuntimeError: …`, is the exception itself);
- a message in typographic quotes is not cut at the quotes the editor curled inside it;
- pydantic's `Value error, …` line alone, which no row classifies, keeps a ValueError's general checks (the engine's
  check raised a ValueError: pydantic_display.checked_as).
"""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback
from tests.test_fatal_output_prose50 import ATTRIBUTE_CODE, CAPTURE_ERROR
from tests.test_fatal_output_shapes import OPTIONS, primary

# -- which failure above a cut traceback names it --------------------------------------------------------------------------
LOADER_CODE = """
def load_model():
    build()

def build():
    return {}["lm_head.weight"]

load_model()
"""


def _cut(code: str, filename: str = "app.py") -> str:
    """A real traceback of `code` whose exception line the paste lost."""
    return "\n".join(real_traceback(code, filename).rstrip().splitlines()[:-1]) + "\n"


LOADING = "".join(f"INFO 05-22 10:00:0{shard} loader.py:10] Loading shard {shard}\n" for shard in range(5))
CUT_LOADER = _cut(LOADER_CODE, "vllm/model_executor/model_loader/loader.py")


@pytest.mark.parametrize("between", [LOADING, ""], ids=["far above", "right above"])
def test_a_programs_own_exception_print_above_a_cut_traceback_stays_a_fallback(between: str) -> None:
    log = ("INFO 05-22 10:00:00 api_server.py:100] vLLM API server version 0.6.3\n"
           "Exception: retrying download of tokenizer.json (attempt 1/3)\n" + between + CUT_LOADER)
    failure = diagnose_text(log, OPTIONS).failures[0].failure
    assert failure.kind == "traceback" and failure.final.frames


def test_a_sentence_above_an_issue_forms_other_sections_still_names_the_cut_traceback() -> None:
    # an issue form's description states the error, its hardware and context sections come between, the traceback last
    # (the retired blind split 13's D-02 shape; the sections' words are ours)
    printed = real_traceback(ATTRIBUTE_CODE).splitlines()
    message = printed[-1].split(": ", 1)[1]
    log = (f"**Describe the bug**\n双卡推理时，报错`{message}`。\n\n**Your hardware and system info**\n"
           + "".join(f"{n}. 第{n}项：略\n" for n in range(1, 5)) + "\n**Additional context**\n完整报错信息：\n"
           + "```\n" + "\n".join(printed[:-2]) + "\n```\n")
    assert primary(log)[:2] == ("AttributeError", message)


# -- the nearest line names the cut traceback --------------------------------------------------------------------------------
ZERO_CODE = """
def run_scheduler_process():
    event_loop_overlap()

def event_loop_overlap():
    return compute()

def compute():
    return 1 / 0

run_scheduler_process()
"""
ILLEGAL_ACCESS = "CUDA error: an illegal memory access was encountered"


def test_the_nearest_line_that_quotes_the_exception_names_the_cut_traceback() -> None:
    log = (f"[2026-05-22 04:54:32 TP0] Piecewise CUDA Graph failed with error: {CAPTURE_ERROR}\n"
           "Piecewise CUDA Graph is enabled by default as an experimental feature.\n"
           f"[2026-05-22 04:54:32 TP0] ERROR worker: Capture failed: RuntimeError: {ILLEGAL_ACCESS}\n"
           + _cut(ZERO_CODE, "sglang/srt/managers/scheduler.py"))
    failure = diagnose_text(log, OPTIONS).failures[0].failure
    assert failure.kind == "traceback" and failure.final.frames
    assert (failure.final.type, failure.final.message) == ("RuntimeError", ILLEGAL_ACCESS)


def test_the_logged_error_still_names_it_across_its_workaround_lines() -> None:
    log = (f"[2026-05-22 04:54:32 TP0] Piecewise CUDA Graph failed with error: {CAPTURE_ERROR}\n"
           "Piecewise CUDA Graph is enabled by default as an experimental feature.\n"
           "To work around this error, add --disable-piecewise-cuda-graph to your launch command.\n"
           + _cut(ZERO_CODE, "sglang/srt/managers/scheduler.py"))
    final = diagnose_text(log, OPTIONS).failures[0].failure.final
    assert (final.type, final.message) == ("ERROR", f"Piecewise CUDA Graph failed with error: {CAPTURE_ERROR}")


# -- typographic quotes inside typographic quotes ----------------------------------------------------------------------------
def _exception_line(code: str) -> str:
    return real_traceback(code).rstrip().splitlines()[-1]


MODULE_LINE = _exception_line("import no_such_module_here\n")
KEY_LINE = _exception_line("{}['model_type']\n")


@pytest.mark.parametrize(("log", "expected"), [
    (f"运行后报错：\u2018{MODULE_LINE.replace(chr(39), chr(0x2018), 1).replace(chr(39), chr(0x2019), 1)}\u2019\n",
     MODULE_LINE),
    (f"it fails with \u201c{KEY_LINE.replace(chr(39), chr(0x201c), 1).replace(chr(39), chr(0x201d), 1)}\u201d on start\n",
     KEY_LINE.replace("'", '"')),
    (f"it fails with \u201c{KEY_LINE.replace(chr(39), chr(0x201c), 1).replace(chr(39), chr(0x201d), 1)}\u201d。\n",
     KEY_LINE.replace("'", '"')),
])
def test_quotes_curled_inside_a_quoted_exception_line_stay_in_its_message(log: str, expected: str) -> None:
    assert MODULE_LINE == "ModuleNotFoundError: No module named 'no_such_module_here'"
    assert KEY_LINE == "KeyError: 'model_type'"
    found_type, message, _ = primary(log)
    assert f"{found_type}: {message}" == expected


# -- pydantic's value line alone keeps a ValueError's general checks ----------------------------------------------------------
def test_an_unclassified_pydantic_value_line_gets_a_value_errors_general_checks() -> None:
    # pydantic-core's `value_error` template and display around a made-up check's words (no row names them)
    log = ("  Value error, the frobnication width (3) must divide the hidden size (1000). "
           "[type=value_error, input_value=ArgsKwargs(()), input_type=ArgsKwargs]\n")
    group = diagnose_text(log, OPTIONS).failures[0]
    assert group.diagnosis is not None and group.diagnosis.category == "unclassified"
    assert group.diagnosis.fix.summary == "General checks for a ValueError:"
