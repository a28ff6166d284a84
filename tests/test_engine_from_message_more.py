"""More of the engine from the failure's own message (issue 28: 9 failure logs of the blind split named no engine;
ingest/engine_from_message.py): a message built outside a `raise` (returned by the function its caller raises, an
exception class's own message, held in a name), a message the paste cut short, and an error line the engine logs.
Each rule decides only when one engine's indexed code prints the message, and has a case where it must not.

Wordings are the engines' own, from the code sites named: SGLang's `_scheduler_died_error`
(sglang/srt/entrypoints/engine.py, sgl-project/sglang#20287), its token-count check whose message is held in a name
(sglang/srt/managers/tokenizer_manager.py), its `logger.error("Received sigquit from a child process. …")`;
vLLM's EngineDeadError (vllm/v1/engine/exceptions.py, vllm-project/vllm#27194), its `logger.exception("EngineCore
failed to start.")` (vllm/v1/engine/core.py).  Tracebacks are real CPython's, raised from a user's script (no frame
in either engine's package)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.facts.engine_messages import engines_logging, engines_raising
from logsleuth.facts.message_templates import MIN_FIXED, opening_matched
from logsleuth.ingest.engine_from_message import engine_raising

OPTIONS = DiagnoseOptions(include_user_patterns=False)
DIED = ("Rank 3 scheduler died during initialization (exit code: -9). If exit code is -9 (SIGKILL), a common cause is "
        "the OS OOM killer. Run `dmesg -T | grep -i oom` to check.")
DEAD = "EngineCore encountered an issue. See stack trace (above) for the root cause."
TOO_LONG = ("Requested token count exceeds the model's maximum context length of 32768 tokens. You requested a total "
            "of 40000 tokens: 8000 tokens from the input messages and 32000 tokens for the completion. Please reduce "
            "the number of tokens in the input messages or the completion to fit within the limit.")


def _traceback(tmp_path: Path, kind: str, message: str) -> str:
    """What real CPython prints when a user's script raises `kind(message)` (a class of that name when it is
    none of Python's own)."""
    script = tmp_path / "app.py"
    define = "" if kind in dir(__builtins__) else f"class {kind}(Exception):\n    pass\n\n"
    script.write_text(f"{define}def start():\n    raise {kind}({message!r})\n\nstart()\n", encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1 and "Traceback (most recent call last):" in run.stderr
    return run.stderr


def engine_of(log: str) -> str | None:
    return diagnose_text(log, OPTIONS).launch.engine


@pytest.mark.parametrize(
    ("kind", "message", "engine"),
    [
        ("RuntimeError", DIED, "sglang"),  # returned by _scheduler_died_error, raised by its caller
        ("EngineDeadError", DEAD, "vllm"),  # the class's own message, given to its base in __init__
        ("ValueError", TOO_LONG, "sglang"),  # `error_msg = (f"…")` then `raise ValueError(error_msg)`
    ],
)
def test_a_message_built_outside_a_raise_names_its_engine(tmp_path: Path, kind: str, message: str, engine: str) -> None:
    assert engine_of(_traceback(tmp_path, kind, message)) == engine
    assert engine_of(f"{kind}: {message}\n") == engine  # the exception line alone


@pytest.mark.parametrize(
    ("line", "engine"),
    [
        # cut mid-sentence, cut mid-word, the first sentence only, an ellipsis where the paste stopped
        ("RuntimeError: Rank 0 scheduler died during initialization (exit code: -9). If exit code is -9 (SIGKILL), a common\n", "sglang"),
        ("RuntimeError: Rank 0 scheduler died during initializ\n", "sglang"),
        ("RuntimeError: Rank 1 scheduler died during initialization (exit code: 1).\n", "sglang"),
        ("EngineDeadError: EngineCore encountered an issue. See stack trace (ab...\n", "vllm"),
        ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static\n", "sglang"),
    ],
)
def test_a_message_the_paste_cut_short_names_the_engine_whose_template_it_opens(line: str, engine: str) -> None:
    assert engine_of(line) == engine


def test_a_cut_too_short_to_tell_or_opening_both_engines_templates_decides_nothing() -> None:
    # "Rank 0 scheduler died": 18 characters of the template's fixed text, under MIN_FIXED
    assert opening_matched("Rank {} scheduler died during initialization (exit code: {}).", "Rank 0 scheduler died") < MIN_FIXED
    assert engine_of("RuntimeError: Rank 0 scheduler died\n") is None
    # SGLang raises this whole; vLLM's "… in response API with Harmony" opens with it: a paste may have cut vLLM's
    message = "Only 'auto' tool_choice is supported in response API"
    assert engines_raising("NotImplementedError", message) == {"sglang"}
    assert engines_raising("NotImplementedError", message, cut=True) == {"sglang", "vllm"}
    assert engine_of(f"NotImplementedError: {message}\n") is None
    # a message that differs from the template after its opening's hole is no cut of it
    assert engine_of("RuntimeError: Rank 0 scheduler crashed during initialization (exit code: -9).\n") is None


def test_an_error_line_the_engine_logs_names_it_only_as_a_line_of_no_type() -> None:
    assert engines_logging("Received sigquit from a child process. It usually means the child failed.") == {"sglang"}
    assert engine_of("Received sigquit from a child process. It usually means the child failed.\n") == "sglang"
    # a line that says how a process ended: the scanner's "Killed" is no exception type (vLLM's multiproc executor
    # logs this, intel/llm-scaler#154)
    assert engine_of("Worker proc VllmWorker-2 died unexpectedly, shutting down executor.\n") == "vllm"
    assert engine_of("Killed\n") is None
    assert engine_raising((("", "EngineCore failed to start."),)) == "vllm"
    # the same words raised as an exception are not that log call: no engine raises them
    assert engine_raising((("ValueError", "EngineCore failed to start."),)) is None
    # a line both engines log (their copies of one module) decides nothing
    assert engines_logging("Error in preprocessing prompt inputs") == {"sglang", "vllm"}
    assert engine_raising((("", "Error in preprocessing prompt inputs"),)) is None


def test_the_line_a_traceback_starts_on_is_the_engines_logged_line(tmp_path: Path) -> None:
    """SGLang logs `Scheduler hit an exception: {traceback}` (sglang/srt/managers/scheduler.py): the traceback starts
    on the logged line."""
    traceback = _traceback(tmp_path, "RuntimeError", "CUDA error: an illegal memory access was encountered")
    assert engine_of(traceback) is None  # torch's words: no engine's
    assert engine_of("Scheduler hit an exception: " + traceback) == "sglang"


def test_cpythons_wordings_and_a_message_naming_an_engine_still_decide_nothing() -> None:
    for line in ("AttributeError: 'NoneType' object has no attribute 'shape'\n",
                 "ModuleNotFoundError: No module named 'vllm'\n",
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB\n"):
        assert engine_of(line) is None, line


def test_the_line_logger_exception_prints_above_a_traceback_is_the_engines_logged_line(tmp_path: Path) -> None:
    """vLLM's `logger.exception("EngineCore failed to start.")` (vllm/v1/engine/core.py) prints its message, then
    the traceback; a paste without vLLM's record header keeps only the two."""
    traceback = _traceback(tmp_path, "RuntimeError", "CUDA error: out of memory")
    assert engine_of("EngineCore failed to start.\n" + traceback) == "vllm"
    assert engine_of("I get this error when I start the server:\n" + traceback) is None  # a person's words
    assert engine_of("Error in preprocessing prompt inputs\n" + traceback) is None  # both engines log it
