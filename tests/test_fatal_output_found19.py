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
from logsleuth.ingest.normalize import LineNormalizer
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
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


CUT_ENGINE_FRAMES = [
    "Traceback (most recent call last):",
    '  File "/opt/venv/lib/python3.11/site-packages/vllm/engine/multiprocessing/engine.py", line 221, in run_engine_loop',
    "    request_outputs = self.engine_step()",
]


@pytest.mark.parametrize("record", [
    "INFO 03-02 09:14:55 [loader.py:12] PosixPath('/models/llama-3-8b')",  # an object's repr, not an exception's
    "DEBUG 03-02 09:14:55 [utils.py:12] Token('<|endoftext|>')",
    "ERROR 03-02 09:14:55 [scheduler.py:12] Block('kv-cache-page-17')",  # an ERROR record, but no exception's class
])
def test_a_repr_that_is_no_logged_exception_names_nothing(record: str) -> None:
    """Only an ERROR record's repr of an exception class is `logger.exception(repr(e))`'s: an INFO/DEBUG record's repr,
    or an ERROR record's of any other object, leaves the traceback without its exception line."""
    block = diagnose_text("\n".join([record, *CUT_ENGINE_FRAMES]) + "\n", OPTIONS).failures[0].failure.final
    assert (block.type, block.message) == ("", "")


def test_an_info_repr_nearer_the_traceback_gives_way_to_the_error_record_above() -> None:
    log = "\n".join([
        "ERROR 03-02 09:14:54 [engine.py:160] Scheduler hit an exception: torch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 2.00 GiB",
        "INFO 03-02 09:14:55 [scheduler.py:12] Block('kv-cache-page-17')",
        *CUT_ENGINE_FRAMES,
    ]) + "\n"
    assert primary(log)[:2] == ("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB")


# -- a native or vendor error with no Python exception line ------------------------------------------------------------

C10_FRAMES = [
    "Exception raised from OperationSetup at build/op_plugin/compiler_depend.ts:151 (most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0xd4 (0xffff8c4e3ea4 in /opt/torch/lib/libc10.so)",
    "frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) + 0xe4 "
    "(0xffff8c483e24 in /opt/torch/lib/libc10.so)",
]


@pytest.mark.parametrize("rank", ["[rank0]:", ""])
@pytest.mark.parametrize("stamp", ["E903", "E1203"])  # c10 prints (tm_mon + 1) * 100 + tm_mday, unpadded
@pytest.mark.parametrize("dots", ["", ".", "......"])
def test_a_c10_error_record_glued_to_progress_dots_is_the_failure(dots: str, stamp: str, rank: str) -> None:
    """vllm-project/vllm-ascend#2720 (a `.` of the graph compile's progress before the record), #393 (none)."""
    log = "\n".join([
        "INFO 09-03 07:21:15 [backends.py:541] Dynamo bytecode transform time: 5.92 s",
        f"{dots}{rank}[{stamp} 07:21:23.263967696 compiler_depend.ts:429] GatherOperation setup failed!",
        *C10_FRAMES,
    ]) + "\n"
    assert primary(log)[:2] == ("ERROR", "GatherOperation setup failed!")


@pytest.mark.parametrize("text", ["...[see the notes] nothing failed here", "./run.sh --port 8000", "...E903 is a code",
                                  "..[E903] the list goes on"])
def test_dots_before_a_sentence_or_a_path_stay_as_they_are(text: str) -> None:
    assert LineNormalizer().normalize(text, 1, 0).text == text


@pytest.mark.parametrize(("lines", "message"), [
    (["        [Init][Compiler]Init compiler failed[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]",
      "        [Set][Options]OpCompileProcessor init failed![FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]"],
     "[Init][Compiler]Init compiler failed"),
    (["EH9999: Inner Error!",
      "EH9999  [Init][Env]init env failed![FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]"],
     "EH9999: [Init][Env]init env failed!"),
])
def test_cann_s_inner_error_report_is_an_npu_error(lines: list[str], message: str) -> None:
    """CANN's error manager's inner report (sgl-project/sglang#9226, Ascend/pytorch#7): the place it appends is no part
    of the message, and the report's later lines are the same failure's, no second one."""
    report = diagnose_text("\n".join(lines) + "\n", OPTIONS)
    assert len(report.failures) == 1
    final = report.failures[0].failure.final
    assert (final.type, final.message) == ("NPU error", message)


NPU_WARNING_REPORT = [
    "[W NPUStream.cpp:365] Warning: NPU warning, error code is 107020[Error]: .",
    "EH9999: Inner Error!",
    "        rtDeviceSynchronize execute failed, reason=[task timeout][FUNC:FuncErrorReason]"
    "[FILE:error_message_manage.cc][LINE:53]",
    "EH9999  wait for compute device to finish failed, runtime result = 107020.[FUNC:ReportCallError]"
    "[FILE:log_inner.cpp][LINE:161]",
    "        TraceBack (most recent call last):",
]


