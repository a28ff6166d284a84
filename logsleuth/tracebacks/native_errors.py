"""Error lines of the native libraries an engine or an RL trainer loads, and of the serving wrappers around an engine,
that carry no Python exception type (issue 28: a failure shown only as a log line).  Each shape is read from the code
that prints it, never from one thread's sentence:

- a failed CUDA (or HIP) driver/runtime call checked by a library's own macro, which prints the call's result code,
  its error string and the place, then calls exit(1): torch_memory_saver's CURESULT_CHECK and CUDA_ERROR_CHECK
  (csrc/utils.h: `std::cerr << "[torch_memory_saver.cpp] CUresult error: " << result << " (" << err_str << ") " <<
  " file=" << __FILE__ << " func=" << __func__ << " line=" << __LINE__`; older releases `CUresult error  result=2
  file=… func=… line=…`, the HIP build `hipError_t error`), the GPU-memory pause/resume helper SGLang's and the RL
  trainers' memory saver loads (fzyzcjy/torch_memory_saver#4, THUDM/slime#274);
- UCX's own log record at ERROR or FATAL level (ucs/debug/log.c ucs_log_default_handler: `[<sec>.<usec>] [<host>:<pid>:
  <thread>] <file>:<line> UCX <LEVEL> <message>`), the transport under NIXL and the KV-transfer connectors
  (xcompact3d/x3d2#292 `cuda_copy_md.c:688 UCX ERROR cuMemGetAddressRange(…) error: named symbol not found`,
  ai-dynamo/nixl#1614 `cuda_ipc_ep.c:166 UCX ERROR cuM…`); its WARN and DIAG records are left out;
- the CUDACHECK macro that the engines' custom all-reduce (vLLM's csrc/custom_all_reduce.cuh, still defined there in
  current releases; sgl-kernel's copy; SGLang 0.1.x ran vLLM's through the vllm package) copied from NCCL's examples and nccl-tests (`printf("Failed: Cuda error %s:%d '%s'\n",
  __FILE__, __LINE__, cudaGetErrorString(e)); exit(EXIT_FAILURE);`): the kernel source and line, then the CUDA runtime's
  error string, the status name read back from facts/gpu_error_names.toml [strings] (sgl-project/sglang#552
  `custom_all_reduce.cuh:307 'peer access is not supported between these two devices'` on two T4s, vllm-project/vllm#9046
  `custom_all_reduce.cuh:336 'invalid argument'`); the worker exits with it, no Python exception;
- NVSHMEM's error-check macros (NVSHMEMI_NZ_ERROR_JMP and kin, src/include/internal/host/debug.h: `"%s:%d: non-zero
  status: %d " <message>`), which DeepEP's buffers print before the process aborts (deepseek-ai/DeepEP#150 `init.cu:327:
  non-zero status: 7 bootstrap_init failed`);
- Triton's model table at the end of its start-up, a model's status `UNAVAILABLE: <the reason it did not load>` (core
  src/server.cc PrintBackendAndModelSummary; triton-inference-server/server#6950);
- a GPU runtime's abort on a non-NVIDIA stack, printed to stderr with no Python traceback: ROCm's runtime (ROCr) on a
  kernel's page fault (src/core/runtime/runtime.cpp VMFaultHandler: `Memory access fault by GPU node-2 (Agent handle:
  0x…) on address 0x…. Reason: Unknown.`, older releases without the agent handle, `… on address (nil). Reason: Page
  not present or supervisor privilege.`), then abort() (iree-org/wave#466: SGLang's wave attention backend on an MI
  GPU); HIP's runtime (CLR rocdevice.cpp's queue callback: `Callback: Queue 0x… aborting with error :
  HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception. code: 0x1016`, sgl-project/sglang
  #22714 on MI300X); Ascend's torch_npu error record (`[ERROR] <time> (PID:N, Device:N, RankID:N) ERR99999 UNKNOWN
  applicaiton exception`: torch_npu's `ERR<sub-module><code>` error codes, vllm-project/vllm-ascend#340);
- a companion tool's own record at ERROR, CRITICAL or FATAL level saying the tool itself failed to start or initialise,
  with no traceback: SGLang's router, its Python launcher (sglang_router/launch_router.py `logger.error(f"Error starting
  router: {e}")` under its `[Router (Python)]` format; sgl-project/sglang#2796) or its Rust records (`[Router (Rust)]`,
  the `sglang_router_rs::` / `sgl_model_gateway::` targets), and LMCache's (`LMCache ERROR: LMCacheEngine marked as
  init failed: …`, lmcache/logging.py's `[time] LMCache LEVEL: msg` format; LMCache/LMCache#2854).  The tool failed,
  not the engine: its name is the failure's type;
- a serving wrapper's ERROR record saying the model server failed to start, with the exception's message and not its
  type: KServe's model server (`logger.error(f"Failed to start model server: {e}")`, python/huggingfaceserver
  __main__.py; kserve/kserve#3946 after a library's FutureWarning), and the same record of other wrappers (`Failed to
  launch model: …`, `Failed to load model: …`): the message after the colon is the failure's.

All are the failure only of a paste that shows no other (a fallback): a library logs errors it survives, and a Python
traceback in the paste says more."""

