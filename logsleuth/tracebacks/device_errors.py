"""An accelerator runtime's own error line, with no Python exception (issue 28, stop 53's shapes): what a person points
at in a paste whose kernel library or device runtime printed its status and exited.  Each shape from the code that
prints it or the enum it names, never from one thread's sentence:

- the name of a GPU runtime's or library's error status, printed on its own line or after the library's refusal:
  HIP's own abort when a program has no code object for the GPU (CLR hip_code_object.cpp: `hipErrorNoBinaryForGpu:
  Unable to find code object for all current devices!`; ROCm/tensorflow-upstream#1305, ROCm/legacy-rocm-build#1623,
  easydiffusion/easydiffusion#1477), the CUDA samples' check (helper_cuda.h `CUDA error at <file>:<line>
  code=<n>(<name>) "<call>"`, NVIDIA/cuda-samples#225), a wrapper's `cuModuleLoadData(…) failed with error:
  CUDA_ERROR_NO_BINARY_FOR_GPU` (apache/tvm#205), JAX's `cudaLaunchKernel returned cudaErrorNoKernelImageForDevice`
  (jax-ml/jax#3753).  Only a name its enum defines (facts/gpu_error_names.toml: CUDA runtime and driver, cuBLAS,
  cuDNN, HIP, Intel's Unified Runtime and Plugin Interface); never a warning or an INFO record naming it, a line of
  source code (`if (err == cudaErrorIllegalAddress)`, `case CUBLAS_STATUS_NOT_SUPPORTED:`), a documentation table
  (`| cudaErrorIllegalAddress | 700 | … |`), or a recovery (`… falling back to CPU`);
- Ascend CANN's error message record, an error code of its table with the process and the time (CANN's error
  manager: `EE1001: [PID: 1059] 2025-05-29-20:52:24.655.114 The argument is invalid.Reason: …`,
  vllm-project/vllm-ascend#1007; `E40024: 2025-03-04-12:56:24.963.302 Failed call Python Func/Meathod …`,
  Ascend/pytorch#61; CANN 8.2 and later put the code after its name, `[PID: 726962] 2026-04-20-19:23:08.682.108
  Inner_Error_Device_Status_Abnormal(E39009): Failed to connect the device.`, hw-native-sys/PTOAS#523,
  vllm-project/vllm-ascend#9725's `Invalid_Argument(EL0003)`);
- torch's message for a failed HIP call alone without its type (c10/hip, the hipified CUDAException.cpp: `HIP error:
  invalid device function`), as `CUDA error: <text>` alone is read (typeless_errors.torch_cuda_error);
- a GPU math library's own fatal line on ROCm, printed to stderr before it aborts, no Python exception: rocBLAS's
  (library/src/tensile_host.cpp: `rocBLAS error: Cannot read <path>/TensileLibrary.dat: <strerror> for GPU arch :
  <gfx target>` and the list of the arch files it has, then rocblas_abort(); `rocBLAS error: Could not initialize
  Tensile host: …`, `… Could not initialize Tensile library`; vllm-project/vllm#28460 on gfx1150, ROCm/ROCm#4625 on
  gfx906), MIOpen's (src/include/miopen/errors.hpp try_: `MIOpen Error: <file>:<line>: <message>`, the status then
  returned to the caller, torch raising `RuntimeError: miopenStatus…` when it is pasted).  hipBLASLt's
  `hipBLASLt error: algo not supported.` is left out: rocBLAS prints it while it falls back to Tensile, a healthy
  run's line (ROCBLAS_VERBOSE_HIPBLASLT_ERROR).  cuBLAS's and cuDNN's own failures reach a log as their status names
  (the first shape) or as torch's RuntimeError;
- Habana's SynapseAI status as its PyTorch bridge words it (`synStatus=26 [Generic failure] Device acquire failed.`,
  huggingface/optimum-habana#1611, huggingface/tgi-gaudi#93) with its type lost.

All are the failure only of a paste that shows no other (typeless_errors reads them as fallbacks): a Python
exception or an abort after them, when pasted, is the failure, and the line its context."""

from __future__ import annotations

from logsleuth.facts.gpu_error_names import family_of
from logsleuth.lazyre import compile_lazily
from logsleuth.tracebacks.native_errors import NPU_ERROR

