"""Failures a person retyped into prose, and the exception taken from the right line (issue 28, stop 50; the classes
the retired blind split 13 missed, generalized from their raising code):

- an exception line quoted in a sentence with typographic quotes, either way round (`：”ValueError: …“`);
- argparse's error line right after a word of Chinese prose, no space before the program's name (as
  zai-org/GLM-4.5#58 after a full-width colon);
- only the tail of CPython's `cannot import name '…' from '…'` (Python/ceval.c import_from) retyped in a sentence
  that says it failed;
- a compiled package's banner of several lines, its type line lost (sgl_kernel/load_utils.py `[sgl_kernel]
  CRITICAL: Could not load any common_ops library!`, sgl-project/sglang#29646 shows it with its `ImportError:`);
- a cut traceback under the error an engine logged before it and its workaround lines (SGLang's
  srt/compilation/piecewise_context_manager.py logs `Piecewise CUDA Graph failed with error: {}` and re-raises);
- a cut traceback whose error the sentence above it states (`报错` and a CPython message, vllm-project/vllm#18124's
  wording of "reported the error");
- transformers' unknown-model-type error pasted without its type line: the first paragraph names the cause, not the
  advice paragraph below it (transformers/models/auto/configuration_auto.py).

And the look-alikes that stay no failure."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from tests.helpers import argparse_error_line, real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary


def _exception_line(code: str) -> str:
    """The exception line real CPython prints for `code` (its traceback's last line)."""
    return real_traceback(code).rstrip().splitlines()[-1]


# -- typographic quotes ---------------------------------------------------------------------------------------------------
VALUE_LINE = _exception_line("raise ValueError('the tokenizer defines no chat template, so one must be given')\n")


@pytest.mark.parametrize("opening, closing", [("\u201d", "\u201c"), ("\u201c", "\u201d"), ("\u2018", "\u2019")])
def test_an_exception_line_in_typographic_quotes_is_the_failure(opening: str, closing: str) -> None:
    log = f"运行 python main.py 之后出现：{opening}{VALUE_LINE}{closing} 请问怎么解决？\n"
    assert primary(log)[:2] == ("ValueError", "the tokenizer defines no chat template, so one must be given")


def test_typographic_quotes_around_other_words_name_nothing() -> None:
    report = diagnose_text("The docs call it \u201cValueError handling\u201d and \u2018retry logic\u2019.\n", OPTIONS)
    assert not report.failures


# -- argparse's error after Chinese prose -------------------------------------------------------------------------------------
def test_argparses_error_right_after_chinese_words_is_the_failure() -> None:
    error = argparse_error_line("launch_server.py", ["--model-path", "m", "--kt-old-flag", "x"])
    assert error == "launch_server.py: error: unrecognized arguments: --kt-old-flag x"
    report = diagnose_text(f"python -m sglang.launch_server --model-path m --kt-old-flag x\n按照文档运行，会显示{error}\n这是什么原因？\n",
                           OPTIONS)
    failure = report.failures[0].failure
    assert (failure.kind, failure.final.message) == ("usage", "unrecognized arguments: --kt-old-flag x")


def test_argparses_error_ends_where_the_chinese_sentence_goes_on() -> None:
    error = argparse_error_line("vllm", ["--bad"])
    report = diagnose_text(f"启动时显示{error}，请问怎么办\n", OPTIONS)
    assert report.failures[0].failure.final.message == "unrecognized arguments: --bad"


# -- the tail of CPython's import error -------------------------------------------------------------------------------------
IMPORT_LINE = _exception_line("from logging.handlers import NO_SUCH_HANDLER_NAME\n")
IMPORT_TAIL = IMPORT_LINE.split("cannot import name '", 1)[1].split(" (", 1)[0].rstrip("'")


def test_only_the_tail_of_an_import_error_under_a_sentence_that_says_it_failed_is_that_error() -> None:
    assert IMPORT_TAIL == "NO_SUCH_HANDLER_NAME' from 'logging.handlers"
    log = f"When I serve the model, the server throws an error:\n\n`{IMPORT_TAIL}`\n"
    assert primary(log)[:2] == ("ImportError", "cannot import name 'NO_SUCH_HANDLER_NAME' from 'logging.handlers'")


def test_the_tail_of_an_import_error_quoted_in_a_failing_sentence_is_that_error() -> None:
    log = f"It crashes at start with `{IMPORT_TAIL}` on the newest release.\n"
    assert primary(log)[:2] == ("ImportError", "cannot import name 'NO_SUCH_HANDLER_NAME' from 'logging.handlers'")


@pytest.mark.parametrize("log", [
    f"Here is the line I changed:\n\n`{IMPORT_TAIL}`\n",  # nothing says it failed
    "The handler `NO_SUCH_HANDLER_NAME' from 'handlers` is ours.\n",  # no dotted module
])
def test_a_name_and_a_module_in_passing_name_nothing(log: str) -> None:
    assert not diagnose_text(log, OPTIONS).failures


# -- a package's banner of several lines, its type line lost -----------------------------------------------------------------
# sgl_kernel's message (sgl_kernel/load_utils.py _load_architecture_specific_ops), its holes filled in
SGL_KERNEL_BANNER = """[sgl_kernel] CRITICAL: Could not load any common_ops library!

Attempted locations:
1. Architecture-specific pattern: /venv/lib/python3.12/site-packages/sgl_kernel/sm90/common_ops.* - found files: ['/venv/lib/python3.12/site-packages/sgl_kernel/sm90/common_ops.abi3.so']
2. Fallback pattern: /venv/lib/python3.12/site-packages/sgl_kernel/common_ops.* - found files: []
3. Standard Python import: common_ops - failed

GPU Info:
- Compute capability: 90
- Expected variant: SM90 (Hopper/H100 with fast math optimization)

Please ensure sgl_kernel is properly installed with:
pip install --upgrade sgl_kernel
"""


def test_a_kernel_packages_load_banner_without_its_type_line_is_the_import_error() -> None:
    assert primary(f"```\n{SGL_KERNEL_BANNER}```\n")[:2] == (
        "ImportError", "[sgl_kernel] CRITICAL: Could not load any common_ops library!")


def test_a_line_that_says_something_could_not_load_is_no_banner() -> None:
    assert not diagnose_text("Could not load the optional plugin list from ~/.config, using the defaults\n", OPTIONS).failures


# -- a cut traceback under the error the engine logged, and its workaround ---------------------------------------------------
CAPTURE_ERROR = "Tensor match failed for Tensor<8> - Root cause: Size mismatch for shape#0: expected 6 but got 8"
CAPTURE_CODE = """
def run_scheduler_process():
    event_loop_overlap()

def event_loop_overlap():
    raise RuntimeError("capture failed")

run_scheduler_process()
"""


def _cut_scheduler_traceback() -> str:
    printed = real_traceback(CAPTURE_CODE, "sglang/srt/managers/scheduler.py").splitlines()
    frames = [line for line in printed if not line.startswith(("Traceback", "RuntimeError"))]
    header = "[2026-05-22 04:54:32 TP0] Scheduler hit an exception: Traceback (most recent call last):"
    return "\n".join([header, *frames]) + "\n"


def test_the_error_the_engine_logged_above_its_workaround_names_the_cut_traceback() -> None:
    log = (f"[2026-05-22 04:54:32 TP0] Piecewise CUDA Graph failed with error: {CAPTURE_ERROR}\n"
           "Piecewise CUDA Graph is enabled by default as an experimental feature.\n"
           "To work around this error, add --disable-piecewise-cuda-graph to your launch command.\n"
           "Please report this issue at https://github.com/sgl-project/sglang/issues/new/choose\n"
           + _cut_scheduler_traceback())
    failure = diagnose_text(log, OPTIONS).failures[0].failure
    assert failure.kind == "traceback" and failure.final.frames
    assert (failure.final.type, failure.final.message) == ("ERROR", f"Piecewise CUDA Graph failed with error: {CAPTURE_ERROR}")


def test_an_error_logged_in_fixed_words_does_not_name_the_cut_traceback() -> None:
    log = ("[2026-05-22 04:54:31 TP0] Engine core initialization failed. See root cause above. Failed core proc(s): {}\n"
           "[2026-05-22 04:54:31 TP0] EngineCore failed to start.\n" + _cut_scheduler_traceback())
    final = diagnose_text(log, OPTIONS).failures[0].failure.final
    # the raising statement in the last frame names it (review 1 of stop 50: pinned, not only "not that line")
    assert (final.type, final.message) == ("RuntimeError", "capture failed")


# -- a cut traceback whose error the sentence above states -------------------------------------------------------------------
ATTRIBUTE_CODE = """
class AsyncEngine:
    pass

def shutdown(engine):
    return engine.engine

shutdown(AsyncEngine())
"""


def test_the_error_a_sentence_states_above_a_cut_traceback_is_its_exception() -> None:
    printed = real_traceback(ATTRIBUTE_CODE).splitlines()
    message = printed[-1].split(": ", 1)[1]
    assert message == "'AsyncEngine' object has no attribute 'engine'"
    cut = "\n".join(printed[:-2]) + "\n"
    log = f"双卡推理时，报错`{message}`。\n\n完整报错信息：\n```\n{cut}```\n"
    report = diagnose_text(log, OPTIONS)
    assert [(group.failure.final.type, group.failure.final.message) for group in report.failures][:1] == [
        ("AttributeError", message)]


def test_a_whole_traceback_under_such_a_sentence_stays_the_failure() -> None:
    printed = real_traceback(ATTRIBUTE_CODE)
    log = f"报错`'Other' object has no attribute 'x'`。\n```\n{printed}```\n"
    finals = [(group.failure.final.type, group.failure.final.message) for group in diagnose_text(log, OPTIONS).failures]
    assert ("AttributeError", "'AsyncEngine' object has no attribute 'engine'") in finals


# -- transformers' error of two paragraphs without its type line --------------------------------------------------------------
UNKNOWN_TYPE = ("The checkpoint you are trying to load has model type `qwen9_moe` but Transformers does not recognize "
                "this architecture. This could be because of an issue with the checkpoint, or because your version of "
                "Transformers is out of date.")
ADVICE = ("You can update Transformers with the command `pip install --upgrade transformers`. If this does not work, "
          "and the checkpoint is very new, then there may not be a release version that supports this model yet.")


def test_the_first_paragraph_names_the_cause_not_the_advice_below_it() -> None:
    assert primary(f"return error:\n\n{UNKNOWN_TYPE}\n\n{ADVICE}\n")[:2] == ("ValueError", UNKNOWN_TYPE)


def test_the_advice_paragraph_alone_is_still_the_failure() -> None:
    assert primary(f"the server stops with:\n\n{ADVICE}\n")[0] == "ValueError"
