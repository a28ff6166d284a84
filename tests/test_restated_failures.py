"""One failure reported once (issue 28, the retired blind split 14: 7 of 44 reports listed one failure several
times).  A log restates the error it dies of, and each restatement read as a failure of its own pushed the real one
down the report:

- the front end's traceback re-raising the worker's exception (vLLM's API server after its engine process, the
  engine core's re-raise of a worker's error): the same type and message under other frames (split 14's B-05, D-07);
- a chain whose outer traceback the paste cut before its exception line, each line under vLLM's logger header and the
  header of the chain's blank lines left without its trailing space (`ERROR 12-04 09:08:38 [core.py:586]`), so the
  chain fell apart into three failures (split 14's D-01, vllm/v1/engine/core.py run_engine_core's
  `logger.exception("EngineCore failed to start.")`);
- a traceback header with nothing under it where the paste ends, or a traceback cut before its exception line,
  beside the error the log names (split 14's E-01, E-08);
- a native library's glog `E` record of the error beside the Python exception that carries it (Mooncake's
  `rdma_context.cpp` record beside `RuntimeError: Mooncake memory registration failed.`, split 14's G-01; the same
  shape as the retired split 12's F-03 that grouping.names_no_exception cites);
- transformers' second paragraph (`You can update Transformers with the command …`,
  transformers/models/auto/configuration_auto.py) under pydantic's `Value error, <first paragraph>` display of
  vLLM's config check (split 14's D-04).
Two failures that name different exceptions stay two.  Tracebacks are real CPython's, run from our own code."""

from __future__ import annotations

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Report
from tests.helpers import real_traceback, without_exception_line

QUANT_MESSAGE = "Model LlavaForConditionalGeneration does not support BitsAndBytes quantization yet."

_WORKER = f'''
def _load_weights():
    raise AttributeError("{QUANT_MESSAGE}")


def load_model():
    _load_weights()


load_model()
'''

# The front end turning the worker's failure into its own exception of the same type and message.
_FRONT_END = f'''
def wait_for_engine(error):
    raise AttributeError(error)


def run_server():
    wait_for_engine("{QUANT_MESSAGE}")


run_server()
'''

_CHAINED = '''
def verify_quantization():
    raise ImportError("bitsandbytes version is wrong. Please install bitsandbytes>=0.46.1.")


def run_engine_core():
    try:
        verify_quantization()
    except ImportError as error:
        raise RuntimeError("Engine core initialization failed.") from error


run_engine_core()
'''

VLLM_HEADER = "ERROR 12-04 09:08:38 [core.py:586] "


def _report(text: str) -> Report:
    return diagnose_text(text, DiagnoseOptions(include_user_patterns=False))


def _signatures(report: Report) -> list[str]:
    return [group.signature for group in report.failures]


def test_the_front_ends_re_raise_of_the_workers_exception_is_one_failure() -> None:
    worker = real_traceback(_WORKER, "vllm/model_executor/model_loader/loader.py")
    front = real_traceback(_FRONT_END, "vllm/entrypoints/openai/api_server.py")
    report = _report(worker + front)
    assert len(report.failures) == 1
    kept = report.failures[0]
    assert kept.failure.final.type == "AttributeError"
    assert kept.failure.final.frames[-1].function == "_load_weights"  # the raise site, not the re-raise
    assert any("the same AttributeError again" in line for line in kept.cascade)


def _cut_after_first_outer_frame(printed: str) -> str:
    """The chain cut by the paste after the outer traceback's first frame and its source line (a call)."""
    lines = printed.splitlines()
    outer = max(index for index, line in enumerate(lines) if line.startswith("Traceback"))
    return "\n".join(lines[: outer + 3]) + "\n"


def test_a_chain_cut_after_its_outer_frames_under_vllms_header_is_its_cause() -> None:
    printed = _cut_after_first_outer_frame(real_traceback(_CHAINED, "vllm/v1/engine/core.py"))
    assert printed.splitlines()[-1].strip() == "run_engine_core()"
    # vLLM's logger.exception puts its header on every line; the paste trimmed the space after it on the blank ones
    logged = "\n".join((VLLM_HEADER + line).rstrip() for line in printed.splitlines()) + "\n"
    report = _report(f"{VLLM_HEADER}EngineCore failed to start.\n{logged}")
    assert _signatures(report) == ["ImportError: bitsandbytes version is wrong. Please install bitsandbytes>=N.N."]
    assert report.failures[0].failure.truncated