HIP_ERROR = "HIP error"  # the type of a HIP status name or torch's HIP message: no exception was raised
HPU_ERROR = "HPU error"  # the type of SynapseAI's status line

# The enums' error names (facts/gpu_error_names.toml holds which are defined): the token, checked against the table.
_NAME_WORDS = ("cudaError", "CUDA_ERROR_", "CUBLAS_STATUS_", "CUDNN_STATUS_", "hipError", "UR_RESULT_ERROR_", "PI_ERROR_")
ERROR_NAME = compile_lazily(
    r"\b(?:cudaError[A-Z]\w{2,60}|CUDA_ERROR_[A-Z0-9_]{3,60}|CUBLAS_STATUS_[A-Z_]{3,40}|CUDNN_STATUS_[A-Z0-9_]{3,60}"
    r"|hipError[A-Z]\w{2,60}|UR_RESULT_ERROR_[A-Z0-9_]{3,60}|PI_ERROR_[A-Z0-9_]{3,60})\b"
)
# The name alone on its line (quoted or not), or opening it with the runtime's own words after a colon.
_NAME_ALONE = compile_lazily(r"^\s*[`'\"*]{0,2}(?P<name>\w{6,80})[`'\"*]{0,2}[!.]?\s*$")
_NAME_THEN_WORDS = compile_lazily(r"^\s*(?P<name>\w{6,80}):\s+[A-Za-z][^=;{}|]{2,300}$")
# A library's refusal before the name on the line: an error or failure word, `returned`, helper_cuda.h's `code=209(`
# (not `returns` or `status`: the API reference's `Returns cudaErrorInvalidValue if …`, a table's `status` column).
_REFUSAL_BEFORE = compile_lazily(r"(?i:\b(?:error|failed|failure|returned)\b|\bcode\s?=\s?-?\d{1,6}\s?\()")
# What may follow a name a refusal led to, as the printing code words it: nothing (the line ends, maybe a stop),
# the runtime's description after a colon (`… failed: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected`), or
# helper_cuda.h's close and the call it quotes (`code=209(cudaErrorNoKernelImageForDevice) "cudaLaunchKernel(…)"`).
# Never a clause (`Returns cudaErrorInvalidValue if the pointer is NULL.`), a list (`…, cudaErrorLaunchFailure`), a
# verdict (`(test passed)`) or a field of a row (`status=… time=n/a`).
_AFTER_REFUSED_NAME = compile_lazily(r"[`'\"]?[.!]?\s*$|:\s+[A-Za-z][^=;{}|]{2,300}$|\)\s*\"[^\"\n]{1,500}\"\s*$")
# A Python exception line anywhere before the name (`torch._C._cuda_init() failed: RuntimeError: cudaError…`, pytest's
# `E       RuntimeError: cuDNN error: …`): that exception is the failure, read as one.
_TYPED = compile_lazily(r"(?:^|\s)[\w.]*[A-Za-z](?:Error|Exception): ")
# A line stating in its own words that the program went on past what it reports: a fallback, a retry, a recovery,
# an error ignored or skipped, `(non-fatal)`, `continuing …` (vLLM's `Input processor warmup failed (non-fatal): …`,
# `Weight cache IPC loading failed; falling back to disk loading`, `… continuing under fault tolerance`).  The rule of
# every shape here, and of an ERROR record ending a paste (scanner._read_last_error_record).
_WENT_ON_IN_ITS_WORDS = (
    r"(?i:fall(?:s|ing)? ?back|retr(?:y|ying|ied)\b|\brecover(?:ed|ing)?\b|\bsucce(?:eded|ss)|\bignor(?:e|ed|ing)\b"
    r"|skipp(?:ed|ing)\b|\bnon-?fatal\b|\bcontinuing\b)"
)
SAYS_IT_WENT_ON = compile_lazily(_WENT_ON_IN_ITS_WORDS)
# What makes a line no failure of its own, for every shape of this module: a warning, an INFO/DEBUG/NOTICE record
# (the normalizer's level, or a level it does not tag: glog's `W0102 `, absl's `…123456: W path/file.cc:282] `,
# a bracketed `[W]`/`[INFO]`), a recovery the line itself states, source code (C and Python), a documentation
# table or list.
_NOT_A_FAILURE = compile_lazily(
    r"(?i:\bwarn(?:ing)?\b|UserWarning|\bINFO\b|\bDEBUG\b|\bNOTICE\b)|" + _WENT_ON_IN_ITS_WORDS +
    r"|^\s*\[?[IWD]\d{4} |\d: [IWD] \S+:\d+\] |\[[IWD]\]"
    r"|==|!=|\bcase\s|\breturn\s|\braise\s|\bf[\"']|\{\w*\}|;\s*$|#define|\bif\s*\(|=\s*-?(?:\d+|0x[0-9a-fA-F]+)\s*,?\s*$"
    r"|\|[^|\n]*\||^\s*(?:[-*+#>]|//|/\*)"
)


