"""Error lines a reader points at that logsleuth did not find (issue 28, stop 57, branch found21), each read as its
class.  Lines rebuilt in our own words from the printing code's format:

- an engine's ERROR record naming the error it logs the traceback of, the header of that traceback cut mid-word where
  the paste ends (vLLM's worker_base.py `logger.exception("Error executing method …. This might cause deadlock in
  distributed execution.")`; vllm-project/vllm#11260);
- Ray's autoscaler's error event as the driver prints it, `(autoscaler +Ns) Error: No available node types can fulfill
  resource request {…}. Add suitable node types to this cluster to resolve this issue.`
  (ray/autoscaler/_private/resource_demand_scheduler.py; vllm-project/vllm#14186, #13388), then the engine's wait on
  its placement group;
- a GPU math library's own fatal line on ROCm, no Python exception: rocBLAS's `rocBLAS error: Cannot read
  <path>/TensileLibrary.dat: <strerror> for GPU arch : <gfx>` and its list of arch files (library/src/tensile_host.cpp;
  vllm-project/vllm#28460, ROCm/ROCm#4625), MIOpen's `MIOpen Error: <file>:<line>: <message>` (errors.hpp try_);
- a rendezvous that never completed: torch's c10d `The server socket on <addr> has timed out, will retry.` again and
  again (socket.cpp SocketConnectOp::tryConnectCore), then the user's Ctrl-C, TCPStore's retry warning quoting the
  interrupted call and the c10::Error's backtrace (vllm-project/vllm-metal#58, #625);
- a c10::Error's what() printed with no Python exception: its message on the line above `Exception raised from F at
  FILE:LINE (most recent call first):` and the `frame #N:` rows (c10/util/Exception.cpp Error::compute_what;
  vllm-project/vllm-ascend#2720)."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.ingest.line_shapes import TRACEBACK_HEADER
from tests.test_fatal_output_shapes import OPTIONS, primary

_WORKER = "(RayWorkerWrapper pid=4102, ip=10.1.2.3) "
_STAMP = "ERROR 05-11 08:02:17 worker_base.py:467] "
_DEADLOCK = "Error executing method load_model. This might cause deadlock in distributed execution."


@pytest.mark.parametrize("kept", [len("Traceback ("), len("Traceback (mos"), len(TRACEBACK_HEADER) - 1,
                                  len(TRACEBACK_HEADER)])
def test_an_error_record_above_a_traceback_header_the_paste_cut_is_the_failure(kept: int) -> None:
    log = "\n".join([
        f"{_WORKER}INFO 05-11 08:02:15 selector.py:163] Using Pallas backend.",
        f"{_WORKER}{_STAMP}{_DEADLOCK}",
        f"{_WORKER}{_STAMP}{TRACEBACK_HEADER[:kept]}",
    ]) + "\n"
    exc_type, message, _ = primary(log)
    assert message == _DEADLOCK
    assert exc_type == "ERROR"


def test_a_cut_header_under_an_info_record_stays_no_failure() -> None:
    log = "\n".join([
        "INFO 05-11 08:02:15 selector.py:163] Using Pallas backend.",
        "INFO 05-11 08:02:16 model_runner.py:1072] Loading model weights took 1.2 GB",
        "Traceback (mos",
    ]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures


_RAY_DRIVER = [
    "2025-06-01 10:00:01,100 INFO worker.py:1636 -- Connecting to existing Ray cluster at address: 192.168.7.2:6379...",
    "2025-06-01 10:00:01,120 INFO worker.py:1821 -- Connected to Ray cluster.",
    "(autoscaler +9s) Tip: use `ray status` to view detailed cluster status. To disable these messages, set "
    "RAY_SCHEDULER_EVENTS=0.",
]
_UNPLACEABLE = ("No available node types can fulfill resource request {'node:203.0.113.9': 0.001, 'GPU': 1.0}. "
                "Add suitable node types to this cluster to resolve this issue.")
_PG_WAIT = ("INFO 06-01 10:00:12 ray_utils.py:221] Waiting for creating a placement group of specs for 10 seconds. "
            "specs=[{'node:203.0.113.9': 0.001, 'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status` to see if you have "
            "enough resources.")


def test_ray_autoscaler_s_error_event_before_the_placement_group_wait_is_the_failure() -> None:
    log = "\n".join([*_RAY_DRIVER, f"(autoscaler +9s) Error: {_UNPLACEABLE}", _PG_WAIT]) + "\n"
    exc_type, message, category = primary(log)
    assert (exc_type, message, category) == ("Ray autoscaler error", _UNPLACEABLE, "orchestration")


@pytest.mark.parametrize("lines", [
    # the autoscaler's warning of a request that may yet fit
    [*_RAY_DRIVER, "(autoscaler +9s) Warning: The following resource request cannot be scheduled right now: "
                   "{'GPU': 1.0, 'CPU': 1.0}. This is likely due to all cluster resources being claimed by actors.",
     _PG_WAIT],
    # the error event, then the cluster placed the request and the server came up
    [*_RAY_DRIVER, f"(autoscaler +9s) Error: {_UNPLACEABLE}", _PG_WAIT,
     "INFO 06-01 10:01:40 api_server.py:937] Starting vLLM API server on http://0.0.0.0:8000",
     "INFO:     Application startup complete."],
])
def test_ray_autoscaler_lines_a_run_got_past_stay_no_failure(lines: list[str]) -> None:
    assert not diagnose_text("\n".join(lines) + "\n", OPTIONS).failures


_LOADED = [
    "(EngineCore_DP0 pid=88) INFO 02-03 11:20:05 [gpu_model_runner.py:3120] Model loading took 7.2 GiB memory",
    "(EngineCore_DP0 pid=88) INFO 02-03 11:20:40 [backends.py:281] Compiling a graph for dynamic shape takes 30.2 s",
    "",
]
_NO_TENSILE = ("Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory "
               "for GPU arch : gfx1036")
_ARCH_FILES = [" List of available TensileLibrary Files : ",
               '"/opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1100.dat"',
               '"/opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx942.dat"']


def test_rocblas_without_the_gpu_s_tensile_library_is_the_failure_after_an_engine_record() -> None:
    log = "\n".join([*_LOADED, f"rocBLAS error: {_NO_TENSILE}", *_ARCH_FILES]) + "\n"
    assert primary(log) == ("rocBLAS error", _NO_TENSILE, "gpu-arch-unsupported")


def test_miopen_s_own_error_line_alone_is_the_failure() -> None:
    said = "/MIOpen/src/hipoc/hipoc_program.cpp:299: Code object build failed. Source: MIOpenBatchNormFwdTrainSpatialHIP.cpp"
    exc_type, message, _ = primary("\n".join([*_LOADED, f"MIOpen Error: {said}"]) + "\n")
    assert (exc_type, message) == ("MIOpen error", said)


@pytest.mark.parametrize("lines", [
    # rocBLAS's warnings, and hipBLASLt's line while rocBLAS falls back to Tensile: a healthy run's
    [*_LOADED, "rocBLAS warning: No paths matched /opt/rocm/lib/rocblas/library/*gfx1100*co. Make sure that "
               "ROCBLAS_TENSILE_LIBPATH is set correctly.", "hipBLASLt error: algo not supported."],
    # the line quoted inside an engine's own INFO record
    [*_LOADED[:2], f"(EngineCore_DP0 pid=88) INFO 02-03 11:20:41 [probe.py:12] rocBLAS error: {_NO_TENSILE}"],
    # the library's line, then the server came up
    [*_LOADED, f"rocBLAS error: {_NO_TENSILE}", "INFO:     Application startup complete."],
])
def test_gpu_library_lines_a_run_got_past_stay_no_failure(lines: list[str]) -> None:
    assert not diagnose_text("\n".join(lines) + "\n", OPTIONS).failures


def _socket_timeout(minute: int) -> str:
    return (f"[W311 09:{minute:02d}:10.120000000 socket.cpp:942] [c10d] The server socket on "
            "[::ffff:172.31.9.4]:41235 has timed out, will retry.")


_INTERRUPTED = [
    "^C[W311 09:05:02.000000000 TCPStore.cpp:347] [c10d] TCP client failed to connect/validate to host "
    "172.31.9.4:41235 - retrying (try=0, timeout=1800000ms, delay=900ms): Interrupted system call",
    "Exception raised from tryConnect at /pytorch/torch/csrc/distributed/c10d/socket.cpp:928 (most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 56 (0x1049 in libc10.dylib)",
    "frame #1: c10d::detail::(anonymous namespace)::SocketConnectOp::tryConnect(int) + 3932 (0x14e0 in libtorch_cpu.dylib)",
]
_HANG = "The server socket on [::ffff:172.31.9.4]:41235 has timed out, will retry."


@pytest.mark.parametrize("after", [_INTERRUPTED, ["^C", "KeyboardInterrupt"]])
def test_store_timeouts_until_the_user_s_interrupt_are_a_rendezvous_hang(after: list[str]) -> None:
    log = "\n".join(["INFO 03-11 09:01:00 [__init__.py:220] Automatically detected platform cpu.",
                     _socket_timeout(2), _socket_timeout(3), _socket_timeout(4), *after]) + "\n"
    assert primary(log) == ("rendezvous hang", _HANG, "network")


@pytest.mark.parametrize("lines", [
    # the paste stops in the wait: a start still waiting (the start-up notice's), no statement that it hung
    [_socket_timeout(2), _socket_timeout(3)],
    # one timeout: a store that came up late
    [_socket_timeout(2), *_INTERRUPTED],
    # the start went on after the timeouts
    [_socket_timeout(2), _socket_timeout(3),
     "INFO 03-11 09:04:00 [default_loader.py:262] Loading weights took 3.10 seconds", *_INTERRUPTED[:1]],
    [_socket_timeout(2), _socket_timeout(3), "INFO:     Application startup complete.", "^C"],
])
def test_store_timeouts_a_start_got_past_or_still_waits_on_stay_no_failure(lines: list[str]) -> None:
    assert not diagnose_text("\n".join(lines) + "\n", OPTIONS).failures


_C10_BACKTRACE = [
    "Exception raised from OperationSetup at build/op_plugin/atb/compiler_depend.ts:151 (most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0xd4 (0xffff8c4e3ea4 in /opt/torch/lib/libc10.so)",
    "frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) + 0xe4 "
    "(0xffff8c483e10 in /opt/torch/lib/libc10.so)",
]
_COMPILED = "INFO 04-02 08:11:18 [backends.py:215] Compiling a graph for dynamic shape takes 2.05 s"


def test_a_c10_error_s_message_above_its_backtrace_is_the_failure() -> None:
    log = "\n".join([_COMPILED, "GatherOperation setup failed!", *_C10_BACKTRACE]) + "\n"
    exc_type, message, _ = primary(log)
    assert (exc_type, message) == ("c10::Error", "GatherOperation setup failed!")


@pytest.mark.parametrize("above", [
    # TCPStore's retry warning, which prints a caught c10::Error's what() on every retry
    "[W402 08:11:20.000000000 TCPStore.cpp:347] [c10d] TCP client failed to connect/validate to host 10.0.0.5:29500 "
    "- retrying (try=0, timeout=600000ms, delay=500ms): The client socket has failed to connect to 10.0.0.5:29500 "
    "(errno: 111 - Connection refused).",
    # a warning's words, a retry in the line's own words, an INFO record of its own
    "[W402 08:11:20.000000000 ProcessGroupGloo.cpp:715] Warning: Unable to resolve hostname to a (local) address.",
    "Kernel autotune probe failed, retrying with the default config",
    "INFO 04-02 08:11:20 [probe.py:40] optional fused kernel probe returned an error",
])
def test_a_backtrace_under_a_warning_or_a_retry_stays_no_failure(above: str) -> None:
    log = "\n".join([_COMPILED, above, *_C10_BACKTRACE]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures


def test_a_c10_error_the_server_came_up_after_stays_no_failure() -> None:
    log = "\n".join([_COMPILED, "GatherOperation setup failed!", *_C10_BACKTRACE,
                     "INFO:     Application startup complete."]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures


_WORKER_LOADED = [
    f"{_WORKER}INFO 06-01 10:01:02 selector.py:135] Using Flash Attention backend.",
    f"{_WORKER}INFO 06-01 10:01:05 model_runner.py:1060] Starting to load model /models/llama-70b...",
    f"{_WORKER}INFO 06-01 10:01:50 model_runner.py:1071] Loading model weights took 16.5 GB",
]


@pytest.mark.parametrize("lines", [
    # the unplaceable request's event, then the workers started and loaded the weights: the placement group was
    # created, the paste ends mid-start
    [*_RAY_DRIVER, f"(autoscaler +9s) Error: {_UNPLACEABLE}", _PG_WAIT, *_WORKER_LOADED],
    # the autoscaler's other error events (a node launch the cloud refused, retried): not the row's event
    [*_RAY_DRIVER, "(autoscaler +12s) Error: Failed to launch 2 node(s) of type gpu-a100. (InsufficientInstanceCapacity): "
                   "We currently do not have sufficient capacity in the Availability Zone you requested.", _PG_WAIT],
])
def test_ray_autoscaler_errors_a_start_went_on_after_or_that_are_no_placement_stay_no_failure(lines: list[str]) -> None:
    assert not diagnose_text("\n".join(lines) + "\n", OPTIONS).failures


_KV_AND_GRAPHS = [
    "INFO 04-02 08:11:30 [kv_cache_utils.py:716] GPU KV cache size: 1,000,000 tokens",
    "INFO 04-02 08:11:40 [gpu_model_runner.py:2000] Graph capturing finished in 12 secs, took 0.50 GiB",
]
_NCCL_WHAT = [
    "NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error (run with "
    "NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
    "ncclUnhandledCudaError: Call to CUDA function failed.",
    "Last error:",
    "Cuda failure 'peer access is not supported between these two devices'",
    "Exception raised from getNCCLComm at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1234 (most recent "
    "call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f01 in /opt/torch/lib/libc10.so)",
]
_PROBE_WARNING = ("WARNING 04-02 08:11:18 [custom_all_reduce.py:133] Custom allreduce probe could not open the "
                  "peer-to-peer channel, using NCCL: ")


def test_a_c10_error_s_message_is_the_first_line_of_its_what() -> None:
    exc_type, message, _ = primary("\n".join([_COMPILED, *_NCCL_WHAT]) + "\n")
    assert (exc_type, message) == ("c10::Error", _NCCL_WHAT[0])


@pytest.mark.parametrize("lines", [
    # a what() of several lines logged as a WARNING record's continuation: caught, the run went on (the paste ends
    # there)
    [_COMPILED, _PROBE_WARNING + _NCCL_WHAT[0], *_NCCL_WHAT[1:]],
    # under a c10 `[W…]` record
    [_COMPILED, "[W402 08:11:18.000000000 ProcessGroupNCCL.cpp:1500] " + _NCCL_WHAT[0], *_NCCL_WHAT[1:]],
    # printed as native output, then the start went on (the KV cache sized, the graphs captured)
    [_COMPILED, "GatherOperation setup failed!", *_C10_BACKTRACE, *_KV_AND_GRAPHS],
])
def test_a_c10_block_under_a_warning_or_a_start_went_on_after_stays_no_failure(lines: list[str]) -> None:
    assert not diagnose_text("\n".join(lines) + "\n", OPTIONS).failures


def test_miopen_s_line_a_start_went_on_after_stays_no_failure() -> None:
    log = "\n".join([*_LOADED, "MIOpen Error: /MIOpen/src/sqlite_db.cpp:220: Internal error while accessing SQLite "
                               "database: attempt to write a readonly database", *_KV_AND_GRAPHS]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures


def test_the_unstamped_line_s_failure_takes_no_time_from_a_record_above() -> None:
    log = "\n".join([*_RAY_DRIVER, _PG_WAIT, f"(autoscaler +9s) Error: {_UNPLACEABLE}"]) + "\n"
    (failure,) = diagnose_text(log, OPTIONS).failures
    assert failure.failure.meta.timestamp is None


def test_a_healthy_offline_run_with_the_new_shapes_survived_stays_no_failure() -> None:
    """An offline run (no API server, so no readiness line) that went on to generate, whose log carries each new
    shape where a run goes on after it: Ray's autoscaler event before the request was placed, MIOpen's line, a
    c10::Error's what() under a WARNING record, a traceback header cut mid-log, and the look-alikes (the autoscaler's
    warning, rocBLAS's warning, hipBLASLt's fallback line, one store timeout)."""
    log = "\n".join([
        *_RAY_DRIVER,
        "(autoscaler +4s) Warning: The following resource request cannot be scheduled right now: {'GPU': 1.0}.",
        f"(autoscaler +9s) Error: {_UNPLACEABLE}",
        _PG_WAIT,
        _socket_timeout(0),
        *_WORKER_LOADED,
        "rocBLAS warning: No paths matched /opt/rocm/lib/rocblas/library/*gfx942*co. Make sure that "
        "ROCBLAS_TENSILE_LIBPATH is set correctly.",
        "hipBLASLt error: algo not supported.",
        "MIOpen Error: /MIOpen/src/sqlite_db.cpp:220: Internal error while accessing SQLite database: attempt to write "
        "a readonly database",
        _PROBE_WARNING + _NCCL_WHAT[0], *_NCCL_WHAT[1:],
        "Traceback (mos",
        *_KV_AND_GRAPHS,
        "Processed prompts: 100%|##########| 8/8 [00:03<00:00,  2.41it/s, est. speed input: 31.2 toks/s]",
        "Prompt: 'Hello, my name is', Generated text: ' Ana and I write'",
    ]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures


def test_a_rendezvous_hang_s_checks_place_the_store_on_rank_0_s_host() -> None:
    """The timeouts are printed by a client and name the store's address (rank 0's host): a node of rank 1 never
    finds it among its own interfaces, and its loopback address reaches no other node."""
    log = "\n".join([
        "[2025-03-11 09:01:00] server_args=ServerArgs(model_path='/models/qwen-7b', tp_size=2, nnodes=2, node_rank=1, "
        "dist_init_addr='172.31.9.4:41235')",
        _socket_timeout(2), _socket_timeout(3), _socket_timeout(4), "^C", "KeyboardInterrupt",
    ]) + "\n"
    (group,) = diagnose_text(log, OPTIONS).failures
    assert group.diagnosis is not None and group.diagnosis.fix is not None
    steps = group.diagnosis.fix.steps
    assert any("the host that runs rank 0" in step for step in steps)
    assert any("--dist-init-addr" in step for step in steps)
    assert not any("interface of this host" in step or "127.0.0.1 always answers" in step and "Only when" not in step
                   for step in steps)
