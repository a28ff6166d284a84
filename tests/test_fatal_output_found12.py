"""Logged failures with no traceback after them that a sweep of users' pastes showed unread (issue 28, stop 43, branch
h-found12).  Lines rebuilt in our own text from the programs' formats (the format strings in their source):

- vLLM's engine core dumping a failed step's input (logging_utils/dump_input.py: `Dumping input data for V1 LLM engine
  (vX) with config: …`) as the last line of a cut paste (vllm-project/vllm#28714, #27904): the engine core died;
- SGLang's disaggregation logging a request whose KV cache handover failed (`Decode transfer failed for request … with
  exception KVTransferError(…): <why>`, sgl-project/sglang#10560, #11648); not a request cancelled upstream
  (`Aborted by AbortReq`, #12688);
- SGLang's router (sgl-router, Rust) giving up on a worker (`Removing failed worker`, #4562; a failed health check,
  #12630; a PD stream that broke, #9266); not its routine records (a pending health check while the workers start,
  #4208, a retried request).

Each is a failure only of a paste that shows no other: with a traceback present, the traceback is the failure."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.tracebacks.grammar import ENGINE_PROCESS_FAILED, ROUTER_WORKER_FAILED
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

VLLM_DUMP = (
    "(EngineCore_DP0 pid=20417) ERROR 03-02 09:14:51 [logging_utils/dump_input.py:72] Dumping input data for V1 LLM "
    "engine (v0.11.1) with config: model='/models/qwen3-8b', speculative_config=None, tokenizer='/models/qwen3-8b', "
    "skip_tokenizer_init=False, tokenizer_mode=auto, dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=2"
)
NPU_DEVICE_ERROR = (
    "EZ9999: [PID: 31877] 2025-11-02-09:41:17.205.611 The error from device(chipId:3, dieId:0), serial number is 5, "
    "there is an aivec error exception, core id is 12, error code = 0, dump info: pc start: 0x12400a1f0000, current: "
    "0x12400a1f07c4.[FUNC:ProcessStarsCoreErrorInfo][FILE:device_error_proc.cc][LINE:1434]"
)
VLLM_HEALTHY = [
    "(APIServer pid=20301) INFO 03-02 09:14:40 [loggers.py:127] Engine 000: Avg prompt throughput: 812.4 tokens/s, "
    "Avg generation throughput: 96.0 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.1%",
    '(APIServer pid=20301) INFO:     127.0.0.1:51824 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
]


@pytest.mark.parametrize("prefix", ["", "vllm-qwen  | "])
def test_vllms_input_dump_as_the_last_line_of_a_cut_paste_says_the_engine_core_died(prefix: str) -> None:
    log = "\n".join(prefix + line for line in [*VLLM_HEALTHY, VLLM_DUMP]) + "\n"
    kind, message, _ = primary(log)
    assert kind == ENGINE_PROCESS_FAILED
    assert message == "Dumping input data for V1 LLM engine (v0.11.1)"


@pytest.mark.parametrize("logged", ["vllm-dump", "router", "pd-transfer", "npu-device-error"])
def test_a_traceback_beside_such_a_line_stays_the_failure(logged: str) -> None:
    line = {"vllm-dump": VLLM_DUMP, "router": ROUTER_FAILED_LINES[0], "npu-device-error": NPU_DEVICE_ERROR,
            "pd-transfer": _decode_transfer_failed(0, 18, "Failed due to an unknown reason from another rank")}[logged]
    printed = real_traceback("""
        def execute_model():
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

        execute_model()
    """)
    assert primary(line + "\n" + printed)[:2] == ("RuntimeError", "CUDA error: an illegal memory access was encountered")


def test_a_healthy_vllm_log_stays_no_failure() -> None:
    assert not diagnose_text("\n".join(VLLM_HEALTHY) + "\n", OPTIONS).failures


def _decode_transfer_failed(rank: int, room: int, reason: str) -> str:
    return (f"[2025-10-02 11:20:07 DP{rank} TP{rank}] Decode transfer failed for request rank={rank} "
            f"decode_req.req.rid='5f0c2a9e81d34b7f9a0e6c1d2b3a4f50' decode_req.req.bootstrap_room={room} "
            f"with exception KVTransferError(bootstrap_room={room}): {reason}")


@pytest.mark.parametrize("reason", [
    "Request 6402113857120019931 timed out after 300.0s in KVPoll.WaitingForInput",
    "Failed due to an unknown reason from another rank",
])
def test_a_logged_pd_transfer_failure_is_that_requests_failure(reason: str) -> None:
    log = "\n".join([
        '[2025-10-02 11:20:01] INFO:     10.0.3.7:40116 - "GET /health HTTP/1.1" 200 OK',
        _decode_transfer_failed(0, 6402113857120019931, reason),
        '[2025-10-02 11:20:09] INFO:     10.0.3.7:40122 - "GET /health HTTP/1.1" 200 OK',
    ]) + "\n"
    kind, message, category = primary(log)
    assert kind == "KVTransferError"
    assert message.endswith(reason)
    assert category == "network"


def test_a_prefill_bootstrap_failure_is_read_too() -> None:
    line = ("[2025-10-02 11:20:07 TP3] Prefill bootstrap failed for request rank=3 req.rid='0a9c' "
            "req.bootstrap_room=18 with exception KVTransferError(bootstrap_room=18): Failed to get kvcache from decode")
    assert primary(line + "\n")[0] == "KVTransferError"


def test_a_request_cancelled_upstream_is_no_transfer_failure() -> None:
    # the look-alike: SGLang logs the same line for a request the client or the router aborted (#12688)
    log = "\n".join([
        "[2025-11-05 16:35:02] The server is fired up and ready to roll!",
        _decode_transfer_failed(0, 4793981895866140836, "Aborted by AbortReq."),
        _decode_transfer_failed(1, 4793981895866140836, "Aborted by AbortReq."),
    ]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures


ROUTER_FAILED_LINES = [
    "[Router (Rust)] 2025-04-11 10:02:44 - WARN - Removing failed worker: http://10.0.0.5:30001",
    "2025-10-20 08:41:13  WARN sglang_router_rs::core::worker: src/core/worker.rs:601: HTTP health check failed for "
    "http://10.0.0.6:31000: reqwest::Error { kind: Request, url: \"http://10.0.0.6:31000/health\", source: "
    "hyper_util::client::legacy::Error(Connect, ConnectError(\"tcp connect error\", Os { code: 111, kind: "
    "ConnectionRefused, message: \"Connection refused\" })) }",
    "2025-09-03 12:10:55 ERROR sglang_router_rs::routers::http::pd_router: src/routers/http/pd_router.rs:1290: Stream "
    "error from decode server http://10.0.0.7:30000: error decoding response body",
]


@pytest.mark.parametrize("line", ROUTER_FAILED_LINES)
def test_the_router_giving_up_on_a_worker_is_a_router_failure(line: str) -> None:
    log = "\n".join([
        "[Router (Rust)] 2025-04-11 10:02:44 - WARN - Generate request to http://10.0.0.5:30001 failed (attempt 1/3)",
        "[Router (Rust)] 2025-04-11 10:02:44 - INFO - Retrying request after 1 failed attempts",
        line,
    ]) + "\n"
    kind, _, category = primary(log)
    assert kind == ROUTER_WORKER_FAILED
    assert category == "router"


def test_the_routers_routine_records_stay_no_failure() -> None:
    # the look-alike: workers still starting (the router polls their health, #4208), a request retried once
    log = "\n".join([
        "[Router (Rust)] 2025-03-08 02:33:09 - INFO - Worker http://0.0.0.0:31000 health check is pending with error: "
        "error sending request for url (http://0.0.0.0:31000/health)",
        "[Router (Rust)] 2025-04-11 10:02:44 - INFO - Retrying request after 1 failed attempts",
        "[Router (Rust)] 2025-04-11 10:02:45 - INFO - All workers are healthy",
    ]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures


def test_another_programs_removed_worker_is_not_the_routers() -> None:
    # the same words from a program that is not SGLang's router name no router failure
    assert not diagnose_text("[pool] Removing failed worker: w-17 (restarting it)\n", OPTIONS).failures


# -- torch's NCCL watchdog record names the exception torch builds from it (ProcessGroupNCCL.cpp) ----------------------

WATCHDOG_RECORD = ("[rank6]:[E1105 08:12:40.118230417 ProcessGroupNCCL.cpp:632] [Rank 6] Watchdog caught collective operation "
                   "timeout: WorkNCCL(SeqNum=4120, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
                   "600092 milliseconds before timing out.")


@pytest.mark.parametrize("exit_record", [False, True])
def test_the_nccl_watchdogs_timeout_record_is_named_by_its_exception_not_its_level(exit_record: bool) -> None:
    # OpenRLHF/OpenRLHF#1126: the rank's E record, cut before torch's `terminate called after throwing …`; the
    # watchdog's exit record quotes the same text as the what() of the exception it terminates with
    record = WATCHDOG_RECORD
    if exit_record:
        head, _, said = WATCHDOG_RECORD.partition("] ")
        record = f"{head}] [PG ID 0 PG GUID 0(default_pg) Rank 6] Process group watchdog thread terminated with exception: {said}"
    kind, message, category = primary(record + "\n")
    assert kind == "c10::DistBackendError"
    assert "[Rank 6] Watchdog caught collective operation timeout" in message
    assert category == "nccl"


def test_another_glog_error_record_still_names_only_its_level() -> None:
    # the look-alike: a library's E record that builds no exception of its own (Mooncake's RDMA context, sglang#8324)
    line = "E0724 03:14:20.707079 104002 rdma_context.cpp:261] Context is not active: mlx5_bond_2"
    assert primary(line + "\n")[:2] == ("ERROR", "Context is not active: mlx5_bond_2")


# -- Ascend CANN's EZ9999 record of a kernel's device-side error (sgl-project/sglang#12464, vllm-project/vllm-ascend#1972)


def test_canns_device_error_record_is_the_failure_of_a_cut_paste() -> None:
    log = "\n".join([
        "[rank3]:[W1102 09:41:18.206114431 compiler_depend.ts:57] Warning: EZ9999: Inner Error!",
        NPU_DEVICE_ERROR,
        "        TraceBack (most recent call last):",
        "       Kernel task happen error, retCode=0x31, [vector core exception].[FUNC:PreCheckTaskErr]"
        "[FILE:davinci_kernel_task.cc][LINE:1539]",
    ]) + "\n"
    kind, message, _ = primary(log)
    assert kind == "EZ9999"
    assert message.startswith("The error from device(chipId:3, dieId:0)") and message.endswith("aivec error exception")


def test_another_ez9999_record_is_no_device_error() -> None:
    # the look-alike: CANN's EZ9999 records of other kinds (a kernel's config it could not parse) are no device error
    line = "EZ9999: [PID: 5625] 2025-09-19-14:34:08.166.059 Parse dynamic kernel config fail."
    assert all(group.failure.final.type != "EZ9999" for group in diagnose_text(line + "\n", OPTIONS).failures)