def _status_name_line(text: str) -> tuple[str, str] | None:
    """(type, message) of a line printing a runtime's error name as its failure, else None."""
    if not any(word in text for word in _NAME_WORDS) or len(text) > 2000 or _NOT_A_FAILURE.search(text):
        return None
    named = [m for m in ERROR_NAME.finditer(text) if family_of(m.group()) is not None]
    if len(named) != 1:  # none, or a list of them (`Known error codes: cudaErrorIllegalAddress, …`)
        return None
    m = named[0]
    family = family_of(m.group())
    assert family is not None
    if _TYPED.search(text, 0, m.start()) is not None:
        return None
    alone = _NAME_ALONE.match(text) or _NAME_THEN_WORDS.match(text)
    if alone is not None and alone["name"] == m.group():
        return family.type, text.strip().strip("`'\"*")
    if (text[m.start() - 1:m.start()] != "=" and _REFUSAL_BEFORE.search(text, 0, m.start()) is not None
            and _AFTER_REFUSED_NAME.match(text, m.end()) is not None):
        return family.type, text.strip()
    return None


# CANN's error manager: the code (E, a letter or digit for the component, four digits), then the process and the time
# (`YYYY-MM-DD-hh:mm:ss.mmm.uuu`), or, from CANN 8.2, the process and time first and the code after the error's name.
# Only with the process (`[PID: N]`): its words are the gate that keeps this off every other line (a metrics line's
# `: 20.5 tokens/s`, a `key: 2025-…` time would pass a gate on the time's opening).
_CANN_TIME = r"\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3}"
_CANN_RECORD = compile_lazily(
    rf"^(?:.{{0,300}}?[\s\]])?(?P<code>E[0-9A-Z]\d{{4}}): \[PID: \d{{1,10}}\] {_CANN_TIME} (?P<said>\S.{{0,1000}})$"
)
_CANN_NAMED_RECORD = compile_lazily(
    rf"^(?:.{{0,300}}?[\s\]:])?\[PID: \d{{1,10}}\] {_CANN_TIME} (?P<said>\w{{3,80}}\(E[0-9A-Z]\d{{4}}\): \S.{{0,1000}})$"
)
# CANN's inner error report, where its error manager adds the place it was reported after the message
# (`[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]`), alone or after the code of its table, often indented under
# the record that opened it: `EH9999  [Init][Env]init env failed![FUNC:…][FILE:…][LINE:…]` (Ascend/pytorch#7),
# `        [Init][Compiler]Init compiler failed[FUNC:…]` (sgl-project/sglang#9226).
_CANN_INNER = compile_lazily(
    r"^\s*(?:(?P<code>E[0-9A-Z]\d{4}):?\s+)?(?P<said>\S.{0,1000}?)\[FUNC:\w{1,120}\]\[FILE:[\w.\-]{1,120}\]\[LINE:\d{1,6}\]\s*$"
)
CANN_INNER_WORDS = "[FUNC:"
# A line of one CANN error report after its first: its code opening a line (`EH9999: Inner Error!`, `EH9999  wait for
# …`), or an indented line under it (the inner report's places, `        TraceBack (most recent call last):`).  torch_npu
# prints such a report under its own `[W NPUStream.cpp:365] Warning: NPU warning, error code is 107020` (c10_npu
# NPU_CHECK_WARN, hiyouga/LlamaFactory#5347), and the report is then that warning's: the run goes on.
CANN_REPORT_LINE = compile_lazily(r"^(?:\s|E[0-9A-Z]\d{4}(?::|\s))")
NPU_WARNING_WORDS = "Warning: NPU warning"
_HIP_MESSAGE = compile_lazily(r"^\s*(?P<said>HIP error: [a-z][\w ,'\-]{2,120}?)\.?\s*$")
_SYN_STATUS = compile_lazily(r"^\s*(?P<said>synStatus=[1-9]\d{0,3} \[[^\]\n]{1,60}\] \S.{0,300})$")  # 0 is synSuccess
_CANN_WORDS = ("[PID: ",)
# A GPU math library's own fatal line, at the start of its line: (the words, regex, type).
ROCBLAS_ERROR = "rocBLAS error"
MIOPEN_ERROR = "MIOpen error"
_GPU_LIBRARY_LINES = (
    ("rocBLAS error: ", compile_lazily(r"^\s*(?P<said>rocBLAS error: \S.{0,1000}?)\s*$"), ROCBLAS_ERROR),
    ("MIOpen Error: ", compile_lazily(r"^\s*(?P<said>MIOpen Error: \S.{0,1000}?)\s*$"), MIOPEN_ERROR),
)
_GPU_LIBRARY_WORDS = tuple(words for words, _, _ in _GPU_LIBRARY_LINES)