from __future__ import annotations

import re

from logsleuth.facts.gpu_error_names import name_of_string
from logsleuth.lazyre import compile_lazily

CUDA_CALL_FAILED = "CUDA error"  # the type of a library's failed CUDA call (as typeless_errors.KERNEL_CUDA_ERROR)
UCX_ERROR = "UCX error"  # the type of UCX's ERROR/FATAL record: a transport error, no exception was raised
NVSHMEM_ERROR = "NVSHMEM error"  # the type of NVSHMEM's error check: the process aborts after it
MODEL_UNAVAILABLE = "model UNAVAILABLE"  # the type of Triton's model table row for a model that did not load
GPU_MEMORY_FAULT = "GPU memory access fault"  # the type of ROCr's page-fault report: the process aborts after it
HSA_ERROR = "HSA error"  # the type of HIP's queue abort: the HSA status it names
NPU_ERROR = "NPU error"  # the type of torch_npu's error record: its ERR code
WRAPPER_LAUNCH_FAILED = "launch failure"  # as typeless_errors.ENGINE_DID_NOT_START_TYPE: the wrapper's report
# The CUDACHECK macro's words: its line stays the context of the worker's death printed after it (scanner._start), whose
# cause it names (facts/categories.toml's custom all-reduce row: cause_words)
CUDACHECK_WORDS = "Failed: Cuda error "

