"""Lines no Python traceback prints, composed from the formats of the programs that print them.

C++ aborts (libstdc++'s `terminate called after throwing an instance of 'T'` + torch's what()
with its `Exception raised from ...` and `frame #N:` backtrace), torch's glog lines
(`[rank1]:[E210 02:06:33.347835395 ProcessGroupNCCL.cpp:1595] ...`), flashinfer's
`CUDA Error: ... (700) <file>: line N at function ...`, py-spy dumps, NCCL INFO lines, bash's
job notice for a killed command, vLLM's platform line.  The message texts are the engines' own
wording (mined facts); addresses and ids are made up and fixed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

TORCH_LIB = "/usr/local/lib/python3.11/dist-packages/torch/lib"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"

CUDA_CHECK_SUFFIX = (
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)


def cuda_error(text: str, help_line: str = "") -> str:
    """torch's message for a failed CUDA call: `CUDA error: <text>`, torch >= 2.8's `Search for ...`
    line when `help_line` names the cudaError, then the asynchronous-report suffix."""
    search = f"Search for `{help_line}' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\n" if help_line else ""
    return f"CUDA error: {text}\n{search}{CUDA_CHECK_SUFFIX}"


def backtrace(frames: Sequence[tuple[str, str]], base: int = 0x7F8416D6C1B6) -> str:
    """`frame #N: <symbol> + 0x.. (0x.. in <library>)` lines, one per (symbol, library)."""
    lines = []
    for number, (symbol, library) in enumerate(frames):
        offset = 0x40 + 0x1F * (number * 7 % 13)
        lines.append(f"frame #{number}: {symbol} + {offset:#x} ({base + 0x9A3F1 * number:#x} in {library})")
    return "\n".join(lines) + "\n"


def what_text(message: str, raised_from: str, frames: Sequence[tuple[str, str]]) -> str:
    """c10::Error::what(): the message, a line break, where it was raised and the backtrace."""
    return f"{message}\nException raised from {raised_from} (most recent call first):\n" + backtrace(frames)


def cpp_abort(exc_type: str, message: str, raised_from: str, frames: Sequence[tuple[str, str]]) -> str:
    """A C++ exception escaping a thread: libstdc++'s terminate notice and the exception's what()."""
    return f"terminate called after throwing an instance of '{exc_type}'\n  what():  " + what_text(message, raised_from, frames)


# the NCCL watchdog thread's stack in torch 2.5-2.7
WATCHDOG_STACK = (
    ("c10::Error::Error(c10::SourceLocation, std::string)", f"{TORCH_LIB}/libc10.so"),
    ("c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&)", f"{TORCH_LIB}/libc10.so"),
    ("c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)", f"{TORCH_LIB}/libc10_cuda.so"),
    ("c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const", f"{TORCH_LIB}/libtorch_cuda.so"),
    ("c10d::ProcessGroupNCCL::WorkNCCL::isCompleted()", f"{TORCH_LIB}/libtorch_cuda.so"),
    ("c10d::ProcessGroupNCCL::watchdogHandler()", f"{TORCH_LIB}/libtorch_cuda.so"),
    ("c10d::ProcessGroupNCCL::ncclCommWatchdog()", f"{TORCH_LIB}/libtorch_cuda.so"),
    ("<unknown function>", f"{TORCH_LIB}/libtorch.so"),
    ("<unknown function>", LIBC),
    ("<unknown function>", LIBC),
)
TIMEOUT_STACK = (
    ("c10::Error::Error(c10::SourceLocation, std::string)", f"{TORCH_LIB}/libc10.so"),
    ("c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >)", f"{TORCH_LIB}/libtorch_cuda.so"),
    ("c10d::ProcessGroupNCCL::watchdogHandler()", f"{TORCH_LIB}/libtorch_cuda.so"),
    ("c10d::ProcessGroupNCCL::ncclCommWatchdog()", f"{TORCH_LIB}/libtorch_cuda.so"),
    ("<unknown function>", f"{TORCH_LIB}/libtorch.so"),
    ("<unknown function>", LIBC),
    ("<unknown function>", LIBC),
)


def python_stack(title: str) -> tuple[tuple[str, str], ...]:
    """The bottom of a C++ backtrace thrown on a Python thread: the interpreter, shown under the
    process title SGLang sets (`sglang::scheduler_TP1`)."""
    return (
        ("c10::Error::Error(c10::SourceLocation, std::string)", f"{TORCH_LIB}/libc10.so"),
        ("c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)", f"{TORCH_LIB}/libc10_cuda.so"),
        ("c10::cuda::CUDAStream::synchronize() const", f"{TORCH_LIB}/libtorch_python.so"),
        ("<unknown function>", f"{TORCH_LIB}/libtorch_python.so"),
        ("_PyObject_MakeTpCall", title),
        ("_PyEval_EvalFrameDefault", title),
        ("PyEval_EvalCode", title),
        ("Py_RunMain", title),
        ("Py_BytesMain", title),
        ("__libc_start_main", LIBC),
        ("_start", title),
    )


def glog(rank: int, level: str, stamp: str, where: str, message: str) -> str:
    """A torch C++ log line as torch.distributed prefixes it: `[rank1]:[E210 02:06:33.347835395 <where>] ...`."""
    return f"[rank{rank}]:[{level}{stamp} {where}] {message}\n"


def collective_timeout(rank: int, seq: int, op: str, numel: tuple[int, int], ran_ms: int) -> str:
    """The work that timed out, as ProcessGroupNCCL words it (torch 2.4-2.7)."""
    return (f"[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel[0]}, "
            f"NumelOut={numel[1]}, Timeout(ms)=600000) ran for {ran_ms} milliseconds before timing out.")


def watchdog_terminated(pg: str, rank: int, cause: str) -> str:
    """The watchdog thread's exception: `[PG ID 2 PG GUID 3 Rank 1] Process group watchdog thread terminated with exception: <cause>`."""
    return f"[{pg} Rank {rank}] Process group watchdog thread terminated with exception: {cause}"