DEVICE_ERROR_WORDS = (*_NAME_WORDS, *_CANN_WORDS, CANN_INNER_WORDS, "HIP error: ", "synStatus=", *_GPU_LIBRARY_WORDS)
# A record's level (its header taken off by the normalizer, models.LineMeta.level) at which such a line was survived.
QUIET_LEVELS = frozenset({"INFO", "DEBUG", "WARNING", "WARN"})


def device_error_line(text: str) -> tuple[str, str] | None:
    """(type, message) of an accelerator runtime's own error line (this module's shapes), else None."""
    if (named := _status_name_line(text)) is not None:
        return named
    if not any(word in text for word in _VENDOR_WORDS) or len(text) > 2000 or _NOT_A_FAILURE.search(text):
        return None
    if "[PID: " in text:
        if (m := _CANN_RECORD.match(text)) is not None:
            return NPU_ERROR, f"{m['code']}: {m['said'].rstrip()}"
        if (m := _CANN_NAMED_RECORD.match(text)) is not None:
            return NPU_ERROR, m["said"].rstrip()
    if CANN_INNER_WORDS in text and (m := _CANN_INNER.match(text)) is not None:
        return NPU_ERROR, f"{m['code']}: {m['said']}" if m["code"] else m["said"]
    if "HIP error: " in text and (m := _HIP_MESSAGE.match(text)) is not None:
        return HIP_ERROR, m["said"]
    if "synStatus=" in text and (m := _SYN_STATUS.match(text)) is not None:
        return HPU_ERROR, m["said"].rstrip()
    for words, pattern, library_error in _GPU_LIBRARY_LINES:
        if words in text and (m := pattern.match(text)) is not None:
            return library_error, m["said"].split(": ", 1)[1]
    return None


_VENDOR_WORDS = (*_CANN_WORDS, CANN_INNER_WORDS, "HIP error: ", "synStatus=", *_GPU_LIBRARY_WORDS)


def gpu_library_line(text: str) -> bool:
    """Whether the line is a GPU math library's own fatal line (rocBLAS's, MIOpen's): printed to stderr by native code,
    never inside a logger's record, so a level the line inherits from a record above it (a paste's INFO record, then a
    blank line, then the library's line) is not its own."""
    return any(words in text and pattern.match(text) is not None for words, pattern, _ in _GPU_LIBRARY_LINES)


# A later line saying the run went on past a runtime's status line: a call that succeeded or recovered (`attempt 2/3
# succeeded`, `synStatus=0 [Success] Device acquired.`), a request served (uvicorn's access line `"POST /v1/… HTTP/1.1"
# 200 OK`), a training step logged (transformers' Trainer logs `{'loss': 1.2, 'grad_norm': …}` each logging step:
# hiyouga/LlamaFactory#5347's NPU warnings between them).  The scanner drops such a status line as survived, as it
# does one before a readiness line.
_WENT_ON_WORDS = ("ucce", "ecovered", "200 OK", "{'loss': ")
_WENT_ON = compile_lazily(r"(?i:\bsucce(?:eded|ss(?:ful(?:ly)?)?)\b|\brecovered\b)|\b200 OK\b|\{'loss': -?\d")


def went_on(text: str) -> bool:
    """Whether a line says a call succeeded or a request was served (cheap substring checks first: every line)."""
    return any(word in text for word in _WENT_ON_WORDS) and len(text) <= 2000 and _WENT_ON.search(text) is not None