# Each row: (the literal a line needs before the regex is tried, regex with a `msg` group, type).
NATIVE_ERROR_LINES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (" file=", compile_lazily(
        r"^(?:.{0,300}?\s)?(?P<msg>(?:CUresult|cudaError(?:_t)?|hipError_t) error:? +(?:result=)?(?P<code>-?\d{1,4})"
        r"(?P<said> \([^()\n]{1,120}\))? +file=\S{1,300} func=\S{1,200} line=\d+)"), CUDA_CALL_FAILED),
    (" UCX ", compile_lazily(
        r"^(?:.{0,300}?\s)?\[\d+\.\d+\] \[[^\]\s]{1,200}\]\s+[\w.\-]{1,100}:\d+\s+UCX\s+(?:ERROR|FATAL)\s+(?P<msg>\S.{0,2000})$"),
     UCX_ERROR),
    (CUDACHECK_WORDS, compile_lazily(
        r"^(?:.{0,300}?[\s\]])?(?P<msg>Failed: Cuda error [^\s']{1,300}:\d{1,6} '(?P<string>[^'\n]{1,200})')\s*$"), CUDA_CALL_FAILED),
    ("non-zero status: ", compile_lazily(
        r"^(?:.{0,300}?\s)?(?P<msg>[\w./\-]{1,300}\.(?:cpp|cu|cc|c|h)(?::\w{1,60})?:\d+: non-zero status: -?\d{1,6}:? \S.{0,2000})$"),
     NVSHMEM_ERROR),
    ("Memory access fault by GPU", compile_lazily(
        r"^(?:.{0,300}?[\s`'\"(:\uff1a])?(?P<msg>Memory access fault by GPU node-\d{1,4} (?:\(Agent handle: 0x[0-9a-fA-F]{1,16}\) )?"
        r"on address (?:0x[0-9a-fA-F]{1,16}|\(nil\))[^.`'\"\n]{0,80}\. Reason: [^`'\"\n]{1,200}?)(?:\.(?=[\s`'\"]|$)|(?=[`'\"]|$))"), GPU_MEMORY_FAULT),
    ("HSA_STATUS_ERROR", compile_lazily(
        r"^(?:.{0,300}?\s)?(?:Callback: Queue 0x[0-9a-fA-F]{1,16} aborting with error : )?"
        r"(?P<msg>HSA_STATUS_ERROR_[A-Z_]{1,60}: [^`'\"\n]{1,300}?)(?:[`'\"].*)?$"), HSA_ERROR),
    # torch_npu's error code `ERR<sub-module, 2 digits><code, 3 digits>`, class-level: its sub-modules and codes are
    # tables (torch_npu/utils/error_code.py _SubModuleID PTA=0 … UNKNOWN=99, ErrCode PARAM=1 … ACL=100, HCCL=200; the
    # C++ side's submoduleMap and errCodeMap in torch_npu/csrc/core/npu/NPUException.cpp), after the record's header
    (" ERR", compile_lazily(
        r"^(?:.{0,300}?\s)?\[ERROR\] \S{1,40} \(PID:\d{1,10}, Device:-?\d{1,4}, RankID:-?\d{1,6}\) (?P<msg>ERR\d{5} \S.{0,500})$"),
     NPU_ERROR),
    # Triton's model summary at the end of its start-up (core src/server.cc PrintBackendAndModelSummary: a table of Model,
    # Version, Status, the status ModelReadyStateString(state) + ": " + the reason), the reason of a model that did not
    # load (triton-inference-server/server#6950, a TensorRT-LLM model's CUDA error; the vLLM backend's model the same)
    ("UNAVAILABLE: ", compile_lazily(
        r"^\|\s*[^|\s][^|]{0,300}\|\s*\d{1,19}\s*\|\s*UNAVAILABLE: (?P<msg>[^|]{0,2000}[^|\s])\s*\|\s*$"), MODEL_UNAVAILABLE),
)
# A wrapper's ERROR record that the model server failed: the level word, then the wrapper's sentence, then the exception's
# message (`… kserve ERROR [__main__.py:<module>():254] Failed to start model server: <str(e)>`).
WRAPPER_FAILED_WORDS = ("Failed to start ", "Failed to launch ", "Failed to load ")
_WRAPPER_FAILED_WORDS = r"Failed to (?:start|launch|load) (?:the )?(?:model server|inference server|model|server|engine)\b[^:`\n]{0,80}: "
WRAPPER_FAILED = compile_lazily(
    r"^(?:.{0,300}?[\s\]|])?(?:ERROR|CRITICAL|\[[Ee]rror\])\b.{0,200}?\s" + _WRAPPER_FAILED_WORDS + r"(?P<said>\S.{0,2000})$"
)
# The same record's text quoted in backticks in a sentence, its level and prefix left out (kserve/kserve#3946: `fails with an
# error: `Failed to start model server: NVML_SUCCESS == r INTERNAL ASSERT FAILED at …``).
WRAPPER_FAILED_QUOTED = compile_lazily(r"^(?:.{0,300}?[\s:(])?`" + _WRAPPER_FAILED_WORDS + r"(?P<said>[^`\s][^`]{0,2000})`")


# A companion tool's record: its own prefix or logger name, then its level, then a sentence saying the tool failed to
# start or initialise (not a request it failed and survived).  Each row: (literal, the tool's mark, the tool's name).
COMPANION_TOOLS: tuple[tuple[str, str, str], ...] = (
    ("Router (", r"\[Router \((?:Python|Rust)\)\]", "sgl-router"),
    ("sglang_router", r"\bsglang_router(?:_rs)?::", "sgl-router"),
    ("sgl_model_gateway", r"\bsgl_model_gateway::", "sgl-router"),
    ("LMCache ERROR", r"\bLMCache(?= ERROR\b)", "LMCache"),
    ("LMCache CRITICAL", r"\bLMCache(?= CRITICAL\b)", "LMCache"),
)
COMPANION_FAILED = compile_lazily(
    r"(?i:error (?:starting|initiali[sz]ing|launching)\b|failed to (?:start|initiali[sz]e|init|launch)\b"
    r"|\S{1,80} (?:marked as )?init(?:iali[sz]ation)? failed\b)"
)
# The tool's mark anywhere in the record's first 300 characters (the Python launcher's `[Router (Python)] time - ERROR -`
# puts it before the level, the Rust router's tracing records after it: `time ERROR sglang_router_rs::server:
# src/server.rs:N: msg`, as grammar's router worker row reads them), then the level, then the message past a tracing
# record's target and source location.
_RUST_TARGET = r"(?:\w{1,60}(?:::\w{1,60}){1,8}:\s{1,4})?(?:[\w./\-]{1,200}\.rs:\d{1,6}:\s{1,4})?"
_COMPANION_RECORDS = tuple(
    (literal, compile_lazily(rf"^(?=.{{0,300}}?{mark}).{{0,300}}?\b(?:ERROR|CRITICAL|FATAL)\b[\s:\-|\]]{{1,8}}"
                             rf"{_RUST_TARGET}(?P<msg>\S.{{0,2000}})$"), tool)
    for literal, mark, tool in COMPANION_TOOLS
)
COMPANION_FAILED_SUFFIX = " failed"  # the type: `sgl-router failed`, `LMCache failed`
# The types whose line stays the context of a failure printed after it (scanner._start): the abort a runtime's
# message explains (sgl-project/sglang#22714: HIP's HSA status right above `Fatal Python error: Aborted`).
KEPT_AS_CONTEXT = frozenset({GPU_MEMORY_FAULT, HSA_ERROR, NPU_ERROR,
                             *(tool + COMPANION_FAILED_SUFFIX for _, _, tool in COMPANION_TOOLS)})
