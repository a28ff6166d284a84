"""Error lines of native libraries and of serving wrappers, with no Python traceback (stop 47's dev sweep, branch
findnative; logsleuth/tracebacks/native_errors.py).  No real part of these libraries can run here (no GPU, no UCX,
no NVSHMEM), so each native line is built from the library's own format string:

- torch_memory_saver's CURESULT_CHECK / CUDA_ERROR_CHECK (csrc/utils.h: "[torch_memory_saver.cpp] CUresult error: "
  << result << " (" << err_str << ") " << " file=" << __FILE__ << " func=" << __func__ << " line=" << __LINE__, then
  exit(1)); the older macro's "CUresult error  result=%d file=… func=… line=…" (fzyzcjy/torch_memory_saver#4,
  THUDM/slime#274);
- UCX's log handler (ucs/debug/log.c: "[%lu.%06lu] [%s:%-5d:%s] %18s:%-4u %s %-5s %s"; xcompact3d/x3d2#292,
  ai-dynamo/nixl#1614), its WARN record kept out;
- NVSHMEM's error check ("%s:%d: non-zero status: %d " then the message; deepseek-ai/DeepEP#150);
- KServe's model server (huggingfaceserver __main__.py: logger.error(f"Failed to start model server: {e}") in its
  own log format, kserve/logging.py KSERVE_LOGGER_FORMAT; kserve/kserve#3946 quotes it in a sentence): the record made
  by real logging with that format, the exception's text from real CPython.

- Triton's model summary table (core src/server.cc PrintBackendAndModelSummary through triton::common::TablePrinter; a
  model's status "UNAVAILABLE: " + the reason it did not load, triton-inference-server/server#6950).

glog E records (glog's LogMessage prefix "Lmmdd hh:mm:ss.uuuuuu threadid file:line] ") of KV-transfer engines were already
found (scanner: grammar.GLOG_ERROR); Mooncake's own records (worker_pool.cpp, rdma_endpoint.cpp; vllm-project/vllm#10884,
kvcache-ai/Mooncake#166) are now filed under the KV-transfer network row."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from logsleuth.api import diagnose_text
from tests.test_fatal_output_shapes import OPTIONS, primary

SGLANG_LAUNCH = "python -m sglang.launch_server --model-path /models/Qwen2-7B --enable-memory-saver\n"
TMS_CURESULT = "[torch_memory_saver.cpp] CUresult error: {code} ({said})  file={file} func={func} line={line}"
TMS_OLD_CURESULT = "[torch_memory_saver.cpp] CUresult error  result={code} file={file} func={func} line={line} (5)"
UCX_RECORD = "[{sec}.{usec:06d}] [{host}:{pid:<5d}:{thread}] {file:>18s}:{line:<4d} UCX  {level:<5s} {msg}"
NVSHMEM_CHECK = "{file}:{line}: non-zero status: {status} {msg}"
KSERVE_FORMAT = "%(asctime)s.%(msecs)03d %(process)s %(name)s %(levelname)s [%(filename)s:%(funcName)s():%(lineno)s] %(message)s"


def ucx(level: str, msg: str) -> str:
    return UCX_RECORD.format(sec=1774611987, usec=873495, host="node7", pid=29528, thread=0,
                             file="cuda_copy_md.c", line=688, level=level, msg=msg)


def test_a_failed_cuda_call_checked_by_the_memory_savers_macro_is_found_as_out_of_memory() -> None:
    line = TMS_CURESULT.format(code=2, said="out of memory", file="csrc/utils.h", func="cu_mem_create", line=187)
    kind, message, category = primary(SGLANG_LAUNCH + "[2025-09-05 11:02:13] Capture cuda graph begin.\n" + line + "\n")
    assert kind == "CUDA error"
    assert message == "CUresult error: 2 (out of memory) file=csrc/utils.h func=cu_mem_create line=187"
    assert category == "gpu-oom"


def test_the_older_macro_without_the_error_string_names_code_2_out_of_memory() -> None:
    line = TMS_OLD_CURESULT.format(code=2, file="csrc/torch_memory_saver.cpp", func="cu_mem_create", line=103)
    kind, message, category = primary(SGLANG_LAUNCH + line + "\n")
    assert kind == "CUDA error"
    assert message.startswith("CUresult error result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create line=103")
    assert category == "gpu-oom"


def test_a_ucx_error_record_is_found_and_its_warning_is_not() -> None:
    kind, message, category = primary(ucx("ERROR", "cuMemGetAddressRange(0x75e0ba800000) error: named symbol not found") + "\n")
    assert kind == "UCX error"
    assert message == "cuMemGetAddressRange(0x75e0ba800000) error: named symbol not found"
    assert category == "cuda-error"  # the failed CUDA driver call it names
    warned = ucx("WARN", "transports 'cuda_ipc','cuda_copy' are not available, please use one or more of: mm, posix")
    report = diagnose_text(warned + "\nBackend UCX was instantiated\n", OPTIONS)
    assert not report.failures


def test_an_nvshmem_error_check_is_found() -> None:
    line = NVSHMEM_CHECK.format(file="/opt/nvshmem/src/host/init/init.cu", line=327, status=7, msg="bootstrap_init failed")
    kind, message, _ = primary("aborting due to error in nvshmemi_init_thread\n" + line + "\n")
    assert kind == "NVSHMEM error"
    assert message.endswith("init.cu:327: non-zero status: 7 bootstrap_init failed")


def _real_exception_text(code: str) -> str:
    """str(e) of the exception real CPython raises for `code` (what KServe's record carries)."""
    proc = subprocess.run([sys.executable, "-c", f"try:\n    {code}\nexcept Exception as e:\n    print(e)"],
                          capture_output=True, text=True, timeout=60, check=True)
    return proc.stdout.strip()


def kserve_record(level: int, msg: str) -> str:
    """A record as KServe's logger prints it: real logging with KServe's format (kserve/logging.py KSERVE_LOGGER_FORMAT,
    KSERVE_LOGGER_DATE_FORMAT), from its model server's __main__.py."""
    formatter = logging.Formatter(KSERVE_FORMAT, datefmt="%Y-%m-%d %H:%M:%S")
    record = logging.LogRecord("kserve", level, "/kserve/huggingfaceserver/__main__.py", 254, msg, None, None,
                               func="<module>")
    return formatter.format(record)


def test_a_wrappers_failed_start_record_is_the_failure_with_the_message_it_carries() -> None:
    said = _real_exception_text("1 % 0")
    warning = ("/prod_venv/lib/python3.10/site-packages/huggingface_hub/file_download.py:1132: FutureWarning: "
               "`resume_download` is deprecated and will be removed in version 1.0.0.\n  warnings.warn(\n")
    kind, message, _ = primary(warning + kserve_record(logging.ERROR, f"Failed to start model server: {said}") + "\n")
    assert kind == "launch failure"
    assert message == said == "integer modulo by zero"


def test_a_sentence_quoting_the_wrappers_record_is_the_failure() -> None:
    said = _real_exception_text("1 % 0")
    kind, message, _ = primary(f"Deploying the model fails with an error: `Failed to start model server: {said}`.\n")
    assert kind == "launch failure"
    assert message == said


@pytest.mark.parametrize("level", [logging.INFO, logging.WARNING])
def test_a_wrappers_normal_start_up_is_no_failure(level: int) -> None:
    record = kserve_record(level, "Registering model: model")
    loading = kserve_record(level, "Failed to load model weights in 1 try, retrying")
    report = diagnose_text(record + "\n" + loading + "\n", OPTIONS)
    assert not report.failures


GLOG_PREFIX = "E{mmdd} {time}.{usec:06d} {tid:>6d} {file}:{line}] "  # glog's LogMessage prefix (severity letter first)


@pytest.mark.parametrize(("file", "line", "said"), [
    # Mooncake's LOG(ERROR) of a failed work completion (worker_pool.cpp: the slice, then ibv_wc_status_str)
    ("worker_pool.cpp", 274, "Worker: Process failed for slice (opcode: 0, source_addr: 0x7efdf3ffd010, length: 404, "
                             "local_nic: mlx5_1, retry_cnt: 0): transport retry counter exceeded"),
    # its PLOG(ERROR) of the RDMA handshake (rdma_endpoint.cpp), strerror(errno) after the message
    ("rdma_endpoint.cpp", 385, "[Handshake] Failed to modify QP to RTR, check mtu, gid, peer lid, peer qp num: "
                               "Connection timed out [110]"),
])
def test_a_transfer_engines_glog_error_record_is_the_failure_of_the_kv_transfer(file: str, line: int, said: str) -> None:
    glog = GLOG_PREFIX.format(mmdd="1213", time="02:57:10", usec=528410, tid=5811, file=file, line=line) + said
    kind, message, category = primary(glog + "\n")
    assert kind == "ERROR"
    assert message == said
    assert category == "network"


def test_a_traceback_in_the_paste_outranks_the_native_line() -> None:
    from tests.helpers import real_traceback

    tb = real_traceback("raise RuntimeError('CUDA error: out of memory')\n")
    line = ucx("ERROR", "cuMemGetAddressRange(0x75e0ba800000) error: invalid device context")
    kind, _, _ = primary(line + "\n" + tb)
    assert kind == "RuntimeError"


def _triton_model_table(rows: list[tuple[str, str, str]]) -> str:
    """Triton's model summary as triton::common::TablePrinter prints it (core src/server.cc PrintBackendAndModelSummary:
    headers Model, Version, Status; a cell padded to its column's width between `| ` and ` |`)."""
    table = [("Model", "Version", "Status"), *rows]
    widths = [max(len(row[column]) for row in table) for column in range(3)]
    rule = "+" + "+".join("-" * (width + 2) for width in widths) + "+"
    lines = [rule]
    for number, row in enumerate(table):
        lines.append("| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + " |")
        if number == 0:
            lines.append(rule)
    return "\n".join([*lines, rule]) + "\n"


def test_tritons_model_table_row_of_a_model_that_did_not_load_is_found_with_its_reason() -> None:
    reason = "Internal: unexpected error when creating modelInstanceState: CUDA runtime error: out of memory"
    table = _triton_model_table([("postprocessing", "1", "READY"), ("vllm_model", "1", f"UNAVAILABLE: {reason}")])
    kind, message, category = primary(table)
    assert kind == "model UNAVAILABLE"
    assert message == reason
    assert category == "gpu-oom"


def test_a_tensorrt_llm_cuda_check_in_tritons_table_is_a_cuda_error() -> None:
    reason = ("Internal: unexpected error when creating modelInstanceState: [TensorRT-LLM][ERROR] CUDA runtime error in "
              "cudaDeviceGetDefaultMemPool(&memPool, device): operation not supported (bufferManager.cpp:170)")
    _, message, category = primary(_triton_model_table([("tensorrt_llm", "1", f"UNAVAILABLE: {reason}")]))
    assert message == reason
    assert category == "cuda-error"


def test_tritons_model_table_with_every_model_ready_is_no_failure() -> None:
    table = _triton_model_table([("postprocessing", "1", "READY"), ("vllm_model", "1", "READY")])
    assert not diagnose_text(table, OPTIONS).failures


def test_a_ucx_error_the_server_came_up_after_was_survived() -> None:
    log = (ucx("ERROR", "cuMemGetAddressRange(0x75e0ba800000) error: invalid device context") + "\n"
           "[2025-06-26 02:04:08] INFO:     Application startup complete.\n"
           "[2025-06-26 02:04:09] The server is fired up and ready to roll!\n")
    assert not diagnose_text(log, OPTIONS).failures
