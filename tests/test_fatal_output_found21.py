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


def test_a_healthy_server_log_with_error_looking_lines_stays_no_failure() -> None:
    """A server that came up and served, whose log carries every new shape's look-alikes: per-request ERROR records,
    benign warnings of the libraries, one store timeout before the store came up."""
    log = "\n".join([
        "INFO 07-09 14:00:01 [api_server.py:1090] vLLM API server version 0.9.2",
        "(autoscaler +4s) Warning: The following resource request cannot be scheduled right now: {'GPU': 1.0}.",
        _socket_timeout(0),
        "rocBLAS warning: No paths matched /opt/rocm/lib/rocblas/library/*gfx942*co. Make sure that "
        "ROCBLAS_TENSILE_LIBPATH is set correctly.",
        "hipBLASLt error: algo not supported.",
        "INFO 07-09 14:01:10 [gpu_model_runner.py:1770] Model loading took 14.99 GiB and 40.1 seconds",
        "INFO:     Started server process [4242]",
        "INFO:     Application startup complete.",
        "ERROR 07-09 14:02:00 [serving_chat.py:215] Error in preprocessing prompt inputs",
        "INFO:     10.0.0.9:51234 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request",
        "INFO:     10.0.0.9:51236 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
    ]) + "\n"
    assert not diagnose_text(log, OPTIONS).failures
