"""A crash or a kill is filed under the cause the log names before it (issue 28; reasoning/root_cause.py).

The lines are our own text in the shape the printing code writes them: NCCL's `WARN` lines (nccl
src/include/debug.h: `host:pid:tid [dev] file:line NCCL WARN ...`), torch's ProcessGroupNCCL errors, torch's CUDA
error text (c10/cuda/CUDAException.cpp), SGLang's parent notice `Received sigquit from a child process`
(sglang/srt/entrypoints/engine.py) and bash's `Killed`, CPython's faulthandler dump.  The class, a symptom
following its cause, shows in independent threads: sgl-project/sglang#3837 and #5013 (NCCL failures, then a
segfault), sgl-project/sglang#865 (no kernel image, then the process killed), sgl-project/sglang#3573 (NCCL
initialization failing, then a segfault)."""

from __future__ import annotations

import pytest

from logsleuth.models import Diagnosis
from tests.helpers import real_traceback
from tests.reasoning.diagnosed import first_diagnosis

BANNER = "[2025-02-14 07:20:40] server_args=ServerArgs(model_path='/models/m', tp_size=8)\n"
FAULTHANDLER_SEGV = (
    "Fatal Python error: Segmentation fault\n\n"
    "Current thread 0x00007f2a (most recent call first):\n"
    '  File "/usr/local/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py", line 1900 in run_scheduler_process\n'
)
KILL = "[2025-02-14 07:21:44] Received sigquit from a child process. It usually means the child failed.\nKilled\n"

# (expected category, the error lines before the crash, the crash)
CASES = [
    ("nccl",
     "node-a:338:1220 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error\n"
     "node-a:338:1220 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.1.0.2<45321> failed : "
     "Software caused connection abort\n",
     KILL),
    ("nccl",
     "[2025-02-14 07:21:40 TP3] ERROR: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, "
     "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n",
     FAULTHANDLER_SEGV),
    ("gpu-arch-unsupported",
     "[2025-02-14 07:21:40 TP0] ERROR: RuntimeError: CUDA error: no kernel image is available for execution on the "
     "device\n",
     KILL),
    ("gpu-oom",
     "[2025-02-14 07:21:40 TP0] ERROR: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
     "GPU 0 has a total capacity of 79.10 GiB of which 1.20 GiB is free.\n",
     FAULTHANDLER_SEGV),
    ("cuda-error",
     "[2025-02-14 07:21:40 TP0] ERROR: CUDA error: unspecified launch failure\n",
     FAULTHANDLER_SEGV.replace("Segmentation fault", "Aborted")),
    ("host-memory",
     "[2025-02-14 07:21:40] WARNING: Out of memory: Killed process 4242 (sglang::schedu) total-vm:412GB\n",
     "Killed\n"),
    # the GPU itself failing, as the NVIDIA driver's kernel log line pasted with the crash says it (a line with no
    # error word: the scanner keeps Xid lines as context)
    ("cuda-error",
     "[ 8812.123456] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus.\n",
     FAULTHANDLER_SEGV),
]


def _report_of(before: str, crash: str) -> Diagnosis:
    return first_diagnosis(BANNER + "[2025-02-14 07:20:44 TP0] Init torch distributed begin.\n" + before + crash)


