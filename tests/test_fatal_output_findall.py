"""Failures stop 49's inventory (branch findall) found missed or misread in the dev sweeps' pastes (issue 28's first
target: a failure found wherever a person would point at one, its type read right), each read in the general detector:

- one log record a paste put whole in inline code, its header inside the backticks: vLLM's V0 engine logs the error it
  dies of with `logger.exception(e)` (vllm/engine/multiprocessing/engine.py run_mp_engine: `ERROR … [engine.py:448]
  <the message>`, the traceback under it), the paste keeping the record's line only (the retired blind split 12's D-03);
- an HTTP client's print of an error answer whose first word reads as a reason phrase (`400 As of transformers
  v4.44, …`), the body's `param` printed after the message (`… define one. None`: vLLM's ErrorInfo fields, vllm/entrypoints/openai/protocol.py; split 12's H-04);
- CPython's unexpected-keyword message for a key a `**kwargs` dict held that is no identifier (Python/ceval.c prints
  it with %S: a UI's dashed option name, xorbitsai/inference#4196) and an index past a sequence's end (Objects/
  listobject.c `list index out of range`, logged after a wrapper's words: LMCache/LMCache#2854);
- xoscar's text for an exception it cannot pickle (xoscar/serialization/exception.py UnpickleableError: `Error cannot
  be pickled, error type: <class 'X'>, raw error:` + str(exc)), which names the error's class (split 12's H-03);
- a line a reader shortened at its start (`... Rank 0 scheduler is dead`) is no part of the exception message above it
  (the blind split's A-01; turboderp-org/exllamav2#786 elides paths so);
- among failures that are each a fallback, an error record that names no exception (a glog `E` record) comes after
  one that names it (split 12's F-03, triton-inference-server/server#8578);
- a paste that ends on an indented paragraph holding an engine's message (decoderesearch/interp-engine#2, hard-wrapped;
  xorbitsai/inference#4548, after a blank line);
- a paste that ends on CPython's line before a dead thread's traceback (Lib/threading.py excepthook `Exception in
  thread …:`), the traceback cut off (sgl-project/sglang#9292);
- rich's traceback panel (rich/traceback.py; lighteval runs under it: huggingface/lighteval#504, huggingface/open-r1#468),
  whole or cut before its exception line, read as CPython's traceback (ingest/rich_frames.py).

The engines' messages are quoted as their raise sites print them; CPython's are real (raised here); the prose is ours."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from logsleuth.api import diagnose_text
from logsleuth.diagnosis.grouping import names_no_exception
from logsleuth.tracebacks.typeless_errors import type_named_by_message
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

BF16_MESSAGE = ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla P40 GPU has "
                "compute capability 6.1. You can use float16 instead by explicitly setting the `dtype` flag in CLI, for "
                "example: --dtype=half.")
CHAT_TEMPLATE_MESSAGE = ("As of transformers v4.44, default chat template is no longer allowed, so you must provide a "
                         "chat template if the tokenizer does not define one.")
CHUNKED_MM_MESSAGE = ("Chunked MM input disabled but max_tokens_per_mm_item (2496) is larger than "
                      "max_num_batched_tokens (512).")


def cpython_message(code: str) -> str:
    """str() of the exception the real interpreter raises for `code`."""
    try:
        exec(code, {})
    except Exception as error:  # noqa: BLE001 - any exception: its text is what a wrapper logs
        return str(error)
    raise AssertionError("the snippet was meant to raise")


def failures(log: str) -> list[tuple[str, str]]:
    return [(group.failure.final.type, " ".join(group.failure.final.message.split()))
            for group in diagnose_text(log, OPTIONS).failures]


# -- a record in inline code -------------------------------------------------------------------------------------------

def test_an_error_record_quoted_whole_in_inline_code_is_read_as_the_record() -> None:
    log = (f"Starting the container on the old card stops with this:\n\n`ERROR 04-29 21:35:55 [engine.py:448] "
           f"{BF16_MESSAGE}`\n\nWhat should I change?\n")
    report = diagnose_text(log, OPTIONS)
    assert report.failures
    final = report.failures[0].failure.final
    assert (final.type, final.message) == ("ValueError", BF16_MESSAGE)
    assert report.launch.engine == "vllm"  # the record's header is vLLM's format, read inside the backticks


@pytest.mark.parametrize("line", [
    "`vllm serve /models/Qwen2-7B --dtype half`",
    "`INFO 04-29 21:35:50 [api_server.py:1043] vLLM API server version 0.8.1`",
    "`WARNING 04-29 21:35:51 [config.py:2614] Casting torch.bfloat16 to torch.float16.`",
])
def test_a_command_or_a_healthy_record_in_inline_code_is_no_failure(line: str) -> None:
    assert diagnose_text(f"I start it with this:\n\n{line}\n\nand it runs slowly.\n", OPTIONS).failures == ()


# -- an HTTP client's print of the status and the server's message -----------------------------------------------------

def test_a_status_before_the_message_and_the_bodys_param_after_it() -> None:
    log = f"calling the chat endpoint prints:\n```\n400 {CHAT_TEMPLATE_MESSAGE} None\n```\n"
    assert primary(log)[:2] == ("ValueError", CHAT_TEMPLATE_MESSAGE)


def test_a_status_before_words_no_raise_site_prints_stays_no_failure() -> None:
    assert diagnose_text("```\n400 As of today the endpoint answers nothing useful. None\n```\n", OPTIONS).failures == ()


# -- CPython's own messages --------------------------------------------------------------------------------------------

def test_an_unexpected_keyword_that_is_no_identifier_is_cpythons_type_error() -> None:
    message = cpython_message("class AsyncEngineArgs:\n    def __init__(self, model=None):\n        pass\n"
                              "AsyncEngineArgs(**{'tool-call-parser': 'hermes'})")
    assert message == "AsyncEngineArgs.__init__() got an unexpected keyword argument 'tool-call-parser'"
    assert type_named_by_message(message) == "TypeError"
    log = f"Setting the parser in the web form shows Server error: 500 - [address=0.0.0.0:46149, pid=156] {message}\n"
    assert primary(log)[:2] == ("TypeError", message)


def test_an_index_past_a_lists_end_logged_after_a_wrappers_words() -> None:
    message = cpython_message("[][0]")
    assert type_named_by_message(message) == "IndexError"
    log = ("[2026-03-23 13:46:57,782] CacheWorker INFO: Loading the cache config file\n"
           f"CacheWorker ERROR: cache engine init failed: {message}\n")
    assert primary(log)[:2] == ("IndexError", message)


# -- xoscar's text for an error it could not pickle --------------------------------------------------------------------

def test_the_class_xoscar_names_is_the_failures_type() -> None:
    raw = ("1 validation error for ModelConfig\n  Value error, The checkpoint you are trying to load has model type "
           "`ernie4_5` but Transformers does not recognize this architecture. [type=value_error, "
           "input_value=ArgsKwargs((), {'model': '/models/ERNIE-4.5'}), input_type=ArgsKwargs]")
    # xoscar's UnpickleableError text, the web UI's answer showing it on one line
    said = ("Error cannot be pickled, error type: <class 'pydantic_core._pydantic_core.ValidationError'>, raw error: "
            + " ".join(raw.split()))
    type_name, message, category = primary(f"Deploying it from the web page:\nServer error: 500 - [address=0.0.0.0:44423, "
                                           f"pid=90397] {said}\n")
    assert type_name == "pydantic_core._pydantic_core.ValidationError"
    assert message.startswith("1 validation error for ModelConfig Value error, The checkpoint you are trying to load")
    assert "[type=value_error" not in message
    assert category in ("dependency-version", "unsupported-architecture")  # from the engine's message, as before


def test_xoscar_naming_a_builtin_class() -> None:
    raw = cpython_message("int('ten')")
    said = f"Error cannot be pickled, error type: {type(ValueError())}, raw error: {raw}"
    assert primary(f"Launching the model failed: {said}\n")[:2] == ("ValueError", raw)


# -- a reader's elision below the exception line -----------------------------------------------------------------------

def test_a_line_shortened_at_its_start_does_not_continue_the_message() -> None:
    printed = real_traceback("raise ValueError(\"Attention backend 'sage_attn' is not supported by this attention "
                             "layer;\\nsupported backends: ['fa', 'torch_sdpa']\")\n")
    exception_line = printed.rstrip("\n").split("\n")[-2:]
    log = "```\n" + "\n".join(exception_line) + "\n... Failed to load customized audio_vae\n... Rank 0 scheduler is dead\n```\n"
    assert primary(log)[:2] == ("ValueError", "Attention backend 'sage_attn' is not supported by this attention layer; "
                                              "supported backends: ['fa', 'torch_sdpa']")


# -- fallbacks: the one that names an exception first ------------------------------------------------------------------

def test_a_transfer_engines_error_record_is_the_context_of_the_engines_typed_line() -> None:
    log = ("E0521 16:22:21.694042   162 transfer_metadata.cpp:877] Local segment descriptor not found\n"
           "[2026-05-21 16:41:11 TP7] Prefill transfer failed for request rank=7 req.rid='a1' req.bootstrap_room=66 "
           "with exception KVTransferError(bootstrap_room=66): Decode instance could be dead, remote mooncake session "
           "10.0.0.2:16917 is not alive\n")
    report = diagnose_text(log, OPTIONS)
    # the record is one line of what followed the exception, no failure of its own (diagnosis/restated.py)
    assert [group.failure.final.type for group in report.failures] == ["KVTransferError"]
    assert any("Local segment descriptor not found" in line for line in report.failures[0].cascade)


def test_a_records_text_naming_no_exception_comes_after_the_exception_below_it() -> None:
    message = cpython_message("def build_client(engine_args):\n    pass\nbuild_client(None, stat_loggers=[])")
    log = ('E1216 02:12:49.624646 179 model.py:248] "[vllm] Failed to start engine: NoneType: None\\n"\n'
           f'I1216 02:12:49.624943 179 pb_stub.cc:388] "Failed to initialize Python stub: TypeError: {message}"\n')
    report = diagnose_text(log, OPTIONS)
    assert [group.failure.final.type for group in report.failures] == ["TypeError"]
    assert any("Failed to start engine" in line for line in report.failures[0].cascade)


def test_error_records_alone_keep_their_log_order() -> None:
    log = ("E0616 07:25:02.248354 40411 client.cpp:380] Failed to start put operation: NO_AVAILABLE_HANDLE\n"
           "E0616 07:25:02.248379 40411 store_py.cpp:372] Put operation failed with error: NO_AVAILABLE_HANDLE\n")
    report = diagnose_text(log, OPTIONS)
    assert all(names_no_exception(group.failure) for group in report.failures)
    assert report.failures[0].failure.final.message.startswith("Failed to start put operation")


# -- an indented paragraph at the paste's end --------------------------------------------------------------------------

def test_an_engines_message_indented_and_wrapped_at_the_pastes_end() -> None:
    log = "  Chunked MM input disabled but max_tokens_per_mm_item (2496) is larger\n  than max_num_batched_tokens (512).\n"
    assert primary(log)[:2] == ("ValueError", CHUNKED_MM_MESSAGE)


def test_cpythons_message_indented_after_a_blank_line() -> None:
    message = cpython_message("class EngineArgs:\n    def __init__(self, model=None):\n        pass\nEngineArgs(task='generate')")
    log = f"installed the server with its engine extra and ran it\n\n {message}\n"
    assert primary(log)[:2] == ("TypeError", message)


@pytest.mark.parametrize("log", [
    "my steps:\n\n    pip install vllm==0.8.1\n    vllm serve /models/Qwen2-7B\n",
    "the config:\n\n  max_num_batched_tokens: 512\n  max_model_len: 4096\n",
])
def test_an_indented_block_no_raise_site_prints_is_no_failure(log: str) -> None:
    assert diagnose_text(log, OPTIONS).failures == ()


# -- a dead thread's first line, the paste cut after it ----------------------------------------------------------------

def thread_intro() -> str:
    """The line CPython's threading.excepthook prints before a dead thread's traceback (real, from a thread here)."""
    printed: list[str] = []

    def hook(args: threading.ExceptHookArgs) -> None:
        buffer = io.StringIO()
        with contextlib.redirect_stderr(buffer):
            threading.__excepthook__(args)
        printed.append(buffer.getvalue().splitlines()[0])

    def backup_thread_func() -> None:
        raise RuntimeError("storage backend went away")

    previous, threading.excepthook = threading.excepthook, hook
    try:
        worker = threading.Thread(target=backup_thread_func, name="Thread-13 (backup_thread_func)")
        worker.start()
        worker.join()
    finally:
        threading.excepthook = previous
    return printed[0]


def test_a_paste_ending_on_a_dead_threads_first_line() -> None:
    intro = thread_intro()
    assert intro == "Exception in thread Thread-13 (backup_thread_func):"
    log = ("[2025-08-17 19:34:27 TP0] Prefill batch. #new-seq: 1, #new-token: 2048, #cached-token: 0, token usage: 0.02\n"
           f"{intro}\n")
    report = diagnose_text(log, OPTIONS)
    assert len(report.failures) == 1
    failure = report.failures[0].failure
    assert (failure.kind, failure.header) == ("traceback", intro)
    assert not failure.final.type


def test_a_dead_threads_line_before_more_output_is_read_as_before() -> None:
    intro = thread_intro()
    log = f'{intro}\nINFO:     127.0.0.1:52068 - "POST /generate HTTP/1.1" 200 OK\n'
    assert diagnose_text(log, OPTIONS).failures == ()


# -- rich's traceback panel --------------------------------------------------------------------------------------------

RICH_MODULE = """
def evaluate(config):
    if config["tasks"] is None:
        raise ValueError("No tasks were given: pass a task name or a custom tasks file")
    return config