COMPANION_WORDS = tuple(literal for literal, _, _ in COMPANION_TOOLS)
_COMPANION_TYPES = frozenset(tool + COMPANION_FAILED_SUFFIX for _, _, tool in COMPANION_TOOLS)


def is_companion_failure(type_name: str) -> bool:
    """The type is one logsleuth gave a companion tool's failed start (`sgl-router failed`): its words are logsleuth's,
    not the log's, and the tool failed, not the engine's code (category_score reads neither as the engine's)."""
    return type_name in _COMPANION_TYPES


def companion_tool_failure(text: str) -> tuple[str, str] | None:
    """(type, message) of a companion tool's record saying the tool failed to start (COMPANION_TOOLS), else None."""
    for literal, pattern, tool in _COMPANION_RECORDS:
        if literal in text and (m := pattern.match(text)) is not None and COMPANION_FAILED.match(m["msg"]):
            return tool + COMPANION_FAILED_SUFFIX, m["msg"].rstrip()
    return None


# Code 2 is out of memory in all three enums (cuda.h CUDA_ERROR_OUT_OF_MEMORY, driver_types.h cudaErrorMemoryAllocation,
# hip_runtime_api.h hipErrorOutOfMemory); older releases of the macro printed the code without its error string.
OUT_OF_MEMORY_CODE = "2"


def _unsaid_out_of_memory(m: re.Match[str]) -> str:
    """The name of a failed CUDA call's result code 2 when the line printed no error string (else "")."""
    if "code" not in m.re.groupindex or m["said"] is not None or m["code"] != OUT_OF_MEMORY_CODE:
        return ""
    return " (code 2: out of memory)"


def _status_named(m: re.Match[str]) -> str:
    """` (<status name>)` after a CUDA error string the line printed without its name (facts/gpu_error_names.toml
    [strings]), so the rows that read the name read it (else "")."""
    if "string" not in m.re.groupindex or (name := name_of_string(m["string"])) is None:
        return ""
    return f" ({name})"


# The literals of the table and of the wrapper's record (typeless_errors.WORDS: a line holding none is not tried).
NATIVE_ERROR_WORDS = (*(literal for literal, _, _ in NATIVE_ERROR_LINES), *WRAPPER_FAILED_WORDS, *COMPANION_WORDS)


def native_error_line(text: str) -> tuple[str, str] | None:
    """(type, message) of a native library's error line or a wrapper's failed-start record, else None."""
    if len(text) > 4096:
        return None
    for literal, pattern, fixed_type in NATIVE_ERROR_LINES:
        if literal in text and (m := pattern.match(text)) is not None:
            return fixed_type, m["msg"].rstrip() + _unsaid_out_of_memory(m) + _status_named(m)
    if (companion := companion_tool_failure(text)) is not None:
        return companion
    if any(words in text for words in WRAPPER_FAILED_WORDS) and (
        (m := WRAPPER_FAILED.match(text)) is not None or (m := WRAPPER_FAILED_QUOTED.match(text)) is not None
    ):
        return WRAPPER_LAUNCH_FAILED, m["said"].rstrip()
    return None