def test_a_whole_chain_under_vllms_header_with_trimmed_blank_lines_stays_one_chain() -> None:
    printed = real_traceback(_CHAINED, "vllm/v1/engine/core.py")
    logged = "\n".join((VLLM_HEADER + line).rstrip() for line in printed.splitlines()) + "\n"
    report = _report(logged)
    assert len(report.failures) == 1
    assert [block.type for block in report.failures[0].failure.exceptions] == ["ImportError", "RuntimeError"]


def test_an_empty_traceback_header_where_the_paste_ends_folds_into_the_error() -> None:
    worker = real_traceback(_WORKER, "vllm/model_executor/model_loader/loader.py")
    text = f"{worker}Process EngineCore_DP0:\nTraceback (most recent call last):\n"
    report = _report(text)
    assert _signatures(report) == [f"AttributeError: {QUANT_MESSAGE}"]
    assert any("traceback header with no frame or exception line" in line for line in report.failures[0].cascade)


def test_the_same_check_cut_inside_its_raising_statement_folds_into_the_same_exception() -> None:
    """The error printed twice, the second time cut inside the raising statement (its type read from `raise
    AttributeError(`): raised at the same frame, so the same exception, one more occurrence."""
    worker = real_traceback(_WORKER, "vllm/model_executor/model_loader/loader.py")
    cut = without_exception_line(worker)
    report = _report(worker + "\nthe server then printed:\n" + cut)
    assert _signatures(report) == [f"AttributeError: {QUANT_MESSAGE}"]
    assert report.failures[0].count == 2


def test_a_re_raise_elsewhere_cut_inside_its_raising_statement_stays_its_own_failure() -> None:
    """Cut inside `raise AttributeError(error)` of another function: only the type is known, and a type alone does
    not say it is the worker's error, so both are listed."""
    worker = real_traceback(_WORKER, "vllm/model_executor/model_loader/loader.py")
    cut = without_exception_line(real_traceback(_FRONT_END, "vllm/entrypoints/openai/api_server.py"))
    report = _report(worker + "\nthe server then printed:\n" + cut)
    assert [group.failure.final.type for group in report.failures] == ["AttributeError", "AttributeError"]
    assert not report.failures[0].cascade


_DTYPE_CHECK = '''
def check_dtype(dtype):
    raise ValueError(f"Unsupported dtype {dtype} for this GPU")


check_dtype("bf16")
'''

_QUANTIZATION_CHECK = '''
def get_quantization_config(name):
    raise ValueError(f"Unknown quantization method: {name}")


get_quantization_config("awq_marlin")
'''


def test_two_checks_of_one_type_stay_two_when_the_second_is_cut_inside_its_statement() -> None:
    first = real_traceback(_DTYPE_CHECK, "vllm/config.py")
    cut = without_exception_line(real_traceback(_QUANTIZATION_CHECK, "vllm/model_executor/layers/quantization/__init__.py"))
    report = _report(first + "\nlater:\n" + cut)
    assert [group.failure.final.type for group in report.failures] == ["ValueError", "ValueError"]
    assert report.failures[1].failure.final.frames[-1].function == "get_quantization_config"


def test_a_re_raise_of_the_same_exception_counts_as_an_occurrence() -> None:
    worker = real_traceback(_WORKER, "vllm/model_executor/model_loader/loader.py")
    front = real_traceback(_FRONT_END, "vllm/entrypoints/openai/api_server.py")
    report = _report(worker + front)
    assert [group.count for group in report.failures] == [2]


def test_a_bare_line_printed_before_its_traceback_is_said_so() -> None:
    worker = real_traceback(_WORKER, "vllm/model_executor/model_loader/loader.py")
    report = _report(f"AttributeError: {QUANT_MESSAGE}\n{worker}")
    kept = report.failures[0]
    assert kept.failure.final.frames and kept.count == 2
    assert kept.cascade == ("line 1: the same AttributeError printed first, without its traceback",)


def test_a_cut_traceback_of_another_process_names_it() -> None:
    worker = real_traceback(_WORKER, "vllm/model_executor/model_loader/loader.py")
    printed = real_traceback(_FRONT_END, "vllm/entrypoints/openai/api_server.py").splitlines()
    logged = "".join(f"(Worker pid=11) {line}\n" for line in worker.splitlines())
    cut = "".join(f"(Worker pid=12) {line}\n" for line in printed[:3])
    report = _report(logged + cut)
    assert _signatures(report) == [f"AttributeError: {QUANT_MESSAGE}"]
    assert report.failures[0].cascade[0].startswith("pid 12, line ")


