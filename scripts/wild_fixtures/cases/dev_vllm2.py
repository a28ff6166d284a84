"""A dev split for vLLM's own log shapes (issue 28, branch h-vshape): what a vLLM launch prints when a process dies
without a Python exception of its own.  A fatal-signal handler loaded into the process prints `!!!!!!! Segfault encountered
!!!!!!!` and a native backtrace in CPython's frame format (`  File "misc/cudawrap.cc", line 92, in …`), which the
traceback grammar must not read as a Python traceback; the multiproc executor's `Worker proc VllmWorker-N died
unexpectedly, shutting down executor.` is the only line left of a worker killed from outside.

Facts were mined from the threads each case cites (wordings, file and line of the record, the frames of the dump, the
process prefixes); the rest of each log (the other records, addresses, pids) is ours, and each `facts` says which.
"""

from __future__ import annotations

from functools import partial

from .. import paste
from ..corpus import Expect, Text, WildCase
from .dev_detect import prefixed, vllm_record

VLLM = "vllm"


def segfault_banner(frames: tuple[tuple[str, int, str], ...]) -> str:
    """The banner of the fatal-signal handler and its backtrace, innermost first, one `File "F", line N, in S`
    row per (file, line, symbol); files it cannot name are `<unknown>` at line 0."""
    rows = "".join(f'  File "{path}", line {line}, in {symbol}\n' for path, line, symbol in frames)
    return f"!!!!!!! Segfault encountered !!!!!!!\n{rows}\n"


# The dump of a segfault inside NCCL's first communicator (ncclCommInitRank -> ncclCudaLibraryInit ->
# ncclCuMemHostEnable -> cuMemCreate), as vllm-project/vllm#27868 and NVIDIA/nccl#2106 (SGLang) show it.
NCCL_CUMEM_DUMP = (
    ("./signal/../sysdeps/unix/sysv/linux/x86_64/libc_sigaction.c", 0, "0x00007f4e1204532f"),
    ("<unknown>", 0, "cuMemCreate"),
    ("misc/cudawrap.cc", 92, "ncclCuMemHostEnable()"),
    ("misc/cudawrap.cc", 202, "ncclCuMemHostEnable()"),
    ("misc/cudawrap.cc", 280, "initOnceFunc"),
    ("./nptl/pthread_once.c", 116, "__pthread_once_slow"),
    ("misc/cudawrap.cc", 298, "ncclCudaLibraryInit()"),
    ("/dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/init.cc", 1852, "ncclCommInitRank"),
    ("<unknown>", 0, "ffi_call"),
    ("<unknown>", 0, "_PyObject_MakeTpCall"),
    ("<unknown>", 0, "_PyEval_EvalFrameDefault"),
)
SEGFAULT = Expect("nccl", "SIGSEGV", "Segfault encountered")

P2P_CONTEXT = ("set_p2p_nccl_context, original_values: {'NCCL_MAX_NCHANNELS': None, 'NCCL_MIN_NCHANNELS': None, "
               "'NCCL_CUMEM_ENABLE': None, 'NCCL_BUFFSIZE': None, 'NCCL_PROTO': None, 'NCCL_ALGO': None}")
ENGINE_CORES_27868 = (
    prefixed(vllm_record("INFO", "10-31 07:39:10", "parallel_state.py:1208", "rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0"),
             "(EngineCore_DP0 pid=3790887) ")
    + prefixed(vllm_record("INFO", "10-31 07:39:11", "p2p_nccl_engine.py:51", P2P_CONTEXT), "(EngineCore_DP0 pid=3790887) ")
    + prefixed(vllm_record("INFO", "10-31 07:39:11", "p2p_nccl_engine.py:51", P2P_CONTEXT), "(EngineCore_DP0 pid=3790891) ")
)
WORKER_DIED_154 = "Worker proc VllmWorker-3 died unexpectedly, shutting down executor."
ADDED_17276 = "".join(vllm_record("INFO", "04-28 02:37:03", "async_llm.py:252", f"Added request {n}_chatcmpl-c78d39a6d1d8469f90f3bda9bd41ca6a.")
                      for n in (13, 14, 15))

