"""Fatal output that is not a Python exception becomes a failure of its own kind.

The C++ abort is real output of the C++ runtime (a program compiled here with g++ that throws); the other
lines are composed from the format strings in the projects that print them (flashinfer's CUDA_CALL macro,
SGLang's scheduler watchdog, uvicorn's server startup)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from logsleuth.ingest.normalize import normalize_text
from logsleuth.tracebacks.scanner import scan

CPP = r"""
#include <stdexcept>
int main() {
    throw std::runtime_error(
        "CUDA error: an illegal memory access was encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
        "\n"
        "Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43 (most recent call first):\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f00 in libc10.so)\n");
}
"""


@pytest.fixture(scope="module")
def cpp_abort(tmp_path_factory: pytest.TempPathFactory) -> str:
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("g++ not installed")
    directory = tmp_path_factory.mktemp("cpp")
    (directory / "abort.cpp").write_text(CPP)
    subprocess.run([compiler, "-o", str(directory / "abort"), str(directory / "abort.cpp")], check=True)
    result = subprocess.run([str(directory / "abort")], capture_output=True, text=True)
    assert result.returncode != 0 and "terminate called after throwing" in result.stderr
    return result.stderr


def test_a_cpp_abort_is_one_failure_with_its_what_text(cpp_abort: str) -> None:
    log = "[2026-01-01 00:00:00 TP0] Load weight end.\n" + cpp_abort + "Fatal: the scheduler died\n"
    failures = scan(normalize_text(log))
    (failure,) = [f for f in failures if f.kind == "abort"]
    assert failure.final.type == "std::runtime_error"
    assert failure.final.message.splitlines() == [
        "CUDA error: an illegal memory access was encountered",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    ]


FLASHINFER = (
    "CUDA Error: an illegal memory access was encountered (700) "
    "/opt/flashinfer/include/flashinfer/attention/prefill.cuh: line 2287 at function cudaLaunchKernel(...)"
)


@pytest.mark.parametrize(
    ("line", "kind", "type_", "message"),
    [
        (FLASHINFER, "line", "CUDA Error", FLASHINFER.split(": ", 1)[1]),
        ("[2026-01-01 00:05:00 TP3] Watchdog timeout (self.watchdog_timeout=300)", "line", "Watchdog timeout",
         "self.watchdog_timeout=300"),
        ("[2026-01-01 00:05:00] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)", "line",
         "Scheduler watchdog timeout", "self.watchdog_timeout=300, self.soft=False"),
        ("ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use",
         "line", "OSError", "[Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use"),
    ],
)
def test_a_fatal_line_is_a_failure(line: str, kind: str, type_: str, message: str) -> None:
    failures = scan(normalize_text(f"[2026-01-01 00:00:00] Load weight begin.\n{line}\n[2026-01-01 00:06:00] other\n"))
    assert [(f.kind, f.final.type, f.final.message) for f in failures] == [(kind, type_, message)]


def test_a_kernel_print_before_the_exception_it_caused_is_its_context() -> None:
    """flashinfer prints `CUDA Error: … (700)` and then raises: one failure, the print in its context."""
    import traceback

    try:
        raise RuntimeError("BatchPrefillWithPagedKVCache failed with error an illegal memory access was encountered")
    except RuntimeError as exc:
        formatted = "".join(traceback.format_exception(exc))
    failures = scan(normalize_text(f"{FLASHINFER}\n{formatted}"))
    assert len(failures) == 1
    assert failures[0].final.type == "RuntimeError"
    assert failures[0].context[-1] == FLASHINFER


def test_the_same_words_inside_a_traceback_message_start_nothing() -> None:
    import traceback

    try:
        raise RuntimeError("launch failed\nCUDA Error: an illegal memory access was encountered (700) x.cuh: line 1")
    except RuntimeError as exc:
        formatted = "".join(traceback.format_exception(exc))
    failures = scan(normalize_text(formatted))
    assert [f.kind for f in failures] == ["traceback"]


def test_plain_log_lines_about_timeouts_are_not_failures(tmp_path: Path) -> None:
    log = (
        "[2026-01-01 00:00:00] The watchdog timeout is set to 300 s\n"
        "[2026-01-01 00:00:01] error: none\n"
        "INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)\n"
    )
    assert scan(normalize_text(log)) == []


# The error bodies are built as the servers build them (an OpenAI-style ErrorResponse serialized to JSON), with
# an engine error as the message, and pasted after the client's command.
OOM = "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free."


@pytest.mark.parametrize(
    "body",
    [
        {"object": "error", "message": OOM, "type": "InternalServerError", "param": None, "code": 500},
        {"error": {"message": OOM, "type": "InternalServerError", "param": None, "code": 500}},
    ],
)
def test_a_servers_json_error_body_keeps_the_engines_message(body: dict[str, object]) -> None:
    import json

    text = "$ curl -s http://127.0.0.1:30000/v1/completions -d @req.json\n" + json.dumps(body) + "\n"
    (failure,) = scan(normalize_text(text))
    assert (failure.final.type, failure.final.message) == ("InternalServerError", OOM)


@pytest.mark.parametrize(
    "line",
    [
        '{"message": "Server started", "level": "error-free"}',  # JSON that is not an error body
        '{"object": "error", "message": "CUDA out of mem',  # a body cut off in the paste
    ],
)
def test_json_that_is_not_a_whole_error_body_is_no_failure(line: str) -> None:
    assert [f for f in scan(normalize_text(line + "\n")) if f.kind == "line"] == []