@pytest.mark.parametrize(("category", "before", "crash"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_a_crash_after_an_error_that_names_a_cause_is_that_cause(category: str, before: str, crash: str) -> None:
    diagnosis = _report_of(before, crash)
    assert diagnosis.category == category, diagnosis
    assert diagnosis.basis == "general", "the cause's checks are general guidance, not a proven fix"
    first_line = before.splitlines()[0].split("] ", 1)[1]
    assert diagnosis.evidence and first_line in diagnosis.evidence[0], "the line that named the cause is the evidence"
    assert "cascade" in diagnosis.root_cause
    assert diagnosis.fix is not None and diagnosis.fix.steps


@pytest.mark.parametrize("crash", [KILL, FAULTHANDLER_SEGV], ids=["killed", "segfault"])
def test_a_crash_after_lines_that_name_no_cause_stays_what_it_is(crash: str) -> None:
    before = (
        "[2025-02-14 07:21:40 TP0] WARNING: The tokenizer's chat template is not the model's default.\n"
        "node-a:338:1220 [0] NCCL INFO Channel 13/0 : 1[1] -> 2[2] via P2P/IPC\n"
    )
    diagnosis = _report_of(before, crash)
    assert diagnosis.category in ("process-killed", "native-crash"), diagnosis


def _capture_failing_with(inner: str) -> str:
    """SGLang's capture wrapping the RuntimeError it caught (cuda_graph_runner.py `except RuntimeError as e: raise
    Exception(f"Capture cuda graph failed: {e}..."`, 0.4.10.post2 and 0.5.9), raised in a file named like it."""
    return real_traceback(
        f"""
        def forward(batch):
            raise RuntimeError({inner!r})

        def capture():
            try:
                forward(None)
            except RuntimeError as e:
                raise Exception(f"Capture cuda graph failed: {{e}}\\nPossible solutions: disable CUDA graph by --disable-cuda-graph.")

        capture()
        """,
        "sglang/srt/model_executor/cuda_graph_runner.py",
    )


RELEASE = "[2026-03-02 10:00:00] sglang version 0.5.9\n" + BANNER + "python3 -m sglang.launch_server --model-path /models/m\n"


def test_a_capture_failure_wrapping_a_bug_of_the_engines_code_is_an_engine_bug() -> None:
    """When the inner error is a shape error raised by SGLang's own code, the capture is where a bug showed, not
    what failed."""
    inner = "The size of tensor a (64) must match the size of tensor b (128) at non-singleton dimension 1"
    diagnosis = first_diagnosis(RELEASE + _capture_failing_with(inner))
    assert diagnosis.category == "engine-bug", diagnosis
    assert "0.5.9" in diagnosis.title
    assert diagnosis.fix is not None and diagnosis.fix.alternatives, "the capture's own workaround is kept"


def test_a_capture_failure_of_a_cuda_call_stays_a_capture_failure() -> None:
    diagnosis = first_diagnosis(RELEASE + _capture_failing_with("CUDA error: operation not permitted when stream is capturing"))
    assert diagnosis.category == "cuda-graph-capture", diagnosis


def test_a_capture_failure_wrapping_a_distributed_error_is_that_error() -> None:
    """A gloo error inside the capture (the shape of sgl-project/sglang#4205: `Capture cuda graph failed:
    [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer`): the distributed layer failed
    while capturing; the capture is where it showed."""
    inner = "[../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.3]:41022"
    diagnosis = first_diagnosis(RELEASE + _capture_failing_with(inner))
    assert diagnosis.category == "nccl", diagnosis


def test_torchs_hint_on_every_cuda_error_names_no_device_assert() -> None:
    """torch appends "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions." to every CUDA error
    (c10/cuda/CUDAException.cpp): a capture failing on a CUDA call stays a capture failure."""
    inner = ("CUDA error: operation not permitted when stream is capturing\nCUDA kernel errors might be asynchronously "
             "reported at some other API call.\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
    diagnosis = first_diagnosis(RELEASE + _capture_failing_with(inner))
    assert diagnosis.category == "cuda-graph-capture", diagnosis


def test_the_text_to_search_for_is_the_line_that_named_the_cause() -> None:
    """Searching an issue tracker for "Killed" finds nothing of use; the NCCL error before it does."""
    from logsleuth.api import DiagnoseOptions, diagnose_text
    from logsleuth.render import render
    from logsleuth.render.options import OutputFormat, RenderOptions

    before = CASES[0][1]
    report = diagnose_text(BANNER + before + KILL, DiagnoseOptions(include_user_patterns=False))
    text = render(report, RenderOptions(format=OutputFormat.TEXT, width=400))
    searched = text.split("Search for:", 1)[1].strip().splitlines()[0]
    assert "NCCL WARN" in searched and "Killed" not in searched, searched


def test_an_illegal_instruction_is_a_cpu_without_the_instruction_set() -> None:
    """SIGILL kills a process whose prebuilt binary uses an instruction the CPU lacks (AVX2, AVX-512):
    vllm-project/vllm#4542, intel/ipex-llm#12922, zylon-ai/private-gpt#203.  A hardware limit, not a crash to
    debug; CUDA's own "an illegal instruction was encountered" (a kernel fault) is not it."""
    crash = FAULTHANDLER_SEGV.replace("Segmentation fault", "Illegal instruction")
    diagnosis = _report_of("", crash)
    assert diagnosis.category == "gpu-arch-unsupported", diagnosis
    assert "instruction set" in diagnosis.title
    assert diagnosis.fix is not None and any("/proc/cpuinfo" in step for step in diagnosis.fix.steps)
    kernel_fault = _report_of("[2025-02-14 07:21:40 TP0] ERROR: CUDA error: an illegal instruction was encountered\n",
                              FAULTHANDLER_SEGV.replace("Segmentation fault", "Aborted"))
    assert kernel_fault.category == "cuda-error", kernel_fault


# A native signal handler's dump of a crash inside NCCL, in the handlers' own formats: UCX's `Caught signal` and
# `==== backtrace` rows (ucs/debug/debug.c; sgl-project/sglang#3837 pasted the rows without the banner, then
# faulthandler's dump), abseil's failure signal handler as Ray prints it (`PC: @ …  ncclLaunchPrepare()`,
# vllm-project/vllm#15098), gdb's frames of a core (`#0 0x… in … from …/libnccl.so.2`, sgl-project/sglang#2803).
UCX_BANNER = "[node-a:4242:0:4300] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x18)\n"
UCX_ROWS = (
    "==== backtrace (tid:   4300) ====\n"
    " 0 0x0000000000042520 __sigaction()  ???:0\n"
    " 1 0x000000000006a920 SaveProxy()  /build/nccl/src/proxy.cc:518\n"
    " 2 0x000000000006ca3a ncclProxySaveOp()  /build/nccl/src/proxy.cc:546\n"
    " 3 0x0000000000094ac3 start_thread()  ???:0\n"
    "=================================\n"
)
OWN_ROWS = UCX_ROWS.replace("SaveProxy()  /build/nccl/src/proxy.cc:518", "gather_rows()  /src/ext/ops.cc:12").replace(
    "ncclProxySaveOp()  /build/nccl/src/proxy.cc:546", "run_op()  /src/ext/ops.cc:40")
NATIVE_NCCL_CRASHES = {
    "ucx-banner-rows-shell": UCX_BANNER + UCX_ROWS + "Segmentation fault (core dumped)\n",
    "ucx-rows-then-faulthandler": UCX_ROWS + FAULTHANDLER_SEGV,
    "abseil-pc-then-faulthandler": "*** SIGSEGV received at time=1742365186 on cpu 33 ***\n"
                                   "PC: @     0x7f32d184f03d  (unknown)  ncclLaunchPrepare()\n"
                                   "    @     0x7f62fb1b8520  (unknown)  (unknown)\n" + FAULTHANDLER_SEGV,
    "gdb-frames": UCX_BANNER + "#0  0x00007f1a2b3c4d5e in ncclProxyService () from /usr/lib/x86_64-linux-gnu/libnccl.so.2\n"
                  "#1  0x00007f1a2c000000 in start_thread () from /lib/x86_64-linux-gnu/libc.so.6\n",
    "warn-inside-the-dump": UCX_BANNER + "node-a:4242:4301 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
                            "10.1.0.2<45321> failed : Software caused connection abort\n" + OWN_ROWS,
}


@pytest.mark.parametrize("crash", list(NATIVE_NCCL_CRASHES.values()), ids=list(NATIVE_NCCL_CRASHES))
def test_a_segfault_inside_nccl_is_filed_under_nccl_with_the_native_line_as_evidence(crash: str) -> None:
    diagnosis = _report_of("", crash)
    assert diagnosis.category == "nccl", diagnosis
    assert diagnosis.basis == "general"
    assert diagnosis.evidence and "nccl" in diagnosis.evidence[0].lower(), diagnosis.evidence
    assert diagnosis.evidence[0] in crash, "the evidence is the log's own line"


@pytest.mark.parametrize("crash", [UCX_BANNER + OWN_ROWS, OWN_ROWS + FAULTHANDLER_SEGV], ids=["ucx", "rows-then-faulthandler"])
def test_a_segfault_whose_dump_names_no_cause_stays_a_native_crash(crash: str) -> None:
    diagnosis = _report_of("node-a:338:1220 [0] NCCL INFO Channel 13/0 : 1[1] -> 2[2] via P2P/IPC\n", crash)
    assert diagnosis.category == "native-crash", diagnosis


def test_the_shells_illegal_instruction_notice_is_a_cpu_without_the_instruction_set() -> None:
    """bash's `Illegal instruction (core dumped)` is all a paste may show of a SIGILL (vllm-project/vllm#4542's class)."""
    diagnosis = _report_of("", "Illegal instruction (core dumped)\n")
    assert diagnosis.category == "gpu-arch-unsupported" and "instruction set" in diagnosis.title, diagnosis


def test_the_shells_notice_after_a_dump_inside_nccl_is_filed_under_nccl() -> None:
    diagnosis = _report_of("", UCX_ROWS + "Segmentation fault (core dumped)\n")
    assert diagnosis.category == "nccl", diagnosis


# torch's C++ abort of the NCCL watchdog (ProcessGroupNCCL.cpp: the watchdog thread throws c10::DistBackendError,
# libstdc++ prints `terminate called …` and `what():`), then faulthandler's dump of the same process: the shape of
# sgl-project/sglang#10216 and #3424, whose schedulers enable faulthandler.
WATCHDOG_ABORT = (
    "[rank2]:[E909 08:45:31.916910323 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=40231, OpType=ALLREDUCE, NumelIn=17153024, NumelOut=17153024, Timeout(ms)=600000) ran for 600040 "
    "milliseconds before timing out.\n"
    "terminate called after throwing an instance of 'c10::DistBackendError'\n"
    "  what():  [PG ID 0 PG GUID 0 Rank 2] Process group watchdog thread terminated with exception: [Rank 2] Watchdog "
    "caught collective operation timeout: WorkNCCL(SeqNum=40231, OpType=ALLREDUCE, NumelIn=17153024, NumelOut=17153024, "
    "Timeout(ms)=600000) ran for 600040 milliseconds before timing out.\n"
    "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 (most recent call first):\n"
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3b6d41df86 in "
    "/usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)\n"
)


def test_a_crash_right_after_a_failure_that_names_a_cause_is_that_causes_cascade() -> None:
    """The C++ abort is read as a failure of its own, and as a cascade (NCCL errors usually follow another rank's
    death), so faulthandler's `Fatal Python error: Aborted` after it led the report as a native crash: the failure
    before it names its cause, leads the report, and the crash is filed under that cause as its cascade."""
    from logsleuth.api import DiagnoseOptions, diagnose_text

    log = (BANNER + "[2025-02-14 07:20:44 TP0] Init torch distributed begin.\n" + WATCHDOG_ABORT
           + FAULTHANDLER_SEGV.replace("Segmentation fault", "Aborted"))
    groups = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures
    assert [group.failure.final.type for group in groups] == ["c10::DistBackendError", "Fatal Python error"]
    root, crash = (group.diagnosis for group in groups)
    assert root is not None and root.category == "nccl", root
    assert crash is not None and crash.category == "nccl", crash
    assert crash.evidence and "Watchdog caught collective operation timeout" in crash.evidence[0]
    assert "the log names its cause" in crash.root_cause


def test_a_failure_long_before_a_crash_names_no_cause() -> None:
    """An error survived long before (beyond EARLIER_REACH lines) is no cause of a crash."""
    from logsleuth.reasoning.root_cause import EARLIER_REACH

    filler = "".join(f"[2025-02-14 07:21:{i % 60:02d} TP0] Decode batch. #running-req: 1, #token: {i}\n"
                     for i in range(EARLIER_REACH + 10))
    diagnosis = _report_of(WATCHDOG_ABORT + filler, FAULTHANDLER_SEGV)
    assert diagnosis.category == "native-crash", diagnosis


def test_a_bus_error_is_shared_memory_running_full() -> None:
    """The shell's notice of a SIGBUS (bash: `Bus error (core dumped)`) alone: its own words name the cause, a full
    /dev/shm (the tmpfs a container gives 64 MB by default)."""
    diagnosis = _report_of("[2025-02-14 07:20:50 TP0] Load weight begin. avail mem=78.50 GB\n", "Bus error (core dumped)\n")
    assert diagnosis.category == "host-memory", diagnosis
    assert "its own message names its cause" in diagnosis.root_cause
    assert diagnosis.fix is not None and any("/dev/shm" in step for step in diagnosis.fix.steps)