def test_a_traceback_cut_before_its_exception_line_folds_into_the_error_the_log_names() -> None:
    worker = real_traceback(_WORKER, "vllm/model_executor/model_loader/loader.py")
    printed = real_traceback(_FRONT_END, "vllm/entrypoints/openai/api_server.py").splitlines()
    cut = "\n".join(printed[:3]) + "\n"  # the header, the first frame and its call
    assert cut.splitlines()[-1].strip() == "run_server()"
    report = _report(worker + "\nthe server then printed:\n" + cut)
    assert _signatures(report) == [f"AttributeError: {QUANT_MESSAGE}"]
    assert any("cut before its exception line" in line and "<module>" in line for line in report.failures[0].cascade)


_MOONCAKE_REGISTER = '''
def register(ret):
    if ret != 0:
        raise RuntimeError("Mooncake memory registration failed.")


register(-1)
'''


def test_a_native_librarys_error_record_beside_the_exception_is_its_context() -> None:
    printed = without_exception_line(real_traceback(_MOONCAKE_REGISTER, "sglang/srt/disaggregation/mooncake/transfer_engine.py"))
    # the paste kept the last frame without CPython's wording, and the raising statement (split 14's G-01)
    frame, statement = printed.strip().splitlines()[-2:]
    unworded = frame.strip().removeprefix('File "').replace('",', "")
    record = "E0511 07:42:36.355509 10240 rdma_context.cpp:198] Failed to register memory 0x2e1cbac200: Bad address [14]"
    report = _report(f"{unworded}\n{statement}\n{record}\n")
    assert _signatures(report) == ["RuntimeError: Mooncake memory registration failed."]
    assert any("Failed to register memory" in line for line in report.failures[0].cascade)


def test_transformers_second_paragraph_under_pydantics_value_error_is_the_same_message() -> None:
    first = ("  Value error, The checkpoint you are trying to load has model type `qwen3_vl` but Transformers does "
             "not recognize this architecture. This could be because of an issue with the checkpoint, or because "
             "your version of Transformers is out of date.")
    second = ("You can update Transformers with the command `pip install --upgrade transformers`. If this does not "
              "work, and the checkpoint is very new, then there may not be a release version that supports this "
              "model yet.")
    report = _report(f"{first}\n\n{second}\n")
    assert len(report.failures) == 1
    assert "You can update Transformers" in report.failures[0].failure.final.message


def test_two_different_errors_stay_two() -> None:
    worker = real_traceback(_WORKER, "vllm/model_executor/model_loader/loader.py")
    other = real_traceback('import json\njson.loads("{")\n', "vllm/entrypoints/openai/api_server.py")
    report = _report(worker + other)
    assert [group.failure.final.type for group in report.failures] == ["AttributeError", "json.decoder.JSONDecodeError"]
    assert not any(group.cascade for group in report.failures)


def _logged_type_error() -> str:
    """vLLM's engine core logging a stub's TypeError on one line (triton-inference-server/server#8578's shape)."""
    def stub(**_: object) -> None: ...
    try:
        stub(1)  # type: ignore[call-arg]
    except TypeError as error:
        return f"ERROR 12-04 09:08:38 [core.py:586] EngineCore failed to start: TypeError: {error}\n"
    raise AssertionError("the stub took a positional argument")


RDMA_RECORD = "E0511 07:42:36.355509 10240 rdma_context.cpp:198] Failed to register memory 0x2e1cbac200: Bad address [14]\n"


def test_an_error_record_within_reach_of_a_logged_error_is_its_context() -> None:
    report = _report(_logged_type_error() + "INFO waiting\n" * 3 + RDMA_RECORD)
    assert [group.failure.final.type for group in report.failures] == ["TypeError"]
    assert report.failures[0].cascade == ("line 5: an error record beside it: " + RDMA_RECORD.split("] ", 1)[1].strip(),)


def test_an_error_record_beyond_reach_is_listed_after_the_logged_error() -> None:
    report = _report(_logged_type_error() + "\n" * 20 + RDMA_RECORD)
    assert [group.failure.final.type for group in report.failures] == ["TypeError", "ERROR"]