def vllm(model_args):
    return evaluate({"tasks": None, "model": model_args})
"""


def rich_panel(tmp_path: Path) -> list[str]:
    """What rich's traceback handler prints for a real exception raised in a module under `tmp_path`."""
    (tmp_path / "main_vllm.py").write_text(RICH_MODULE)
    script = ("import sys\nsys.path.insert(0, sys.argv[1])\nfrom rich.console import Console\n"
              "from rich.traceback import Traceback\nfrom main_vllm import vllm\n"
              "console = Console(width=200, file=sys.stderr, color_system=None)\n"
              "try:\n    vllm('pretrained=x')\nexcept Exception:\n    console.print(Traceback(width=200))\n")
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert "Traceback (most recent call last)" in proc.stderr, proc.stderr
    return proc.stderr.rstrip("\n").split("\n")


def test_richs_traceback_panel_is_read_as_a_traceback(tmp_path: Path) -> None:
    panel = rich_panel(tmp_path)
    report = diagnose_text("\n".join(panel) + "\n", OPTIONS)
    assert len(report.failures) == 1
    final = report.failures[0].failure.final
    assert (final.type, final.message) == ("ValueError", "No tasks were given: pass a task name or a custom tasks file")
    assert [frame.function for frame in final.frames][-2:] == ["vllm", "evaluate"]
    assert final.frames[-1].source == 'raise ValueError("No tasks were given: pass a task name or a custom tasks file")'