def nccl_timeout_abort(rank: int, stamp: str, pg: str, seq: int, op: str, numel: tuple[int, int], ran_ms: int) -> str:
    """A rank's NCCL collective timing out: torch's E lines, then the watchdog's C++ abort."""
    cause = collective_timeout(rank, seq, op, numel, ran_ms)
    what = watchdog_terminated(pg, rank, cause)
    work = f"last enqueued NCCL work: {seq}, last completed NCCL work: {seq - 1}."
    raised = "checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618"
    return (
        glog(rank, "E", stamp, "ProcessGroupNCCL.cpp:616", cause)
        + glog(rank, "E", stamp, "ProcessGroupNCCL.cpp:1785", f"[{pg} Rank {rank}] Exception (either an error or timeout) detected by watchdog at work: {seq}, {work}")
        + glog(rank, "E", stamp, "ProcessGroupNCCL.cpp:1834", f"[{pg} Rank {rank}] Timeout at NCCL work: {seq}, {work}")
        + glog(rank, "E", stamp, "ProcessGroupNCCL.cpp:630", f"[Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
        + glog(rank, "E", stamp, "ProcessGroupNCCL.cpp:636", f"[Rank {rank}] To avoid data inconsistency, we are taking the entire process down.")
        + glog(rank, "E", stamp, "ProcessGroupNCCL.cpp:1595", what_text(what, raised, TIMEOUT_STACK).rstrip("\n"))
        + cpp_abort("c10::DistBackendError", what, raised, TIMEOUT_STACK)
    )


def flashinfer_cuda_error(text: str, code: int, header: str, line: int, call: str) -> str:
    """flashinfer's FLASHINFER_CUDA_CALL print: `CUDA Error: <cudaGetErrorString> (<code>) <header>: line N at function <call>`."""
    return f"CUDA Error: {text} ({code}) {header}: line {line} at function {call}\n"


def pyspy_dump(pid: int, title: str, python: str, threads: Iterable[tuple[int, str, str, Sequence[str]]]) -> str:
    """`py-spy dump` output: process header, then per thread its frames innermost first,
    `function (file:line)`; `threads` holds (thread id, state, name, frames)."""
    lines = [f"Process {pid}: {title}", f"Python {python}", ""]
    for ident, state, name, frames in threads:
        lines.append(f"Thread {ident} ({state}): \"{name}\"")
        lines.extend(f"    {frame}" for frame in frames)
        lines.append("")
    return "\n".join(lines) + "\n"


def bash_killed(script: str, line: int, pid: int, command: str) -> str:
    """bash's notice for a job killed by SIGKILL, in its column layout."""
    return f"{script}: line {line}: {pid:>5} Killed                  {command}\n"


def nccl_info(host: str, pid: int, tid: int, device: int, messages: Iterable[str]) -> str:
    """NCCL_DEBUG=INFO lines: `<host>:<pid>:<tid> [<dev>] NCCL INFO ...`."""
    return "".join(f"{host}:{pid}:{tid} [{device}] NCCL INFO {message}\n" for message in messages)


def vllm_platform(stamp: str, where: str = "__init__.py:190]") -> str:
    """The line vLLM logs when imported (SGLang <= 0.4.x imported vLLM): `INFO 03-06 10:05:08 __init__.py:190] ...`;
    newer vLLM brackets the place: `[__init__.py:243]`."""
    return f"INFO {stamp} {where} Automatically detected platform cuda.\n"


HEARTBEAT_STACK = (
    ("c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)", f"{TORCH_LIB}/libc10.so"),
    ("<unknown function>", f"{TORCH_LIB}/libtorch_cpu.so"),
    ("c10d::TCPStore::check(std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > > const&)", f"{TORCH_LIB}/libtorch_cpu.so"),
    ("c10d::ProcessGroupNCCL::HeartbeatMonitor::runLoop()", f"{TORCH_LIB}/libtorch_cuda.so"),
    ("<unknown function>", f"{TORCH_LIB}/libtorch.so"),
    ("<unknown function>", LIBC),
    ("<unknown function>", LIBC),
)


def tcpstore_reset(rank: int, stamp: str, local: str, store: str) -> str:
    """A surviving rank's heartbeat monitor losing the c10d store (torch 2.7 wording)."""
    return (
        glog(rank, "W", stamp, "TCPStore.cpp:125", f"[c10d] recvValue failed on SocketImpl(fd=87, addr=[{local}]:46772, remote=[{store}]:20000): Connection reset by peer")
        + "Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:679 (most recent call first):\n"
        + backtrace(HEARTBEAT_STACK)
        + glog(rank, "W", stamp, "ProcessGroupNCCL.cpp:1771", f"[PG ID 0 PG GUID 0 Rank {rank}] Failed to check the \"should dump\" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer")
    )


def concurrent_writes(fragments: Sequence[str], rhythm: Sequence[int]) -> str:
    """Two writers printing the same fragments at once: writer A, then B, take turns by `rhythm`
    (fragments per turn), so their output mixes mid-line (sglang#5491's flashinfer line)."""
    queues = [list(fragments), list(fragments)]
    out: list[str] = []
    for turn, count in enumerate(rhythm):
        out.extend(queues[turn % 2][:count])
        del queues[turn % 2][:count]
    out.extend(queues[0] + queues[1])
    return "".join(out)


def flashinfer_fragments(text: str, code: int, header: str, line: int, call: str) -> tuple[str, ...]:
    """flashinfer's error print as the stream insertions it is made of."""
    return ("CUDA Error: ", text, " (", str(code), ") ", header, ": line ", str(line), " at function ", call, "\n")


def index_asserts(kernel: str, line: int, condition: str, threads: Iterable[int], block: str = "0,0,0") -> str:
    """CUDA device-side assert prints, one per failing thread (ATen index kernels)."""
    return "".join(f"{kernel}:{line}: operator(): block: [{block}], thread: [{t},0,0] Assertion `{condition}` failed.\n" for t in threads)