CASES: tuple[WildCase, ...] = (
    # a segfault in NCCL's first communicator, the handler printing it between the engine cores' records --------------------
    WildCase(thread="https://github.com/vllm-project/vllm/issues/27868", kind="vllm-native-segfault", style="engine-core-records",
             parts=(Text(ENGINE_CORES_27868), Text(segfault_banner(NCCL_CUMEM_DUMP), primary=True)),
             engine_version="0.11.0", engine=VLLM, expect=SEGFAULT,
             facts="a prefill/decode pair on RTX 3080s (P2pNcclConnector): two engine cores' (EngineCore_DP0 pid=N) records of "
                   "p2p_nccl_engine.py's set_p2p_nccl_context, then `!!!!!!! Segfault encountered !!!!!!!` and the dump "
                   "libc_sigaction -> cuMemCreate -> ncclCuMemHostEnable() (misc/cudawrap.cc 92, 202, 280, 298) -> ncclCommInitRank "
                   "(init.cc 1852) -> ffi_call; the first record, the pids' order and the release ours (the thread's date)",
             resolution="Not resolved in the thread (closed as stale). The crash is inside NCCL's cuMem host allocation at its first "
                        "communicator; NCCL_CUMEM_ENABLE=0 (or a matching driver and NCCL) is the usual test.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/NVIDIA/nccl/issues/2106", kind="vllm-native-segfault", style="quoted-dump",
             parts=(Text(segfault_banner(NCCL_CUMEM_DUMP[:1] + (
                 ("./nptl/pthread_kill.c", 44, "__pthread_kill_implementation"),
                 ("./nptl/pthread_kill.c", 78, "__pthread_kill_internal"),
                 ("../sysdeps/posix/raise.c", 26, "__GI_raise"),
             ) + NCCL_CUMEM_DUMP), primary=True),),
             engine_version="", engine="sglang", expect=SEGFAULT,
             facts="SGLang serving a Qwen3.5 model: only the handler's dump, the signal re-raised (pthread_kill, raise) above the "
                   "same NCCL frames as vllm-project/vllm#27868, quoted with `> ` in the issue; no engine line in the paste",
             resolution="Open at NCCL. A segfault in cuMemCreate under ncclCuMemHostEnable at NCCL's first communicator.",
             paste=(paste.quote,)),
    # the record that announces the engine core's fatal error, the paste cut before its traceback ------------------------------------
    WildCase(thread="https://github.com/vllm-project/vllm/issues/17276", kind="vllm-engine-fatal-record", style="cut-after-record",
             parts=(Text(ADDED_17276),
                    Text(vllm_record("ERROR", "04-28 02:37:03", "core.py:398", "EngineCore encountered a fatal error."), primary=True)),
             engine_version="0.8.5", engine=VLLM, expect=Expect("process-killed"),
             facts="`vllm serve Qwen/Qwen2.5-VL-3B-Instruct` on a nightly: requests 13, 14, 15 added (async_llm.py:252), then "
                   "`[core.py:398] EngineCore encountered a fatal error.`; the paste cut right after that record is ours (the thread "
                   "goes on with the traceback), as is the release (the nightly's date)",
             resolution="Closed; we read no confirmed fix. The record only announces the error: the engine core's own traceback "
                        "right after it (cut from this paste) names it.",
             paste=(paste.fenced, partial(paste.prose, before="vllm serve Qwen/Qwen2.5-VL-3B-Instruct"))),
    # a worker killed from outside: its parent's record is all that is left ---------------------------------------------------------
    WildCase(thread="https://github.com/intel/llm-scaler/issues/154", kind="vllm-worker-died", style="compose-records",
             parts=(Text('INFO:     127.0.0.1:48802 - "GET /health HTTP/1.1" 200 OK\n'),
                    Text(vllm_record("ERROR", "11-08 11:01:29", "multiproc_executor.py:135", WORKER_DIED_154), primary=True),
                    Text(vllm_record("ERROR", "11-08 11:01:30", "core.py:502", "EngineCore encountered a fatal error."))),
             engine_version="", engine=VLLM, expect=Expect("process-killed"),
             facts="the intel/llm-scaler-vllm:1.0 image under docker compose (service `eap-llm-server-on-arc`) on Arc GPUs, serving "
                   "(a /health request answered), then `[multiproc_executor.py:135] Worker proc VllmWorker-3 died unexpectedly, "
                   "shutting down executor.` and the engine core's `[core.py:502] EngineCore encountered a fatal error.`; the paste cut "
                   "there is ours (the thread goes on with the engine core's cascade traceback)",
             resolution="Closed. The worker printed no error of its own before it died: it was killed from outside or crashed "
                        "natively; the engine core's traceback after it is the cascade (its executor failed).",
             paste=(partial(paste.docker_compose, service="eap-llm-server-on-arc"), paste.fenced)),
)