def test_richs_panel_cut_before_its_exception_line_under_torchruns_prefix(tmp_path: Path) -> None:
    panel = [line for line in rich_panel(tmp_path) if not line.startswith("ValueError")][:-8]  # cut inside the box
    report = diagnose_text("".join(f"[rank0]: {line}\n" for line in panel), OPTIONS)
    assert len(report.failures) == 1
    failure = report.failures[0].failure
    assert failure.kind == "traceback" and not failure.final.type
    assert "vllm" in [frame.function for frame in failure.final.frames]


def test_richs_frame_path_wrapped_over_two_rows_is_joined(tmp_path: Path) -> None:
    """A panel narrower than a frame's path (console width 60): rich ends one row with the path's start and goes on at
    the next row's start; the joined path is the frame's, so lighteval's `main_vllm.py` still names vLLM (review 2
    of stop 49)."""
    package = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "lighteval"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "main_vllm.py").write_text(RICH_MODULE)
    script = ("import sys\nsys.path.insert(0, sys.argv[1])\nfrom rich.console import Console\n"
              "from rich.traceback import Traceback\nfrom lighteval.main_vllm import vllm\n"
              "console = Console(width=60, file=sys.stderr, color_system=None)\n"
              "try:\n    vllm('pretrained=x')\nexcept Exception:\n    console.print(Traceback(width=60))\n")
    proc = subprocess.run([sys.executable, "-c", script, str(package.parent)], capture_output=True, text=True,
                          timeout=120)
    assert "Traceback (most recent call last)" in proc.stderr, proc.stderr
    assert f"{package}/main_vllm.py" not in proc.stderr  # the path is wider than the panel: rich wrapped it
    report = diagnose_text(proc.stderr, OPTIONS)
    final = report.failures[0].failure.final
    assert final.frames and final.frames[-1].file == f"{package}/main_vllm.py"
    assert report.launch.engine == "vllm"


def test_a_long_row_inside_richs_panel_is_read_in_one_pass() -> None:
    """A 64 KiB row of path pieces inside a panel (no box side at its end): the wrapped-path regex finds its first
    slash once (review 3 H1 of stop 49: it took 39 s before)."""
    from tests.test_fuzz import no_hang  # the suite's hang guard (SIGALRM, 20 s)
    header = "\u256d\u2500\u2500 Traceback (most recent call last) \u2500\u2500\u256e\n"
    log = header + "\u2502 " + "a/" * 32_000 + "x\n" + "ValueError: boom\n"
    with no_hang():
        report = diagnose_text(log, OPTIONS)
    assert report.failures