@pytest.mark.parametrize("after", [
    ["{'loss': 1.2, 'grad_norm': 0.5, 'learning_rate': 1e-05, 'epoch': 0.2}"],  # the next logging step
    [],  # the paste ends on the warning's report
])
def test_cann_s_report_under_torch_npu_s_warning_is_no_failure(after: list[str]) -> None:
    """torch_npu's NPU_CHECK_WARN prints CANN's report under its `Warning: NPU warning, …` and the run goes on
    (hiyouga/LlamaFactory#5347: the warning repeated between the Trainer's loss lines)."""
    log = "\n".join(["{'loss': 1.3, 'grad_norm': 0.5, 'learning_rate': 1e-05, 'epoch': 0.1}", *NPU_WARNING_REPORT,
                     *after]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures


@pytest.mark.parametrize("text", [
    "INFO the tracer records [FUNC:main] entries for each call",
    "WARNING 08-20 10:00:00 [utils.py:10] rtGetDevMsg failed[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]",
])
def test_a_line_that_only_mentions_func_is_no_npu_error(text: str) -> None:
    assert not diagnose_text(text + "\n", OPTIONS).failures


# -- a paste that ends on an ERROR record ----------------------------------------------------------------------------

VLLM_SERVED = [
    "(EngineCore_DP0 pid=4410) INFO 12-03 10:27:30 [core.py:210] init engine (profile, create kv cache, warmup model) "
    "took 15.98 seconds",
    "INFO:     Application startup complete.",
    'INFO:     127.0.0.1:59632 - "POST /init_communicator/ HTTP/1.1" 200 OK',
]


def test_a_paste_ending_on_an_engine_error_record_is_that_failure_cut() -> None:
    log = "\n".join([*VLLM_SERVED,
                     "(EngineCore_DP0 pid=4410) ERROR 12-03 10:29:14 [core.py:780] Invocation of update_weights method "
                     "failed"]) + "\n"
    report = diagnose_text(log, OPTIONS)
    assert len(report.failures) == 1
    failure = report.failures[0].failure
    assert (failure.final.type, failure.final.message) == ("ERROR", "Invocation of update_weights method failed")
    assert failure.truncated


@pytest.mark.parametrize("after", [
    'INFO:     127.0.0.1:59640 - "POST /v1/completions HTTP/1.1" 200 OK',  # served on
    "(EngineCore_DP0 pid=4410) INFO 12-03 10:29:20 [loggers.py:123] Engine 000: Avg prompt throughput: 12.0 tokens/s",
])
def test_an_error_record_the_run_went_on_after_is_no_failure(after: str) -> None:
    log = "\n".join([*VLLM_SERVED,
                     "(EngineCore_DP0 pid=4410) ERROR 12-03 10:29:14 [core.py:780] Invocation of update_weights method "
                     "failed", after]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures


def test_the_report_says_what_to_paste_after_the_record() -> None:
    log = "\n".join([*VLLM_SERVED,
                     "(EngineCore_DP0 pid=4410) ERROR 12-03 10:29:14 [core.py:780] Invocation of update_weights method "
                     "failed"]) + "\n"
    shown = " ".join(render(diagnose_text(log, OPTIONS), RenderOptions(format=OutputFormat.TEXT, width=400)).split())
    assert "the paste ends on this record: its traceback, the lines right after it in the server's log" in shown


SERVER_UP = [
    "INFO 12-03 10:27:30 [api_server.py:1000] Starting vLLM API server 0 on http://0.0.0.0:8000",
    "INFO:     Application startup complete.",
    'INFO:     127.0.0.1:59632 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
]


@pytest.mark.parametrize("record", [
    # records that say in their own words that the server went on (vLLM's logger.error sites: speech_to_text.py
    # _warmup_input_processor, the weight loader's fallback, custom_all_reduce's is_in_the_same_node)
    "ERROR 12-03 10:29:14 [speech_to_text.py:120] Input processor warmup failed (non-fatal): timeout. First request "
    "may experience higher latency.",
    "ERROR 12-03 10:29:14 [weight_utils.py:222] Weight cache IPC loading failed; falling back to disk loading",
    "ERROR 12-03 10:29:14 [utils.py:222] Error ignored in is_in_the_same_node: connection refused by peer",
    # a request handler's records: one request answered with an error, the server serving on (vLLM's
    # entrypoints/openai/server_utils.py http_exception_handler / exception_handler, serving_chat.py)
    "ERROR 12-03 10:29:14 [server_utils.py:120] HTTPException caught. Request id: chatcmpl-abc123def456",
    "ERROR 12-03 10:29:14 [server_utils.py:120] Exception caught. Request id: chatcmpl-abc123def456",
    "ERROR 12-03 10:29:14 [serving_chat.py:222] Error in preprocessing prompt inputs",
])
def test_an_error_record_the_server_survives_is_no_failure_at_the_paste_s_end(record: str) -> None:
    assert not diagnose_text("\n".join([*SERVER_UP, record]) + "\n", OPTIONS).failures


def test_a_warning_record_ending_a_paste_is_no_failure() -> None:
    log = "\n".join([*VLLM_SERVED, "WARNING 12-03 10:29:14 [core.py:780] Request took longer than expected to finish"])
    assert not diagnose_text(log + "\n", OPTIONS).failures
